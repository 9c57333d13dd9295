// `trtx export`: the Python bridge exports and partitions the model into a
// temporary `.pte` beside OUT; TypeScript then finishes it in the rewrite
// pipeline (src/pipeline/: budget, zero-copy KV, every check, as `trtx
// rewrite`) and renames it to OUT (finishProgram: written once, issue 28). OUT is validated and its writer lock taken before
// any work. Any failure leaves no OUT and no temporary file.
//
// Beside the program, OUT.reference.json: the exported model run eagerly by
// the bridge (docs/reference-lowering.md section 2), written to a temporary
// beside OUT and renamed over OUT.reference.json once OUT is written, so a
// reference file always belongs to the program beside it; an export without
// one (--no-reference, or an eager run that failed) removes a stale one.
//
// The bridge runs in the Python --python or TRTX_PYTHON names, else in trtx's
// managed environment (src/pyenv, made on first use). `engine` picks what the
// delegates carry: TensorRT plans built by Torch-TensorRT (the default), or
// trtx reference engines from the reference lowering (torch and executorch
// only), for machines without TensorRT.

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, isAbsolute } from 'node:path';
import { runBridge } from '../bridge/run.js';
import type { BridgeEvent, EngineKind, ExportResult } from '../bridge/protocol.js';
import { PROTOCOL_VERSION } from '../bridge/protocol.js';
import { claimTarget, runPipeline, withDiagnostics, type ClaimedTarget, type PipelineRun } from '../pipeline/run.js';
import { adoptTemporary, type AdoptWrite } from '../pte/adopt.js';
import { openPte } from '../pte/open.js';
import { fileRefusal, sidecarPath } from '../util/target.js';
import { trackPath } from '../util/cleanup.js';
import { TrtxError } from '../util/errors.js';
import { availableMemory, refuseShortMemory } from './memory-need.js';
import { DEFAULT_REFERENCE_STEPS, checkModelFile, samePath, splitModelRef } from './model-file.js';
import { TRACEBACK_ENV, prepareTracebackFile, removeTracebackFile, withTraceback } from './traceback-file.js';
import { ensurePythonEnv, type PythonEnv, type PythonEnvProgress } from '../pyenv/index.js';
import type { ReportBudget } from '../util/report-budget.js';
import type { ExportSummary } from './summary-json.js';
import { defaultCacheRoot } from '../util/cache-dir.js';
import { inFolder, settingsOf, type Env } from '../util/env.js';

export interface ExportOptions {
  model: string;
  output: string;
  /** OUT is the default (the model's name with .pte, no -o): an existing file there is refused (EXPORT_OUTPUT_EXISTS). */
  refuseExisting?: boolean;
  budget?: bigint;
  zeroCopyKv?: boolean;
  shareCache?: boolean;
  methods?: string[];
  allowPickle?: boolean;
  /** --python; absent: TRTX_PYTHON, else the managed environment. */
  python?: string;
  /** What the delegates carry; default 'tensorrt'. */
  engine?: EngineKind;
  /** false (--no-memory-check): export even when the memory estimate says it will not fit. */
  memoryCheck?: boolean;
  /** Eager steps per method for OUT.reference.json (default 5); 0: no reference file (--no-reference). */
  referenceSteps?: number;
  /** Progress of finding or making the Python environment (making it takes minutes, once). */
  onPythonEnv?: (p: PythonEnvProgress) => void;
  timeoutMs?: number;
  signal?: AbortSignal;
  onEvent?: (e: BridgeEvent) => void;
  onStderr?: (text: string) => void;
  onWriteProgress?: (done: number, total: number) => void;
  /** Extra bridge environment (tests put the Python test doubles here). */
  bridgeEnv?: Record<string, string | undefined>;
  /** The run's environment (util/env.ts): TRTX_PYTHON and the cache folder come from it, and Python gets it. */
  env?: Env;
  /** The run's folder: what relative paths mean (model, output, and the model's own code: a factory's file access); without it both paths must be absolute. */
  cwd?: string;
  /** The command's report budget (src/util/report-budget.ts); unbounded when absent. */
  reportBudget?: ReportBudget;
}

export type { ExportSummary };

/** Where export writes the reference outputs of OUT (docs/reference-lowering.md section 2). */
export function referencePath(output: string): string {
  return `${output}.reference.json`;
}

