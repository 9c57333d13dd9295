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
//     change when the application initialises them read uninitialised memory.
// A program that cannot run here (a TensorRT plan, a backend the runner does
// not have, --device cuda without a GPU) is an environment result (exit 2),
// not a failed program.

import { runChecks, summarizeDiagnostics, type CheckResult, type CheckSummary } from '../checks/run.js';
import type { Diagnostic } from '../checks/diagnostic.js';
import { DEFAULT_RUNTIME, type RuntimeRules } from '../checks/runtime-rules.js';
import { openPte, withPte } from '../pte/open.js';
import { ensureRunner, runRunner, type RunnerProgress } from '../runner/index.js';
import type { RunnerReport } from '../runner/report.js';
import { makeTempDir, type TempDir } from '../util/cleanup.js';
import { environmentOf } from './environment.js';
import { TrtxError } from '../util/errors.js';
import { engineCensus, type EngineCensus } from '../tensorrt/engine-kind.js';
import {
  cachesChangeEveryStep,
  compareRuns,
  deviceStateWrittenFirst,
  persistentDiffersFromFresh,
  readsWhatWasWritten,
  twinNeedsInitialisation,
  type Assertion,
} from './assertions.js';
import { decodeMethods, deriveVariants, type Variant, type VerifyMode } from './variants.js';
import { nameVariants } from './name-buffers.js';
import { keepsState, stateRoles } from './state-roles.js';
import { pushAll } from '../util/arrays.js';
import {
  compareRunOutputs,
  loadReference,
  referenceAssertions,
  referenceSteps,
  worstComparison,
  writeReferenceInputs,
  type ReferenceOptions,
  type VerifyReference,
} from './reference.js';
import { join } from 'node:path';
import { pluginNotes, requireBackendLib, type VerifyBackend } from './backend-lib.js';
import type { ReportBudget } from '../util/report-budget.js';

export type StreamMode = 'on' | 'off' | 'both';

export interface VerifyOptions extends ReferenceOptions {
  zeroCopyKv?: boolean;
  /** Steps per run; default the reference outputs' steps, else 4. */
  steps?: number;
  callerStream?: StreamMode;
  budget?: bigint;
  device?: 'cpu' | 'cuda';
  /** Whose runtime rules the check applies and the runner follows; default DEFAULT_RUNTIME. */
  runtime?: RuntimeRules;
  /** Zero device-resident buffers after each load, as a correct application does (default: they stay poisoned). */
  initDeviceBuffers?: boolean;
  /** One activation scratch buffer per device for every engine. */
  sharedScratch?: boolean;
  /** Leave the device pool's release threshold alone. */
  coldPool?: boolean;
  /** With zeroCopyKv on a staged program: compare against this file instead of deriving the twin. */
  zeroCopyTwin?: string;
  /** With zeroCopyKv: refuse a program without KV caches (ZC_REWRITE_NO_ALIASED_CACHE) instead of running it as it is. */
  strict?: boolean;
  /** A runner binary to use instead of the cached build. */
  runner?: string;
  /** The prebuilt runner ensureRunner uses (its `binary`: default $TRTX_RUNNER_BIN; null: build); the CLI passes its run's. */
  runnerBinary?: string | null;
  /** A shared library whose TensorRTBackend runs instead of trtx's (backend-lib.ts). */
  backendLib?: string;
  onProgress?: (message: string) => void;
  onRunnerBuild?: (p: RunnerProgress) => void;
  /** The command's report budget: every program verify opens adds to it (src/util/report-budget.ts); unbounded when absent. */
  reportBudget?: ReportBudget;
}

export interface VerifyRun {
  variant: Variant['name'];
  caller_stream: boolean;
  fresh_state: boolean;
  init_device_buffers: boolean;
  exit_code: number;
  ok: boolean;
  errors: RunnerReport['errors'];
  /** Host<->device bytes of one execution of each method (from the first step). */
  staging: { method: string; h2d_bytes: number; d2h_bytes: number }[];
}

export interface VerifyMemory {
  pool: { mode: RunnerReport['memory']['pool']['mode']; api_calls: number };
  scratch: { mode: 'private' | 'shared'; peak_bytes: number; peak_buffers: number };
  device_arenas: { allocator: 'cuda' | 'host'; fill: 'poison' | 'none'; allocations: number; peak_bytes: number; zeroed_bytes: number };
}

