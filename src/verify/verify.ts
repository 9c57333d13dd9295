// `trtx verify`: check the program first (and its zero-copy twin), refuse
// one that fails, then run it in the native runner (the ExecuTorch runtime
// with trtx's TensorRTBackend and device allocator) and prove the delegate
// runtime contract on what it reports. With zero-copy KV asked for, a staged
// program's zero-copy twin is derived in memory and both run side by side:
//   - every output and every cache bit-identical at every step, staged vs
//     zero-copy, in each caller-stream mode;
//   - every cache changes at every step;
//   - a persistent run differs from a fresh-cache run;
//   - device-resident buffers are written before they are read: device
//     arenas are poisoned (0xFF) at allocation, and a run whose results
//     change when the application initialises them read uninitialised memory
//     (a zero-copy program runs initialised, as its contract makes the
//     application do, and the poisoned run shows that duty: contract.ts).
// A program that cannot run here (a TensorRT plan, a backend the runner does
// not have, --device cuda without a GPU) is an environment result (exit 2),
// not a failed program.

import { runChecks, summarizeDiagnostics, type CheckResult } from '../checks/run.js';
import { DEFAULT_RUNTIME, type RuntimeRules } from '../checks/runtime-rules.js';
import { openPte, type PteFile } from '../pte/open.js';
import type { Reference } from '../reference/read.js';
import { ensureRunner } from '../runner/index.js';
import type { RunnerReport } from '../runner/report.js';
import { engineCensus, type EngineCensus } from '../tensorrt/engine-kind.js';
import { pushAll } from '../util/arrays.js';
import { makeTempDir, type TempDir } from '../util/cleanup.js';
import { TrtxError } from '../util/errors.js';
import type { Assertion } from './assertions.js';
import { pluginNotes, requireBackendLib } from './backend-lib.js';
import { initPlan } from './contract.js';
import { judgeRuns } from './judge.js';
import { budgetStreaming, measuredStreaming } from './budget-streaming.js';
import { runLabel } from './progress.js';
import { nameVariants } from './name-buffers.js';
import { ProgramFiles } from './program-files.js';
import {
  compareRunOutputs,
  loadReference,
  referenceAssertions,
  referenceSteps,
  worstComparison,
  writeReferenceInputs,
  type VerifyReference,
} from './reference.js';
import { memoryOf, type VerifyOptions, type VerifyResult, type VerifyRun } from './result.js';
import { VerifyRuns } from './runs.js';
import { stateRoles } from './state-roles.js';
import type { ReportBudget } from '../util/report-budget.js';
import { decodeMethods, deriveVariants, type Variant, type Variants, type VerifyMode } from './variants.js';
import { tempRootOf } from '../util/env.js';
import { sweepStaleTempDirs } from '../util/stale-temp-dirs.js';
import { RUNNER_TEMP_PREFIX } from '../runner/index.js';

/** verify's temporary folder (its zero-copy twin, the reference inputs); the runner's beside it. */
const VERIFY_TEMP_PREFIX = 'trtx-verify-';
const VERIFY_TEMP_PREFIXES = [VERIFY_TEMP_PREFIX, RUNNER_TEMP_PREFIX];

export type { StreamMode, VerifyMemory, VerifyOptions, VerifyResult, VerifyRun } from './result.js';

/** What verify read off the program before anything ran. */
interface ProgramToVerify {
  variants: Variants;
  mode: VerifyMode;
  note: string | undefined;
  caches: string[];
  methods: string[];
  engines: EngineCensus;
  reference: Reference | null;
  /** The reference section before the runs: not ok until they completed and every comparison passed. */
  referenceResult: VerifyReference;
  steps: number;
  checked: CheckResult;
  inputsFile: string | undefined;
}

/** Verify's options once the input is open: its report budget is the one every later program adds to. */
type BudgetedOptions = VerifyOptions & { reportBudget: ReportBudget };

/** What one run of verify shares across its stages. */
interface RunContext {
  /** The temporary folder (the twin, the named copies, the reference inputs and outputs). */
  dir: string;
  runtime: RuntimeRules;
  backendLib: string | undefined;
  opts: BudgetedOptions;
  /** Every program the run reads, each opened once. */
  programs: ProgramFiles;
}