/** The hint for a Python without Torch-TensorRT, which the default engine needs. */
function tensorrtHint(env: PythonEnv, bridgeHint: string | undefined): string {
  if (env.source !== 'managed') return bridgeHint ?? '';
  return (
    `trtx's managed environment (${env.dir}) has torch and executorch but no TensorRT: pip install torch-tensorrt into a Python ` +
    'with a matching torch and name it with --python PATH or TRTX_PYTHON, or export with --engine reference (reference engines, no TensorRT needed)'
  );
}

// What the bridge's import stage raises: the environment's fault, located at the interpreter.
const ENV_FAILURES = new Set<string>([
  'BRIDGE_IMPORT_MISSING',
  'BRIDGE_IMPORT_FAILED',
  'BRIDGE_TORCH_TENSORRT_TOO_OLD',
  'BRIDGE_PYTHON_VERSION',
]);

/**
 * An environment failure of the bridge names the interpreter, not the model,
 * and a full disk (WRITE_NO_SPACE) OUT, beside which the bridge writes; a
 * missing Torch-TensorRT (default engine) gets the hint for this environment.
 */
function forEnvironment(e: unknown, engine: EngineKind, env: PythonEnv, output: string): unknown {
  if (e instanceof TrtxError && e.code === 'WRITE_NO_SPACE') return new TrtxError(e.code, output, e.message, { hint: e.hint });
  if (!(e instanceof TrtxError) || !ENV_FAILURES.has(e.code)) return e;
  const tensorrt = e.code === 'BRIDGE_IMPORT_MISSING' && engine === 'tensorrt' && /\btorch_tensorrt\b/.test(e.message);
  return new TrtxError(e.code, env.python, e.message, { hint: tensorrt ? tensorrtHint(env, e.hint) : e.hint });
}

export async function exportModel(given: ExportOptions): Promise<ExportSummary> {
  // Python runs in a folder of its own: model and output go to it as
  // absolute paths, resolved once against the run's folder.
  for (const p of [given.model, given.output]) {
    if (given.cwd === undefined && !isAbsolute(p)) throw new TrtxError('USAGE', p, 'a relative path needs the run\u2019s folder (cwd)');
  }
  const opts = { ...given, model: inFolder(given.model, given.cwd), output: inFolder(given.output, given.cwd) };
  // The model file before Python: a wrong path is not a missing package.
  const facts = await checkModelFile(opts.model, { allowPickle: opts.allowPickle });
  const model = splitModelRef(opts.model).path;
  // Then its size against this machine's memory, before Python starts (issue 36).
  if (opts.memoryCheck !== false) refuseShortMemory(opts.model, facts.weightBytes, availableMemory());
  // Then OUT, before minutes of work: never the model, a regular file or a new path.
  const output = opts.output;
  if (samePath(output, model)) {
    throw new TrtxError('EXPORT_OUTPUT_IS_MODEL', opts.output, 'the output would replace the model it is exported from', {
      hint: 'name another file with -o OUT',
    });
  }
  if (opts.refuseExisting && existsSync(output)) {
    throw new TrtxError('EXPORT_OUTPUT_EXISTS', opts.output, 'already exists (the default output: the model\u2019s name with .pte)', {
      hint: 'pass --force to replace it, or name another file with -o OUT',
    });
  }
  // As rewrite -o (the model by another name is OUTPUT_IS_INPUT), and its writer lock.
  const target = await claimTarget(model, {
    path: output,
    command: 'export -o',
    isInputHint: 'name another file with -o OUT',
    onProgress: opts.onWriteProgress,
    signal: opts.signal,
  });
  try {
    return await exportTo(opts, target);
  } finally {
    await target.lock.release();
  }
}

// exportTo in named steps: the environment, the bridge's run into temporary
// files beside OUT, the program finished and published, its reference placed.

async function exportTo(opts: ExportOptions, target: ClaimedTarget): Promise<ExportSummary> {
  const engine: EngineKind = opts.engine ?? 'tensorrt';
  const env = await ensurePythonEnv({
    python: opts.python,
    onProgress: opts.onPythonEnv,
    signal: opts.signal,
    env: opts.env,
    cwd: opts.cwd,
  });
  refuseMissingTensorRT(opts, engine, env);
  const files = bridgeFiles(opts, target.path);
  try {
    const warnings: string[] = env.mismatches.map(
      (m) => `PYENV_VERSION_MISMATCH: ${env.python} has ${m}; trtx is tested with the locked versions`,
    );
    const result = await runExportBridge(opts, engine, env, files, warnings);
    const finished = await finishProgram(opts, files.temp, target);
    const reference = await placeReference(target.path, result.reference !== null ? files : null);
    return summarize(opts, env, result, finished, reference, warnings);
  } finally {
    await rm(files.temp, { force: true });
    await rm(files.tempReference, { force: true });
    files.untrack();
  }
}

