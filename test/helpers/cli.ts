// Runs the trtx command line in this process (`main(argv, io)` from
// src/cli/main.ts, what bin/trtx calls) on streams of its own, capturing what
// it writes to stdout and stderr (log lines included, in either format) and
// the exit code it returns. Far faster than a process per case;
// test/cli-check.test.ts also runs bin/trtx once to prove the wiring.
//
// Runs go at once: each has its own streams, exit status and report budget.
// Only a run that sets environment variables the library or a child process
// reads (TRTX_RUNNER_BIN, the Python doubles' TRTX_DOUBLE_*) changes
// process.env, so it runs alone: it waits for the runs before it, and the
// runs after it wait for it. What only the CLI reads (CLI_ENV) travels in
// the run's io.env and needs no turn.
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Environment variables for this run (undefined removes one), put back as they were after it. */
  env?: Record<string, string | undefined>;
  /** Whether stdout claims to be a terminal (colour); default not. */
  stdoutIsTTY?: boolean;
}

/** What src/cli/ reads of the environment through io.env (and passes on as values, never to a child process). */
const CLI_ENV: ReadonlySet<string> = new Set(['NO_COLOR', 'TRTX_DEBUG', 'TRTX_RUNNER_BIN', 'TRTX_BACKEND_LIB']);

/** The runs in flight; an exclusive run waits for all of them. */
const inFlight = new Set<Promise<unknown>>();
/** The last exclusive run: every run waits for it. */
let exclusive: Promise<unknown> = Promise.resolve();

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const vars = options.env ?? {};
  const alone = Object.keys(vars).some((k) => !CLI_ENV.has(k));
  const before = alone ? Promise.allSettled([exclusive, ...inFlight]) : exclusive;
  const run = before.then(() =>
    alone ? withProcessEnv(vars, () => runOnce(args, { ...process.env }, options)) : runOnce(args, { ...process.env, ...vars }, options),
  );
  const settled = run.catch(() => {});
  if (alone) exclusive = settled;
  inFlight.add(settled);
  void settled.then(() => inFlight.delete(settled));
  return run;
}

async function withProcessEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (vs: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(vs)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(before);
  }
}

async function runOnce(args: string[], env: Record<string, string | undefined>, options: CliOptions): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  // A variable set to undefined is removed, as in process.env.
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const io: CliIo = {
    stdout: { isTTY: Boolean(options.stdoutIsTTY), write: (text: string) => (stdout += text) },
    stderr: { isTTY: false, write: (text: string) => (stderr += text) },
    env,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}
