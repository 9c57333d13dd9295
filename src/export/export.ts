// `trtx export`: the Python bridge exports and partitions the model into a
// temporary `.pte`; TypeScript then finishes it in the rewrite pipeline
// (src/pipeline/: budget, zero-copy KV, every check, as `trtx rewrite`) and
// writes OUT atomically. OUT is validated and its writer lock taken before
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
import { basename, resolve } from 'node:path';
import { runBridge, type RunBridgeOptions } from '../bridge/run.js';
import type { BridgeEvent, CheckResult, EngineKind, ExportResult } from '../bridge/protocol.js';
import { PROTOCOL_VERSION } from '../bridge/protocol.js';
import type { Diagnostic } from '../checks/diagnostic.js';
import { claimTarget, runPipeline, withDiagnostics, type ClaimedTarget } from '../pipeline/run.js';
import { sidecarPath } from '../util/target.js';
import { trackPath } from '../util/cleanup.js';
import { TrtxError } from '../util/errors.js';
import { DEFAULT_REFERENCE_STEPS, checkModelFile, samePath, splitModelRef } from './model-file.js';
import { TRACEBACK_ENV, prepareTracebackFile, removeTracebackFile, withTraceback } from './traceback-file.js';
import { ensurePythonEnv, type PythonEnv, type PythonEnvProgress } from '../pyenv/index.js';
import type { ReportBudget } from '../util/report-budget.js';

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
  /** The command's report budget (src/util/report-budget.ts); unbounded when absent. */
  reportBudget?: ReportBudget;
}

export interface ExportSummary {
  schema: 'trtx.export/1';
  model: string;
  output: string;
  python: { command: string; source: string; version: string };
  /** tensorrt: the delegates hold TensorRT plans; reference: trtx reference engines (no TensorRT). */
  engine: EngineKind;
  versions: CheckResult['versions'];
  methods: ExportResult['methods'];
  bridge: {
    zero_copy_kv: boolean;
    zero_copy_kv_path: ExportResult['zero_copy_kv_path'];
    weight_streaming: ExportResult['weight_streaming'];
  };
  passes: { pass: string; changed: boolean; lines: string[] }[];
  warnings: string[];
  diagnostics: Diagnostic[];
  file_size: number;
  /** OUT.reference.json as written, or null: none asked (--no-reference) or the eager run failed (REFERENCE_EAGER_FAILED). */
  reference: { path: string; steps: number } | null;
  /** A stale OUT.reference.json of an earlier export that this one (written without a reference) removed. */
  reference_removed: string | null;
}

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
 * An environment failure of the bridge names the interpreter, not the model;
 * a missing Torch-TensorRT (default engine) gets the hint for this environment.
 */
function forEnvironment(e: unknown, engine: EngineKind, env: PythonEnv): unknown {
  if (!(e instanceof TrtxError) || !ENV_FAILURES.has(e.code)) return e;
  const tensorrt = e.code === 'BRIDGE_IMPORT_MISSING' && engine === 'tensorrt' && /\btorch_tensorrt\b/.test(e.message);
  return new TrtxError(e.code, env.python, e.message, { hint: tensorrt ? tensorrtHint(env, e.hint) : e.hint });
}