/**
 * Fail fast: trtx's managed environment is made from the lock, which has no
 * Torch-TensorRT, and its probe (package metadata, no import) says so in a
 * fraction of a second; the bridge would take torch's import to find out. A
 * named interpreter, or extra paths for the bridge (bridgeEnv's PYTHONPATH,
 * which the probe did not see), are left to the bridge's own import check.
 */
function refuseMissingTensorRT(opts: ExportOptions, engine: EngineKind, env: PythonEnv): void {
  const probed = env.source === 'managed' && !opts.bridgeEnv?.PYTHONPATH;
  if (engine === 'tensorrt' && probed && env.probe.packages.torch_tensorrt === null) {
    throw new TrtxError(
      'BRIDGE_IMPORT_MISSING',
      env.python,
      `Python ${env.probe.version} at ${env.python} cannot import torch_tensorrt (trtx's managed environment has no torch-tensorrt)`,
      { hint: tensorrtHint(env, undefined) },
    );
  }
}

interface BridgeFiles {
  /** The program the bridge writes; it becomes OUT by a rename. */
  temp: string;
  /** The reference outputs the bridge writes; they become OUT.reference.json. */
  tempReference: string;
  /** Where the bridge writes the traceback of a failure (traceback-file.ts). */
  traceback: string;
  steps: number;
  untrack: () => void;
}

/** Temporary names beside OUT (one filesystem for the renames), each fitting whatever OUT's length, removed on any exit. */
function bridgeFiles(opts: ExportOptions, output: string): BridgeFiles {
  const temp = sidecarPath(output, `.bridge-${randomBytes(6).toString('hex')}.pte`, true);
  const tempReference = sidecarPath(output, `.bridge-${randomBytes(6).toString('hex')}.reference.json`, true);
  const untrackTemp = trackPath(temp);
  const untrackReference = trackPath(tempReference);
  return {
    temp,
    tempReference,
    traceback: prepareTracebackFile(opts.model, defaultCacheRoot(settingsOf(opts.env), opts.cwd)),
    steps: opts.referenceSteps ?? DEFAULT_REFERENCE_STEPS,
    untrack: () => {
      untrackTemp();
      untrackReference();
    },
  };
}

/**
 * The bridge exports into `files.temp`. It imports what the engine needs
 * before any work (its "check" stage) and fails with BRIDGE_IMPORT_MISSING
 * naming the package: no separate import check, which would start Python once
 * more. Its warnings are collected into `warnings`.
 */
async function runExportBridge(
  opts: ExportOptions,
  engine: EngineKind,
  env: PythonEnv,
  files: BridgeFiles,
  warnings: string[],
): Promise<ExportResult> {
  const output = opts.output;
  const result = await runBridge(
    {
      protocol: PROTOCOL_VERSION,
      model: opts.model,
      output: files.temp,
      methods: opts.methods?.length ? opts.methods : null,
      budget_bytes: opts.budget === undefined ? null : opts.budget.toString(),
      zero_copy_kv: Boolean(opts.zeroCopyKv),
      allow_pickle: Boolean(opts.allowPickle),
      check_only: false,
      engine,
      reference: files.steps > 0 ? { path: files.tempReference, steps: files.steps, program: basename(output) } : null,
    },
    {
      python: env.python,
      baseEnv: opts.env,
      cwd: opts.cwd,
      env: { ...opts.bridgeEnv, [TRACEBACK_ENV]: files.traceback },
      signal: opts.signal,
      onStderr: opts.onStderr,
      timeoutMs: opts.timeoutMs,
      onEvent: (e) => {
        if (e.event === 'warning') warnings.push(`${e.code ? e.code + ': ' : ''}${e.message}`);
        opts.onEvent?.(e);
      },
    },
  ).catch((e: unknown) => {
    throw withTraceback(forEnvironment(e, engine, env, opts.output), files.traceback);
  });
  removeTracebackFile(files.traceback);
  if (result.mode !== 'export') throw new TrtxError('BRIDGE_PROTOCOL', opts.model, 'the bridge answered an export with a check result');
  return result;
}