export interface VerifyResult {
  schema: 'trtx.verify/3';
  file: string;
  device: RunnerReport['device'] | null;
  steps: number;
  methods: string[];
  mode: VerifyMode;
  /** What verify did that the command line did not say: --zero-copy-kv on a program without KV caches, a copy naming unnamed buffers. */
  notes: string[];
  /** What the TensorRTBackend delegates hold (the runner executes reference engines only). */
  engines: EngineCensus;
  /** Whose TensorRTBackend ran (trtx's own, or a --backend-lib library); null when nothing ran. */
  backend: VerifyBackend | null;
  caches: string[];
  runtime: RuntimeRules;
  /** twin_contract: a derived zero-copy twin ran with its caches initialised, as its contract makes the application do. */
  options: { init_device_buffers: boolean; twin_contract: boolean; arena_fill: 'poison'; shared_scratch: boolean; cold_pool: boolean };
  /** The check run first; `refused`: it found errors and nothing ran. */
  check: { refused: boolean; summary: CheckSummary; diagnostics: (Diagnostic & { file: string })[] };
  runs: VerifyRun[];
  budgets: { method: string; delegate: number; source: string; effective: string | null; clamped: boolean; ignored: string | null }[];
  /** Device memory of the primary run (the last variant, no caller stream). */
  memory: VerifyMemory | null;
  /** The comparison with eager PyTorch's outputs (docs/reference-lowering.md §4). */
  reference: VerifyReference;
  assertions: Assertion[];
  ok: boolean;
}

function memoryOf(r: RunnerReport): VerifyMemory {
  const m = r.memory;
  return {
    pool: { mode: m.pool.mode, api_calls: m.pool.api_calls },
    scratch: { mode: m.scratch.mode, peak_bytes: m.scratch.peak_bytes, peak_buffers: m.scratch.peak_buffers },
    device_arenas: {
      allocator: m.device_arenas.allocator,
      fill: m.device_arenas.fill,
      allocations: m.device_arenas.allocations,
      peak_bytes: m.device_arenas.peak_bytes,
      zeroed_bytes: m.device_arenas.zeroed_bytes,
    },
  };
}

async function checkFirst(
  variants: Variant[],
  runtime: RuntimeRules,
  input: { path: string; checked: CheckResult; reportBudget: ReportBudget },
): Promise<VerifyResult['check']> {
  const diagnostics: (Diagnostic & { file: string })[] = [];
  for (const v of variants) {
    const label = v.name === 'zero-copy' && variants.length > 1 ? 'zero-copy twin' : 'program';
    // A derived twin was checked as it was made (and is not on disk when that
    // check failed); the input was checked while it was open; only a given
    // twin (--zero-copy-twin) is opened here.
    const r =
      v.checked ??
      (v.path === input.path
        ? input.checked
        : await withPte(v.path, (pte) => runChecks(pte, { runtime }), { reportBudget: input.reportBudget }));
    pushAll(
      diagnostics,
      r.diagnostics.map((d) => ({ ...d, file: label })),
    );
  }
  const summary = summarizeDiagnostics(diagnostics);
  return { refused: summary.errors > 0, summary, diagnostics };
}

