// The one exit-code table of every command. Each code family in FAMILIES
// (index.ts) carries the exit status its codes end a command with, and names
// the codes that differ from the family; TrtxError takes its exit status
// from here (src/util/errors.ts), `--help` prints EXIT_TABLE
// (src/cli/main.ts), docs/codes.md and docs/exit-codes.md are generated from
// it (scripts/gen-codes.ts), and test/exit-codes.test.ts walks every code.

export const EXIT_OK = 0;
/** The program (or model) is refused, or a check failed. */
export const EXIT_REFUSED = 1;
/** Usage or environment: fix the command line or the machine, not the input. */
export const EXIT_USAGE = 2;

export type ExitStatus = typeof EXIT_REFUSED | typeof EXIT_USAGE;

/** The table, in the words `--help`, the README and docs/exit-codes.md use. */
export const EXIT_TABLE: readonly { status: number; meaning: string }[] = [
  { status: EXIT_OK, meaning: 'ok (warnings allowed unless --strict)' },
  { status: EXIT_REFUSED, meaning: 'the program or model is refused, or a check or verify assertion failed' },
  {
    status: EXIT_USAGE,
    meaning:
      'usage or environment: a wrong command line, a missing file, or what this machine lacks (TensorRT, a backend, a kernel, a GPU, Python)',
  },
];

/** The table in one sentence, as the README's exit-codes paragraph opens (test/exit-codes.test.ts). */
export const EXIT_SUMMARY =
  '`0` ok, `1` the program or model is refused or a check failed, `2` usage or environment (a wrong command line, a missing file, or what this machine lacks: TensorRT, a backend, a kernel, a GPU, Python)';

/** Exit statuses of a command stopped by a signal (128 + the signal number; src/util/cleanup.ts). */
export const EXIT_SIGNALS = {
  status: '130, 143',
  meaning:
    'stopped by Ctrl-C (SIGINT) or SIGTERM; every temporary file removed (an in-place head write under way finishes first, and the last line says what the file holds), then trtx ends by the signal itself: a shell reports 130 or 143, a parent process sees the signal',
};

/** A family's exit status and the codes of it that end a command otherwise. */
export interface FamilyExit {
  /** null: the family's codes never end a command (warnings). */
  exit: ExitStatus | null;
  exitExceptions?: Readonly<Record<string, ExitStatus>>;
}

/**
 * The bridge error types that refuse the model (exit 1): a model file of a
 * kind export does not take, or one that cannot be loaded, traced, compiled
 * or lowered as given. The others are usage or environment (exit 2): the
 * request, the Python and its packages, a file that is not there or is no
 * model file at all (MODEL_FORMAT, as `check` reads a file that is no
 * program: PTE_NOT_A_PROGRAM), a method that is not the model's, writing the
 * output, a bug.
 */
export const BRIDGE_MODEL_REFUSALS: Readonly<Record<string, ExitStatus>> = Object.fromEntries(
  (
    [
      'MODEL_LOAD',
      'MODEL_NO_INPUTS',
      'PICKLE_REFUSED',
      'TORCHSCRIPT',
      'FACTORY',
      'TRACE',
      'COMPILE',
      'LOWER',
      'ORDER_MUTATIONS',
      'FINALIZE',
      'ZERO_COPY_CHECK',
    ] as const
  ).map((t) => [`BRIDGE_${t}`, 1]),
);

/** What the runner reports that means the program cannot run on this machine (its exit 3, verify's 2). */
export const RUNNER_ENVIRONMENT_RESULTS: Readonly<Record<string, ExitStatus>> = {
  EngineNotExecutable: EXIT_USAGE,
  BackendMissing: EXIT_USAGE,
  OperatorMissing: EXIT_USAGE,
  PlannedMemoryLimit: EXIT_USAGE,
  DeviceUnavailable: EXIT_USAGE,
};