/** The part of the result the runs make: everything the check alone leaves empty. */
interface RunsPart {
  /** Notes after the program's own, in the order they arose. */
  notes: string[];
  caches: string[];
  twinContract: boolean;
  runs: VerifyRun[];
  device: VerifyResult['device'];
  budgets: VerifyResult['budgets'];
  backend: VerifyResult['backend'];
  memory: VerifyResult['memory'];
  reference: VerifyReference;
  assertions: Assertion[];
  ok: boolean;
}

function requireTwoSteps(n: number): void {
  if (!Number.isInteger(n) || n < 2)
    throw new TrtxError('VERIFY_STEPS', '--steps', `${n} steps: verify needs at least 2 to see a cache persist`);
}

export async function verifyProgram(path: string, opts: VerifyOptions = {}): Promise<VerifyResult> {
  if (opts.steps !== undefined) requireTwoSteps(opts.steps);
  const backendLib = opts.backendLib === undefined ? undefined : await requireBackendLib(opts.backendLib, opts.cwd);
  const runtime = opts.runtime ?? DEFAULT_RUNTIME;
  // Open first: a file that cannot be read must not leave an empty temp folder.
  const pte = await openPte(path, { reportBudget: opts.reportBudget });
  // The input stays open for the whole run: every stage reads it (and what is made from it) through here.
  const programs = new ProgramFiles(pte);
  // Every program verify opens after this one adds to the same command's budget.
  const scoped: BudgetedOptions = { ...opts, reportBudget: pte.reportBudget };
  let temp: TempDir | undefined;
  try {
    // What a killed verify left (its twin is as large as the program) goes first.
    await sweepStaleTempDirs(tempRootOf(opts.env), VERIFY_TEMP_PREFIXES);
    temp = await makeTempDir(VERIFY_TEMP_PREFIX, tempRootOf(opts.env));
    const run: RunContext = { dir: temp.path, runtime, backendLib, opts: scoped, programs };
    const program = await readProgram(pte, path, run);
    const check = await checkFirst(program.variants, run, { path: pte.path, checked: program.checked });
    const ran = check.refused ? null : await runAndJudge(program, run);
    return assembleResult(path, program, run, check, ran);
  } finally {
    await programs.close();
    await temp?.remove();
  }
}

/** The variants to run, the reference outputs and their inputs, and the check of the input. */
async function readProgram(pte: PteFile, path: string, run: RunContext): Promise<ProgramToVerify> {
  const { opts, runtime, dir } = run;
  const { variants, mode, note, caches } = await deriveVariants(
    pte,
    run.programs,
    dir,
    Boolean(opts.zeroCopyKv),
    opts.zeroCopyTwin,
    runtime,
    Boolean(opts.strict),
  );
  const methods = decodeMethods(pte);
  const engines = await engineCensus(pte);
  const { reference, result: loaded } = await loadReference(path, engines, opts);
  const steps = referenceSteps(reference, opts.steps, 4);
  requireTwoSteps(steps);
  const checked = await runChecks(pte, { runtime });
  const inputsFile = reference ? await writeReferenceInputs(reference, methods, steps, dir) : undefined;
  // Not ok until the runs completed and every comparison passed.
  const referenceResult = reference ? { ...loaded, ok: false } : loaded;
  return { variants, mode, note, caches, methods, engines, reference, referenceResult, steps, checked, inputsFile };
}

