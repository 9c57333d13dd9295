// `trtx verify`: run a program in the native reference runner and prove the
// delegate runtime contract on what it reports. With zero-copy KV asked for,
// a staged program's zero-copy twin is derived in memory (the same pass as
// `trtx rewrite --zero-copy-kv`) and both run side by side:
//   - every output and every cache bit-identical at every step, staged vs
//     zero-copy, in each caller-stream mode;
//   - every cache changes at every step (an engine that never wrote through
//     its aliased binding would leave it alone);
//   - a persistent run differs from a fresh-cache run (each decode step sees
//     what the previous one wrote).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPte, type PteFile } from '../pte/open.js';
import { writeFromSource } from '../pte/copy.js';
import { applyZeroCopyKv, readTrtBlobs } from '../passes/zero-copy.js';
import { ensureRunner, runRunner, type RunnerProgress } from '../runner/index.js';
import type { RunnerReport } from '../runner/report.js';
import { TrtxError } from '../util/errors.js';
import { engineCensus, type EngineCensus } from '../tensorrt/engine-kind.js';
import { compareRuns, persistentDiffersFromFresh, cachesChangeEveryStep, type Assertion } from './assertions.js';

export type StreamMode = 'on' | 'off' | 'both';

export interface VerifyOptions {
  zeroCopyKv?: boolean;
  steps?: number;
  callerStream?: StreamMode;
  budget?: bigint;
  device?: 'cpu' | 'cuda';
  /** With zeroCopyKv on a staged program: compare against this file instead of deriving the twin. */
  zeroCopyTwin?: string;
  /** A runner binary to use instead of the cached build. */
  runner?: string;
  onProgress?: (message: string) => void;
  onRunnerBuild?: (p: RunnerProgress) => void;
}

export interface VerifyRun {
  variant: 'as-is' | 'staged' | 'zero-copy';
  caller_stream: boolean;
  fresh_state: boolean;
  exit_code: number;
  ok: boolean;
  errors: RunnerReport['errors'];
  /** Host<->device bytes of one execution of each method (from the first step). */
  staging: { method: string; h2d_bytes: number; d2h_bytes: number }[];
}

export interface VerifyResult {
  schema: 'trtx.verify/1';
  file: string;
  device: RunnerReport['device'];
  steps: number;
  methods: string[];
  mode: 'as-is' | 'staged-vs-zero-copy' | 'zero-copy';
  /** What the TensorRTBackend delegates hold (the runner executes reference engines only). */
  engines: EngineCensus;
  caches: string[];
  runs: VerifyRun[];
  budgets: { method: string; delegate: number; source: string; effective: string | null; clamped: boolean; ignored: string | null }[];
  assertions: Assertion[];
  ok: boolean;
}

interface Variant {
  name: VerifyRun['variant'];
  path: string;
}

/** Cache buffer names and, for a staged program, its zero-copy twin written to `dir`. */
async function deriveVariants(pte: PteFile, dir: string, zeroCopyKv: boolean, given?: string): Promise<{ variants: Variant[]; caches: string[]; mode: VerifyResult['mode'] }> {
  if (!zeroCopyKv) return { variants: [{ name: 'as-is', path: pte.path }], caches: [], mode: 'as-is' };
  const blobs = await readTrtBlobs(pte);
  const twin = structuredClone(pte.program);
  const result = applyZeroCopyKv(twin, blobs);
  // The pass names buffers as `fqn (%index)`; reports name them by fqn.
  const caches = [...new Set([...result.rewritten, ...result.already].flatMap((d) => d.buffers).map((b) => b.replace(/ \(%[0-9]+\)$/, '')))];
  if (!result.changed) return { variants: [{ name: 'zero-copy', path: pte.path }], caches, mode: 'zero-copy' };
  const twinPath = given ?? join(dir, 'zero-copy-twin.pte');
  if (!given) {
    const original = pte.program;
    pte.program = twin;
    try {
      await writeFromSource(pte, twinPath);
    } finally {
      pte.program = original;
    }
  }
  return {
    variants: [
      { name: 'staged', path: pte.path },
      { name: 'zero-copy', path: twinPath },
    ],
    caches,
    mode: 'staged-vs-zero-copy',
  };
}

function decodeMethods(pte: PteFile): string[] {
  const names = pte.program.executionPlan.map((p) => p.name ?? '');
  // A KV decoder's state machine is its decode method, run step after step.
  return names.includes('decode') ? ['decode'] : names;
}

