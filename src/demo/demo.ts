// `trtx demo`: the main job end to end on a bundled example, with nothing
// but trtx installed. A staged KV decoder (built by the example builder,
// src/examples/, laid out as ExecuTorch and Torch-TensorRT lay it out) is
// rewritten with an 8 GiB weight-streaming budget and zero-copy KV and
// checked (the rewrite pipeline, src/pipeline/, as `trtx rewrite`: nothing
// is written when the check fails), then verified in the reference runner
// against the staged original in both caller-stream modes, initialising the
// device-resident caches as an application must.
// `--from-pytorch` starts one step earlier: the bundled PyTorch decoder
// (python-bridge/corpus/demo_model.py) is exported by ExecuTorch itself with
// the reference lowering (trtx export --engine reference, in trtx's managed
// Python environment), and that program goes through the same steps.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFixture } from '../examples/builder.js';
import { trackPath } from '../util/cleanup.js';
import { kvDecoder } from '../examples/kv-decoder.js';
import { stagingBytes } from '../graph/staging.js';
import { runPipeline } from '../pipeline/run.js';
import type { ExecutionPlan, Program } from '../pte/model.js';
import { withPte } from '../pte/open.js';
import { decodeCompileSpecs } from '../tensorrt/compile-specs.js';
import { TrtxError } from '../util/errors.js';
import { itemAt } from '../util/present.js';
import { verifyProgram } from '../verify/verify.js';
import type { DemoResultJson } from './result-json.js';
import { bridgePackageDir } from '../bridge/env.js';
import type { PythonEnvProgress } from '../pyenv/index.js';
import type { RunnerProgress } from '../runner/index.js';
import type { ReportBudget } from '../util/report-budget.js';
import { inFolder, type Env } from '../util/env.js';

export const DEMO_BUDGET = 8n << 30n;
/** The bundled PyTorch model of `--from-pytorch`, relative to python-bridge/. */
export const DEMO_MODEL = 'corpus/demo_model.py:make_decoder';
const demoModelRef = () => join(bridgePackageDir(), DEMO_MODEL);

export interface DemoOptions {
  out: string;
  scale: 'small' | 'seed';
  /** Export the bundled PyTorch decoder with the reference lowering instead of building the fixture. */
  fromPytorch?: boolean;
  onPythonEnv?: (p: PythonEnvProgress) => void;
  steps?: number;
  onStage?: (stage: string) => void;
  onRunnerBuild?: (p: RunnerProgress) => void;
  runner?: string;
  /** The prebuilt runner verify uses (VerifyOptions.runnerBinary). */
  runnerBinary?: string | null;
  /** The command's report budget, for every program the demo opens (src/util/report-budget.ts); unbounded when absent. */
  reportBudget?: ReportBudget;
  /** The run's environment (util/env.ts), for the export and the runner. */
  env?: Env;
  /** The run's folder: what a relative `out` (and a relative path in the TRTX_* settings) means; without it `out` is as given. */
  cwd?: string;
  /** Aborting it stops the export's Python, the runner's build and the runner. */
  signal?: AbortSignal;
}

/** The demo's result, as schemas/demo.schema.json states it (result-json.ts). */
export type DemoResult = DemoResultJson;

/** Staging bytes of one execution of the decode method (the first method when none is named so). */
function decodeStaging(plans: readonly ExecutionPlan[], what: string): { h2d: number; d2h: number } {
  const i = Math.max(
    0,
    plans.findIndex((p) => p.name === 'decode'),
  );
  const s = stagingBytes(itemAt(plans, i, what));
  return { h2d: s.host_to_device_bytes, d2h: s.device_to_host_bytes };
}

/**
 * An interrupted demo leaves nothing behind (util/cleanup.ts): the folder
 * when this run made it, else the programs this run wrote, until the run
 * ends; a demo that ends, even failing, keeps its programs to look at.
 */
export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const out = inFolder(opts.out, opts.cwd);
  const untrack: (() => void)[] = [];
  try {
    const made = await mkdir(out, { recursive: true }).catch((e: unknown) => {
      throw new TrtxError('DEMO_OUT', out, `cannot use as the demo folder (${(e as NodeJS.ErrnoException).code})`);
    });
    if (made !== undefined) untrack.push(trackPath(made));
    return await demoIn(out, opts, (path) => untrack.push(trackPath(path)));
  } finally {
    for (const u of untrack) u();
  }
}