/** The result, in the key order schemas/verify.schema.json (and every --json reader) sees: the check's part, and the runs' when they ran. */
function assembleResult(
  path: string,
  p: ProgramToVerify,
  run: RunContext,
  check: VerifyResult['check'],
  ran: RunsPart | null,
): VerifyResult {
  const { opts } = run;
  return {
    schema: 'trtx.verify/3',
    file: path,
    device: ran ? ran.device : null,
    steps: p.steps,
    methods: p.methods,
    mode: p.mode,
    notes: [...(p.note ? [p.note] : []), ...(ran?.notes ?? [])],
    engines: p.engines,
    backend: ran ? ran.backend : null,
    caches: ran ? ran.caches : p.caches,
    runtime: run.runtime,
    options: {
      init_device_buffers: Boolean(opts.initDeviceBuffers),
      twin_contract: ran ? ran.twinContract : false,
      arena_fill: 'poison',
      shared_scratch: Boolean(opts.sharedScratch),
      cold_pool: Boolean(opts.coldPool),
    },
    check,
    runs: ran ? ran.runs : [],
    budgets: ran ? ran.budgets : [],
    memory: ran ? ran.memory : null,
    reference: ran ? ran.reference : p.referenceResult,
    assertions: ran ? ran.assertions : [],
    ok: ran ? ran.ok : false,
  };
}

async function checkFirst(
  variants: Variant[],
  run: RunContext,
  input: { path: string; checked: CheckResult },
): Promise<VerifyResult['check']> {
  const diagnostics: VerifyResult['check']['diagnostics'] = [];
  for (const v of variants) {
    const label = v.name === 'zero-copy' && variants.length > 1 ? 'zero-copy twin' : 'program';
    // A derived twin was checked as it was made (and is not on disk when that
    // check failed); the input was checked while it was read; only a given
    // twin (--zero-copy-twin) is checked here (opened once for the run).
    const r =
      v.checked ??
      (v.path === input.path
        ? input.checked
        : await runChecks(await run.programs.get(v.path, run.opts.reportBudget), { runtime: run.runtime }));
    pushAll(
      diagnostics,
      r.diagnostics.map((d) => ({ ...d, file: label })),
    );
  }
  const summary = summarizeDiagnostics(diagnostics);
  return { refused: summary.errors > 0, summary, diagnostics };
}

/** Names the state, runs every variant (runs.ts), proves what the runs show (judge.ts) and compares with eager PyTorch. */
async function runAndJudge(p: ProgramToVerify, run: RunContext): Promise<RunsPart> {
  const { opts } = run;
  // Only a program that passed its check is read for buffer names (a refused one may not even decode).
  const naming = await nameVariants(p.variants, run.dir, run.programs, opts.reportBudget);
  const { variants } = naming;
  const notes = naming.note ? [naming.note] : [];
  const caches = naming.caches ?? p.caches;
  const runner = opts.runner
    ? { path: opts.runner }
    : await ensureRunner({ onProgress: opts.onRunnerBuild, binary: opts.runnerBinary, env: opts.env, cwd: opts.cwd, signal: opts.signal });
  // Who writes and who reads the state (state-roles.ts), read off the program the runner runs so names match its report.
  const primary = variants.at(-1) ?? variants[0];
  const roles = await stateRoles(await run.programs.get(primary.runPath ?? primary.path, opts.reportBudget), p.methods);
  if (roles.shared)
    notes.push(
      `${p.methods.join(', ')} share mutable buffers (planned with share_mutable_buffers): the persistent runs load them as ExecuTorch requires for that, Module(share_memory_arenas=true); the fresh run loads each method alone`,
    );
  // A zero-copy program, the twin derived here or one given as it is, runs
  // as its contract makes the application do (contract.ts): initialised, and
  // once more poisoned to show whether that is needed.
  const init = opts.initDeviceBuffers === true;
  const { runInit, contract } = initPlan(p.mode, p.checked, opts.initDeviceBuffers);
  const modes: [boolean, ...boolean[]] = opts.callerStream === 'on' ? [true] : opts.callerStream === 'off' ? [false] : [false, true];
  // The plan, as runAll runs it: every variant in every mode, the primary with fresh caches, and the primary at the other initialisation when its state turns out to be in device memory.
  const planned = variants.flatMap((v) => modes.map((cs) => runLabel(v.name, cs, false, runInit, runInit)));
  planned.push(runLabel(primary.name, false, true, runInit, runInit));
  const conditional = init ? null : runLabel(primary.name, false, false, !runInit, runInit);
  opts.onRunProgress?.({ kind: 'plan', runs: planned, conditional, steps: p.steps, methods: p.methods });
  const runs = new VerifyRuns({
    runner: runner.path,
    dir: run.dir,
    methods: p.methods,
    steps: p.steps,
    inputsFile: p.inputsFile,
    comparesReference: p.reference !== null,
    initDeviceBuffers: runInit,
    sharedState: roles.shared,
    runtime: run.runtime,
    backendLib: run.backendLib,
    options: opts,
    plannedRuns: planned.length,
  });
  // An environment refusal mid-way throws: the runs are only ever reported whole.
  const ran = await runAll(runs, variants, modes, primary, init, runInit);
  const assertions = judgeRuns({ runs, variants, modes, primary, ...ran, runInit, contract, caches, roles });
  const compared = runs.completed && p.reference ? await compareWithReference(p.referenceResult, p.reference, p, runs, opts) : null;
  if (compared) pushAll(assertions, compared.assertions);
  const told = whatRunsTell(ran.first, ran.primaryReport, assertions);
  return {
    notes: [...notes, ...told.notes],
    caches,
    twinContract: contract,
    runs: runs.runs,
    ...told.part,
    reference: compared ? compared.reference : p.referenceResult,
  };
}