export async function exportModel(opts: ExportOptions): Promise<ExportSummary> {
  // The model file before Python: a wrong path is not a missing package.
  await checkModelFile(opts.model, { allowPickle: opts.allowPickle });
  const model = splitModelRef(opts.model).path;
  // Then OUT, before minutes of work: never the model, a regular file or a new path.
  const output = resolve(opts.output);
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

async function exportTo(opts: ExportOptions, target: ClaimedTarget): Promise<ExportSummary> {
  const output = target.path;
  const engine: EngineKind = opts.engine ?? 'tensorrt';
  const env = await ensurePythonEnv({ python: opts.python, onProgress: opts.onPythonEnv, signal: opts.signal });
  const python = { command: env.python, source: env.source };
  // Fail fast: trtx's managed environment is made from the lock, which has no
  // Torch-TensorRT, and its probe (package metadata, no import) says so in a
  // fraction of a second; the bridge would take torch's import to find out.
  // A named interpreter, or extra paths for the bridge (bridgeEnv's
  // PYTHONPATH, which the probe did not see), are left to the bridge's own
  // import check.
  const probed = env.source === 'managed' && !opts.bridgeEnv?.PYTHONPATH;
  if (engine === 'tensorrt' && probed && env.probe.packages.torch_tensorrt === null) {
    throw new TrtxError(
      'BRIDGE_IMPORT_MISSING',
      env.python,
      `Python ${env.probe.version} at ${env.python} cannot import torch_tensorrt (trtx's managed environment has no torch-tensorrt)`,
      { hint: tensorrtHint(env, undefined) },
    );
  }
  // The bridge writes the traceback of a failure here, and the hint names it (traceback-file.ts).
  const traceback = prepareTracebackFile(opts.model);
  const base: RunBridgeOptions = {
    python: env.python,
    env: { ...opts.bridgeEnv, [TRACEBACK_ENV]: traceback },
    signal: opts.signal,
    onStderr: opts.onStderr,
  };
  // Beside the output (one filesystem for the rename), a name that fits whatever the output's length.
  const temp = sidecarPath(output, `.bridge-${randomBytes(6).toString('hex')}.pte`, true);
  const warnings: string[] = env.mismatches.map(
    (m) => `PYENV_VERSION_MISMATCH: ${env.python} has ${m}; trtx is tested with the locked versions`,
  );
  const steps = opts.referenceSteps ?? DEFAULT_REFERENCE_STEPS;
  const tempReference = sidecarPath(output, `.bridge-${randomBytes(6).toString('hex')}.reference.json`, true);
  const untrack = trackPath(temp);
  const untrackReference = trackPath(tempReference);
  try {
    // The bridge imports what the engine needs before any work (its "check"
    // stage) and fails with BRIDGE_IMPORT_MISSING naming the package: no
    // separate import check, which would start Python once more.
    const result = await runBridge(
      {
        protocol: PROTOCOL_VERSION,
        model: resolve(opts.model),
        output: temp,
        methods: opts.methods?.length ? opts.methods : null,
        budget_bytes: opts.budget === undefined ? null : opts.budget.toString(),
        zero_copy_kv: Boolean(opts.zeroCopyKv),
        allow_pickle: Boolean(opts.allowPickle),
        check_only: false,
        engine,
        reference: steps > 0 ? { path: tempReference, steps, program: basename(output) } : null,
      },
      {
        ...base,
        timeoutMs: opts.timeoutMs,
        onEvent: (e) => {
          if (e.event === 'warning') warnings.push(`${e.code ? e.code + ': ' : ''}${e.message}`);
          opts.onEvent?.(e);
        },
      },
    ).catch((e: unknown) => {
      throw withTraceback(forEnvironment(e, engine, env), traceback);
    });
    removeTracebackFile(traceback);
    if (result.mode !== 'export') throw new TrtxError('BRIDGE_PROTOCOL', opts.model, 'the bridge answered an export with a check result');

    // The bridge may already have baked the budget; setting it again is
    // idempotent and proves it. Zero-copy: the caches of a staged export
    // (zero_copy_kv_path "trtx") are un-staged here, as `trtx rewrite
    // --zero-copy-kv` does; on Torch-TensorRT's own zero-copy export the pass
    // finds them un-staged and checks them.
    const outcome = await runPipeline(temp, {
      request: {
        budget: opts.budget === undefined ? undefined : { budget: opts.budget },
        zeroCopyKv: opts.zeroCopyKv ? { shareCache: Boolean(opts.shareCache) } : undefined,
      },
      output: target,
      reportBudget: opts.reportBudget,
    });
    const { checked, reports } = outcome;
    if (outcome.refused) {
      const first = checked.diagnostics.find((d) => d.severity === 'error')!;
      throw withDiagnostics(
        new TrtxError(
          'EXPORT_CHECK_FAILED',
          first.location,
          `the exported program fails ${checked.summary.line}; first: ${first.code}: ${first.message}`,
          { hint: first.hint },
        ),
        checked.diagnostics,
        outcome.program,
      );
    }
    const written = outcome.written!;
    // OUT is in place: its reference follows it (a rename, atomic), or a stale one goes.
    const finalReference = referencePath(output);
    let reference: ExportSummary['reference'] = null;
    let referenceRemoved: string | null = null;
    if (result.reference !== null) {
      await rename(tempReference, finalReference);
      reference = { path: finalReference, steps };
    } else if (existsSync(finalReference)) {
      await rm(finalReference, { force: true });
      referenceRemoved = finalReference;
    }
    return {
      schema: 'trtx.export/1',
      model: opts.model,
      output,
      python: { command: python.command, source: python.source, version: env.probe.version },
      engine: result.engine,
      versions: result.versions,
      methods: result.methods,
      bridge: { zero_copy_kv: result.zero_copy_kv, zero_copy_kv_path: result.zero_copy_kv_path, weight_streaming: result.weight_streaming },
      passes: reports.map((p) => ({ pass: p.pass, changed: p.changed, lines: p.lines })),
      warnings: [...warnings, ...reports.flatMap((p) => p.warnings)],
      diagnostics: checked.diagnostics,
      file_size: written.mode === 'unchanged' ? outcome.inputSize : written.result.fileSize,
      reference,
      reference_removed: referenceRemoved,
    };
  } finally {
    await rm(temp, { force: true });
    await rm(tempReference, { force: true });
    untrack();
    untrackReference();
  }
}