async function demoIn(out: string, opts: DemoOptions, written: (path: string) => void): Promise<DemoResult> {
  const base = opts.fromPytorch ? 'llama' : `kv-decode-${opts.scale}`;
  const staged = join(out, `${base}-staged.pte`);
  const zeroCopy = join(out, `${base}-zero-copy.pte`);
  await writeStaged(staged, opts);
  written(staged);

  opts.onStage?.('rewriting: --budget 8GiB --zero-copy-kv');
  const before = await withPte(staged, (pte) => decodeStaging(pte.program.executionPlan, 'the staged program'), {
    reportBudget: opts.reportBudget,
  });
  const { program, check, rewrite } = await rewriteToZeroCopy(staged, zeroCopy, opts);
  written(zeroCopy);
  const after = decodeStaging(program.executionPlan, 'the zero-copy program');

  opts.onStage?.('verifying in the reference runner (staged vs zero-copy, caller stream off and on)');
  const verify = await verifyProgram(staged, {
    zeroCopyKv: true,
    zeroCopyTwin: zeroCopy,
    steps: opts.steps ?? 4,
    callerStream: 'both',
    // An application zeroes its device-resident caches before the first
    // execute: ExecuTorch leaves device arenas as cudaMalloc returns them.
    initDeviceBuffers: true,
    runner: opts.runner,
    runnerBinary: opts.runnerBinary,
    onRunnerBuild: opts.onRunnerBuild,
    reportBudget: opts.reportBudget,
    env: opts.env,
    cwd: opts.cwd,
    signal: opts.signal,
  });
  return {
    schema: 'trtx.demo/1',
    scale: opts.scale,
    source: opts.fromPytorch ? 'pytorch' : 'fixture',
    staged,
    zero_copy: zeroCopy,
    staging: { before, after },
    budgets: budgetsOf(program),
    rewrite,
    check,
    verify,
    ok: verify.ok && check.errors === 0,
  };
}

/** The staged program: exported from the bundled PyTorch decoder (--from-pytorch), else built by the example builder. */
async function writeStaged(staged: string, opts: DemoOptions): Promise<void> {
  if (!opts.fromPytorch) {
    opts.onStage?.('building the staged KV decoder');
    await writeFixture(staged, kvDecoder({ scale: opts.scale }));
    return;
  }
  if (opts.scale !== 'small')
    throw new TrtxError('DEMO_SCALE', '--scale', 'the bundled PyTorch model has one size; --scale goes with the fixture demo');
  opts.onStage?.(`exporting the bundled PyTorch decoder (${DEMO_MODEL}) with the reference lowering`);
  const { exportModel } = await import('../export/export.js');
  await exportModel({
    model: demoModelRef(),
    output: staged,
    engine: 'reference',
    onPythonEnv: opts.onPythonEnv,
    reportBudget: opts.reportBudget,
    env: opts.env,
    cwd: opts.cwd,
    signal: opts.signal,
    onEvent: (e) => {
      if (e.event === 'progress') opts.onStage?.(`export ${e.stage}${e.message ? `: ${e.message}` : ''}`);
    },
  });
}

/** `rewrite --budget 8GiB --zero-copy-kv` through the pipeline: the program it wrote, its check and its lines; DEMO_CHECK_FAILED when the check refused it (nothing written). */
async function rewriteToZeroCopy(
  staged: string,
  zeroCopy: string,
  opts: DemoOptions,
): Promise<{ program: Program; check: DemoResult['check']; rewrite: string[] }> {
  const outcome = await runPipeline(staged, {
    request: { budget: { budget: DEMO_BUDGET }, zeroCopyKv: {} },
    output: { path: zeroCopy, command: 'demo' },
    reportBudget: opts.reportBudget,
    onStep: (step) => {
      if (step === 'checks') opts.onStage?.('checking');
    },
  });
  const check = {
    errors: outcome.checked.summary.errors,
    warnings: outcome.checked.summary.warnings,
    line: outcome.checked.summary.line,
    diagnostics: outcome.checked.diagnostics
      .filter((d): d is typeof d & { severity: 'error' | 'warning' } => d.severity !== 'info')
      .map(({ severity, code, location, message, hint }) => ({ severity, code, location, message, hint })),
  };
  if (outcome.refused) {
    throw new TrtxError('DEMO_CHECK_FAILED', zeroCopy, `the rewritten demo program fails ${check.line}; nothing was written`, {
      diagnostics: outcome.checked.diagnostics,
    });
  }
  return { program: outcome.program, check, rewrite: outcome.reports.flatMap((r) => r.lines) };
}

/** The weight-streaming budget each TensorRT delegate of the rewritten program carries (null: automatic). */
function budgetsOf(program: Program): DemoResult['budgets'] {
  return program.executionPlan.flatMap((p) =>
    p.delegates
      .map((d, i) => ({ d, i }))
      .filter(({ d }) => d.id === 'TensorRTBackend')
      .map(({ d, i }) => ({
        method: p.name ?? '',
        delegate: i,
        bytes: decodeCompileSpecs(d.compileSpecs).specs.weightStreamingBudget?.toString() ?? null,
      })),
  );
}