/**
 * Every variant in every caller-stream mode, then the primary with fresh
 * caches, then, when it has device-resident state, the primary at the other
 * initialisation: initialised when it ran poisoned, poisoned when it ran
 * initialised (the twin), to show whether it read them before writing.
 */
async function runAll(
  runs: VerifyRuns,
  variants: Variants,
  modes: [boolean, ...boolean[]],
  primary: Variant,
  init: boolean,
  runInit: boolean,
): Promise<{ first: RunnerReport; primaryReport: RunnerReport; fresh: RunnerReport; other: RunnerReport | null }> {
  for (const v of variants) for (const cs of modes) await runs.run(v, cs, false);
  const fresh = await runs.run(primary, false, true);
  const first = runs.get(variants[0], modes[0]);
  const primaryReport = runs.get(primary, false);
  const deviceState = !init && primaryReport.methods.some((m) => m.steps.some((s) => s.buffers.some((b) => b.placement === 'device')));
  const other = deviceState ? await runs.run(primary, false, false, !runInit) : null;
  return { first, primaryReport, fresh, other };
}

/** Each persistent run's outputs against eager PyTorch's (docs/reference-lowering.md §4): the reference section as they leave it, and its assertions. */
async function compareWithReference(
  before: VerifyReference,
  reference: Reference,
  p: ProgramToVerify,
  runs: VerifyRuns,
  opts: VerifyOptions,
): Promise<{ reference: VerifyReference; assertions: Assertion[] }> {
  const tolerance = { atol: opts.atol, rtol: opts.rtol };
  const comparisons: VerifyReference['comparisons'] = [...before.comparisons];
  for (const o of runs.outputs.values()) pushAll(comparisons, await compareRunOutputs(reference, p.methods, p.steps, o.file, o, tolerance));
  const after: VerifyReference = { ...before, comparisons, ok: comparisons.every((c) => c.ok), worst: worstComparison(comparisons) };
  return { reference: after, assertions: referenceAssertions(after) };
}

/** What the runs tell about the device, the budgets and the backend (from the first run), the memory (the primary's) and the verdict. */
function whatRunsTell(
  first: RunnerReport,
  primaryReport: RunnerReport,
  assertions: Assertion[],
): { notes: string[]; part: Pick<RunsPart, 'device' | 'budgets' | 'backend' | 'memory' | 'assertions' | 'ok'> } {
  const budgets = first.methods.flatMap((m) =>
    m.delegates.map((d) => ({
      method: m.name,
      delegate: d.index,
      source: d.budget.source,
      effective: d.budget.effective,
      clamped: d.budget.clamped,
      ignored: d.budget.ignored,
      ...budgetStreaming(d.budget, d.engine),
      ...measuredStreaming(d),
    })),
  );
  // A backend library reports no delegates of its own: nothing to read budgets from.
  const notes = first.backend.source === 'plugin' ? pluginNotes(first.backend) : [];
  return {
    notes,
    part: {
      device: first.device,
      budgets,
      backend: first.backend,
      memory: memoryOf(primaryReport),
      assertions,
      ok: assertions.every((a) => a.ok),
    },
  };
}