interface Finished {
  run: PipelineRun;
  written: AdoptWrite;
}

/**
 * The bridge's file is finished in the rewrite pipeline (src/pipeline/: the
 * passes and checks `trtx rewrite` runs) and published at OUT by a rename of
 * that very file (src/pte/adopt.ts), issue 28: it used to be re-encoded whole
 * into a second file. The budget is written once: the budget pass, the one
 * `rewrite --budget` runs, sets it where the program does not hold it (an
 * older Torch-TensorRT, or the reference lowering's doubles) and finds it
 * "already" set, changing nothing, where Torch-TensorRT's exporter baked it
 * (weight_streaming_budget_per_engine, upstream's own knob; budget_baked).
 * Zero-copy: the caches of a staged export (zero_copy_kv_path "trtx") are
 * un-staged here, as `trtx rewrite --zero-copy-kv` does; on Torch-TensorRT's
 * own zero-copy export the pass finds them un-staged and checks them. A
 * changed head that still fits before the segments is rewritten in the
 * temporary; one that does not is the only case that copies the file.
 */
async function finishProgram(opts: ExportOptions, temp: string, target: ClaimedTarget): Promise<Finished> {
  const pte = await openPte(temp, { reportBudget: opts.reportBudget });
  try {
    // The segment table as the bridge wrote it, before any pass.
    const fileSegments = pte.program.segments.map((s) => ({ ...s }));
    const run = await runPipeline(pte, {
      request: {
        budget: opts.budget === undefined ? undefined : { budget: opts.budget },
        zeroCopyKv: opts.zeroCopyKv ? { shareCache: Boolean(opts.shareCache) } : undefined,
      },
      output: null,
    });
    if (run.refused) {
      const first = run.checked.diagnostics.find((d) => d.severity === 'error')!;
      throw withDiagnostics(
        new TrtxError(
          'EXPORT_CHECK_FAILED',
          first.location,
          `the exported program fails ${run.checked.summary.line}; first: ${first.code}: ${first.message}`,
          { hint: first.hint },
        ),
        run.checked.diagnostics,
        run.program,
      );
    }
    const written = await adoptTemporary(pte, run.program, fileSegments, {
      output: target.path,
      changed: run.changed,
      onProgress: target.onProgress,
      signal: target.signal,
    });
    return { run, written };
  } finally {
    await pte.close();
  }
}

interface PlacedReference {
  reference: ExportSummary['reference'];
  removed: string | null;
}

/** OUT is in place: its reference follows it (a rename, atomic), or a stale one goes. */
async function placeReference(output: string, files: BridgeFiles | null): Promise<PlacedReference> {
  const finalReference = referencePath(output);
  const refused = (e: unknown) => {
    throw fileRefusal(e, finalReference, files ? 'write it' : 'remove it');
  };
  if (files !== null) {
    await rename(files.tempReference, finalReference).catch(refused);
    return { reference: { path: finalReference, steps: files.steps }, removed: null };
  }
  if (!existsSync(finalReference)) return { reference: null, removed: null };
  await rm(finalReference, { force: true }).catch(refused);
  return { reference: null, removed: finalReference };
}

function summarize(
  opts: ExportOptions,
  env: PythonEnv,
  result: ExportResult,
  { run, written }: Finished,
  placed: PlacedReference,
  warnings: string[],
): ExportSummary {
  return {
    schema: 'trtx.export/1',
    model: opts.model,
    output: written.path,
    python: { command: env.python, source: env.source, version: env.probe.version },
    engine: result.engine,
    versions: result.versions,
    methods: result.methods,
    bridge: { zero_copy_kv: result.zero_copy_kv, zero_copy_kv_path: result.zero_copy_kv_path, weight_streaming: result.weight_streaming },
    passes: run.reports.map((p) => ({ pass: p.pass, changed: p.changed, lines: p.lines })),
    warnings: [...warnings, ...run.reports.flatMap((p) => p.warnings)],
    diagnostics: run.checked.diagnostics,
    file_size: written.fileSize,
    reference: placed.reference,
    reference_removed: placed.removed,
  };
}