export async function verifyProgram(path: string, opts: VerifyOptions = {}): Promise<VerifyResult> {
  const tooFew = (n: number) => {
    if (!Number.isInteger(n) || n < 2)
      throw new TrtxError('VERIFY_STEPS', '--steps', `${n} steps: verify needs at least 2 to see a cache persist`);
  };
  if (opts.steps !== undefined) tooFew(opts.steps);
  const backendLib = opts.backendLib === undefined ? undefined : await requireBackendLib(opts.backendLib);
  const modes = opts.callerStream === 'on' ? [true] : opts.callerStream === 'off' ? [false] : [false, true];
  const runtime = opts.runtime ?? DEFAULT_RUNTIME;
  const init = Boolean(opts.initDeviceBuffers);
  // Open first: a file that cannot be read must not leave an empty temp folder.
  const pte = await openPte(path, { reportBudget: opts.reportBudget });
  let temp: TempDir | undefined;
  try {
    temp = await makeTempDir('trtx-verify-');
    const dir = temp.path;
    const derived = await deriveVariants(pte, dir, Boolean(opts.zeroCopyKv), opts.zeroCopyTwin, runtime, Boolean(opts.strict));
    const methods = decodeMethods(pte);
    const { variants, mode, note } = derived;
    let caches = derived.caches;
    const engines = await engineCensus(pte);
    const { reference, result: referenceResult } = await loadReference(path, engines, opts);
    const steps = referenceSteps(reference, opts.steps, 4);
    tooFew(steps);
    const checked = await runChecks(pte, { runtime });
    await pte.close();
    const inputsFile = reference ? await writeReferenceInputs(reference, methods, steps, dir) : undefined;
    // Not ok until the runs completed and every comparison passed.
    if (reference) referenceResult.ok = false;
    const outputsFiles = new Map<string, { file: string; variant: string; caller_stream: boolean; label: string }>();
    const base: VerifyResult = {
      schema: 'trtx.verify/3',
      file: path,
      device: null,
      steps,
      methods,
      mode,
      notes: note ? [note] : [],
      engines,
      backend: null,
      caches,
      runtime,
      options: {
        init_device_buffers: init,
        twin_contract: false,
        arena_fill: 'poison',
        shared_scratch: Boolean(opts.sharedScratch),
        cold_pool: Boolean(opts.coldPool),
      },
      check: await checkFirst(variants, runtime, { path: pte.path, checked, reportBudget: pte.reportBudget }),
      runs: [],
      budgets: [],
      memory: null,
      reference: referenceResult,
      assertions: [],
      ok: false,
    };
    if (base.check.refused) return base;
    // Only a program that passed its check is read for buffer names (a refused one may not even decode).
    const naming = await nameVariants(variants, dir, pte.reportBudget);
    if (naming.note) base.notes.push(naming.note);
    base.caches = caches = naming.caches ?? caches;
    const runner = opts.runner ? { path: opts.runner } : await ensureRunner({ onProgress: opts.onRunnerBuild, binary: opts.runnerBinary });
    // Who writes and who reads the state (state-roles.ts), read off the file the runner runs so names match its report.
    const primary = variants[variants.length - 1];
    const roles = await withPte(primary.runPath ?? primary.path, (p) => stateRoles(p, methods), { reportBudget: pte.reportBudget });
    if (roles.shared)
      base.notes.push(
        `${methods.join(', ')} share mutable buffers (planned with share_mutable_buffers): the persistent runs load them as ExecuTorch requires for that, Module(share_memory_arenas=true); the fresh run loads each method alone`,
      );

    // A zero-copy twin derived here is not a file anyone deploys as it is: it
    // stands for the program `rewrite --zero-copy-kv` writes, whose contract
    // (docs/zero-copy-kv.md) makes the application initialise the caches it
    // moved into device memory. So the twin runs initialised, and a second,
    // poisoned run shows whether that obligation is real for this program
    // (reported, with check's RT_DEVICE_STATE_UNINITIALIZED). A program given
    // already zero-copy runs poisoned unless --init-device-buffers says its
    // application initialises it.
    const twinContract = mode === 'staged-vs-zero-copy' && !init;
    const runInit = init || twinContract;
    base.options.twin_contract = twinContract;
    const reports = new Map<string, RunnerReport>();
    const run = async (v: Variant, callerStream: boolean, freshState: boolean, initDeviceBuffers = runInit) => {
      opts.onProgress?.(
        `running ${v.name}${callerStream ? ' with a caller stream' : ''}${freshState ? ', fresh caches' : ''}${initDeviceBuffers ? ', device buffers initialised' : ''}`,
      );
      // Every run gets the recorded inputs (so runs stay comparable with each other); each persistent one writes its outputs.
      const key = `${v.name}/${callerStream}/${freshState}/${initDeviceBuffers}`;
      const compared = reference !== null && !freshState && initDeviceBuffers === runInit;
      const outputsFile = compared ? join(dir, `outputs-${outputsFiles.size}.trxt`) : undefined;
      const r = await runRunner(v.runPath ?? v.path, {
        runner: runner.path,
        inputsFile,
        outputsFile,
        methods,
        steps,
        callerStream,
        freshState,
        // Methods planned to share state share it only through one arena (state-roles.ts); a fresh load has arenas of its own.
        shareArenas: roles.shared && !freshState,
        budget: opts.budget,
        device: opts.device,
        arenaFill: 'poison',
        initDeviceBuffers,
        sharedScratch: opts.sharedScratch,
        coldPool: opts.coldPool,
        trtRuntime: runtime.delegate === 'stock-trt' ? 'stock' : 'zero-copy',
        backendLib,
      });
      if (r.exitCode === 3) {
        const e = r.report.errors.find((x) => environmentOf(x.code)) ?? r.report.errors[0];
        const env = environmentOf(e?.code ?? '') ?? { code: 'VERIFY_CANNOT_RUN_HERE', hint: 'the program cannot run on this machine' };
        throw new TrtxError(
          env.code,
          v.path,
          `${e?.message ?? 'the program cannot run here'} (an environment result, not a failed program)`,
          { hint: env.hint },
        );
      }
      reports.set(key, r.report);
      if (outputsFile)
        outputsFiles.set(key, {
          file: outputsFile,
          variant: v.name,
          caller_stream: callerStream,
          label: `${v.name}, stream ${callerStream ? 'on' : 'off'}`,
        });
      base.runs.push({
        variant: v.name,
        caller_stream: callerStream,
        fresh_state: freshState,
        init_device_buffers: initDeviceBuffers,
        exit_code: r.exitCode,
        ok: r.report.ok,
        errors: r.report.errors,
        staging: r.report.methods.map((m) => ({
          method: m.name,
          h2d_bytes: m.steps[0]?.h2d_bytes ?? 0,
          d2h_bytes: m.steps[0]?.d2h_bytes ?? 0,
        })),
      });
      return r.report;
    };
    const get = (v: Variant, cs: boolean, fresh = false, i = runInit) => reports.get(`${v.name}/${cs}/${fresh}/${i}`)!;

    for (const v of variants) for (const cs of modes) await run(v, cs, false);
    const fresh = await run(primary, false, true);
    const first = get(variants[0], modes[0]);
    const primaryReport = get(primary, false);
    // Device-resident buffers: the same run with the application's
    // initialisation shows whether the poisoned one read them before writing.
    const deviceState = !init && primaryReport.methods.some((m) => m.steps.some((s) => s.buffers.some((b) => b.placement === 'device')));
    // The other side of the initialisation question: initialised when the primary ran poisoned, poisoned when it ran initialised (the twin).
    const other = deviceState ? await run(primary, false, false, !runInit) : null;

    const assertions: Assertion[] = base.runs.map((r) => ({
      name: `${r.variant} run${r.caller_stream ? ' (caller stream)' : ''}${r.fresh_state ? ' (fresh caches)' : ''}${r.init_device_buffers !== runInit ? (r.init_device_buffers ? ' (device buffers initialised)' : ' (device buffers left poisoned)') : ''} completes`,
      ok: r.ok && r.exit_code === 0,
      detail: r.errors.map((e) => `${e.code}: ${e.location}: ${e.message}`).join('; '),
    }));
    // Comparing runs that did not complete proves nothing: report the failures alone.
    const completed = base.runs.every((r) => r.ok && r.exit_code === 0);
    // The poisoned-vs-initialised comparison of a program run as deployed (not the twin's contract).
    let writtenFirst: Assertion | null = null;
    if (completed && other) {
      if (twinContract) assertions.push(twinNeedsInitialisation(other, primaryReport, primary.name));
      else assertions.push((writtenFirst = deviceStateWrittenFirst(primaryReport, other, primary.name)));
    }
    for (const v of completed ? variants : []) {
      for (const cs of modes) {
        const rep = get(v, cs);
        if (rep !== first)
          assertions.push(
            compareRuns(first, rep, `${variants[0].name} (stream ${modes[0] ? 'on' : 'off'}) vs ${v.name} (stream ${cs ? 'on' : 'off'})`),
          );
      }
    }
    const writes = new Map([...roles.methods].map(([m, r]) => [m, r.writes]));
    if (completed && caches.length) {
      for (const v of variants)
        for (const cs of modes)
          assertions.push(cachesChangeEveryStep(get(v, cs), caches, `${v.name} (stream ${cs ? 'on' : 'off'})`, writes));
    }
    // Only a method that reads state it writes has a "previous step" to see;
    // one that reads only what other methods write must see what they wrote;
    // one that only writes is seen through its readers (state-roles.ts).
    const keeping = new Set([...roles.methods].filter(([, r]) => keepsState(r)).map(([m]) => m));
    // Runs that read poison compute NaN whatever the caches held: comparing them proves nothing.
    const readPoison = writtenFirst !== null && !writtenFirst.ok;
    if (completed && keeping.size && !readPoison) assertions.push(persistentDiffersFromFresh(primaryReport, fresh, primary.name, keeping));
    for (const [m, r] of completed && !readPoison ? roles.methods : [])
      if (!keeping.has(m) && r.readsFrom.length) assertions.push(readsWhatWasWritten(primaryReport, fresh, m, r.readsFrom, primary.name));

    if (completed && reference) {
      const tolerance = { atol: opts.atol, rtol: opts.rtol };
      for (const o of outputsFiles.values())
        pushAll(base.reference.comparisons, await compareRunOutputs(reference, methods, steps, o.file, o, tolerance));
      base.reference.ok = base.reference.comparisons.every((c) => c.ok);
      base.reference.worst = worstComparison(base.reference.comparisons);
      pushAll(assertions, referenceAssertions(base.reference));
    }

    base.device = first.device;
    base.budgets = first.methods.flatMap((m) =>
      m.delegates.map((d) => ({
        method: m.name,
        delegate: d.index,
        source: d.budget.source,
        effective: d.budget.effective,
        clamped: d.budget.clamped,
        ignored: d.budget.ignored,
      })),
    );
    base.backend = first.backend;
    // A backend library reports no delegates of its own: nothing to read budgets from.
    if (first.backend.source === 'plugin') pushAll(base.notes, pluginNotes(first.backend));
    base.memory = memoryOf(primaryReport);
    base.assertions = assertions;
    base.ok = assertions.every((a) => a.ok);
    return base;
  } finally {
    await pte.close().catch(() => {});
    await temp?.remove();
  }
}