export async function verifyProgram(path: string, opts: VerifyOptions = {}): Promise<VerifyResult> {
  const steps = opts.steps ?? 4;
  if (!Number.isInteger(steps) || steps < 2) throw new TrtxError('VERIFY_STEPS', '--steps', `${opts.steps} steps: verify needs at least 2 to see a cache persist`, { kind: 'usage' });
  const modes = opts.callerStream === 'on' ? [true] : opts.callerStream === 'off' ? [false] : [false, true];
  const dir = await mkdtemp(join(tmpdir(), 'trtx-verify-'));
  const pte = await openPte(path);
  try {
    const { variants, caches, mode } = await deriveVariants(pte, dir, Boolean(opts.zeroCopyKv), opts.zeroCopyTwin);
    const methods = decodeMethods(pte);
    const engines = await engineCensus(pte);
    await pte.close();
    const runner = opts.runner ? { path: opts.runner } : await ensureRunner({ onProgress: opts.onRunnerBuild });

    const reports = new Map<string, RunnerReport>();
    const runs: VerifyRun[] = [];
    const run = async (v: Variant, callerStream: boolean, freshState: boolean) => {
      opts.onProgress?.(`running ${v.name}${callerStream ? ' with a caller stream' : ''}${freshState ? ', fresh caches' : ''}`);
      const r = await runRunner(v.path, { runner: runner.path, methods, steps, callerStream, freshState, budget: opts.budget, device: opts.device });
      if (r.exitCode === 3) {
        throw new TrtxError('VERIFY_TENSORRT_PLAN', path, `${r.report.errors[0]?.message ?? 'a delegate carries a real TensorRT plan'}; the bundled runner executes trtx reference engines only`, {
          kind: 'usage',
          hint: 'verify real TensorRT plans with the ExecuTorch runtime built with the Torch-TensorRT delegate',
        });
      }
      reports.set(`${v.name}/${callerStream}/${freshState}`, r.report);
      runs.push({
        variant: v.name,
        caller_stream: callerStream,
        fresh_state: freshState,
        exit_code: r.exitCode,
        ok: r.report.ok,
        errors: r.report.errors,
        staging: r.report.methods.map((m) => ({ method: m.name, h2d_bytes: m.steps[0]?.h2d_bytes ?? 0, d2h_bytes: m.steps[0]?.d2h_bytes ?? 0 })),
      });
      return r.report;
    };

    for (const v of variants) for (const cs of modes) await run(v, cs, false);
    const primary = variants[variants.length - 1];
    const fresh = await run(primary, false, true);

    const assertions: Assertion[] = runs.map((r) => ({
      name: `${r.variant} run${r.caller_stream ? ' (caller stream)' : ''}${r.fresh_state ? ' (fresh caches)' : ''} completes`,
      ok: r.ok && r.exit_code === 0,
      detail: r.errors.map((e) => `${e.code}: ${e.location}: ${e.message}`).join('; '),
    }));
    const first = reports.get(`${variants[0].name}/${modes[0]}/false`)!;
    // Comparing runs that did not complete proves nothing: report the failures alone.
    const completed = runs.every((r) => r.ok && r.exit_code === 0);
    for (const v of completed ? variants : []) {
      for (const cs of modes) {
        const rep = reports.get(`${v.name}/${cs}/false`)!;
        if (rep !== first) assertions.push(compareRuns(first, rep, `${variants[0].name} (stream ${modes[0] ? 'on' : 'off'}) vs ${v.name} (stream ${cs ? 'on' : 'off'})`));
      }
    }
    if (completed && caches.length) {
      for (const v of variants) for (const cs of modes) assertions.push(cachesChangeEveryStep(reports.get(`${v.name}/${cs}/false`)!, caches, `${v.name} (stream ${cs ? 'on' : 'off'})`));
    }
    // Only a program with state across executions (named mutable buffers) has a "previous step" to see.
    const stateful = first.methods.some((m) => m.steps.some((st) => st.buffers.length > 0));
    if (completed && stateful) assertions.push(persistentDiffersFromFresh(reports.get(`${primary.name}/false/false`)!, fresh, primary.name));

    const budgets = first.methods.flatMap((m) =>
      m.delegates.map((d) => ({ method: m.name, delegate: d.index, source: d.budget.source, effective: d.budget.effective, clamped: d.budget.clamped, ignored: d.budget.ignored })),
    );
    return {
      schema: 'trtx.verify/1',
      file: path,
      device: first.device,
      steps,
      methods,
      mode,
      engines,
      caches,
      runs,
      budgets,
      assertions,
      ok: assertions.every((a) => a.ok),
    };
  } finally {
    await pte.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}
