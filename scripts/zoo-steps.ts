// The four steps a user runs on a zoo model, each as its own `trtx` process
// (bin/trtx, what a user runs): export --engine reference --budget 8GiB,
// check, rewrite --zero-copy-kv (to a new file), verify --zero-copy-kv of the
// staged program; plus the chain's last link, verify --zero-copy-kv of the
// rewritten program as a user runs it, with no flag to help: rewrite -o
// carried the reference outputs beside it, and a zero-copy program runs as
// its contract says. Shared by test/real-zoo-*.test.ts, scripts/zoo-table.ts and
// bench/zoo.ts. Nothing here asserts: it records exit codes, refusal codes,
// times, and verify's comparison with eager PyTorch
// (docs/reference-lowering.md section 4; `reference` in `verify --json`).

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import type { ZooModel } from './zoo-build.js';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(REPO, 'bin', 'trtx');
export const STEP_NAMES = ['export', 'check', 'rewrite', 'verify', 'verifyRewritten'] as const;
export type StepName = (typeof STEP_NAMES)[number];

export interface StepResult {
  args: string[];
  exitCode: number;
  /** The code of `error: CODE: ...`, the first error line trtx printed, if any. */
  code: string | null;
  seconds: number;
  stdout: string;
  stderr: string;
}

/** What verify's JSON says about the comparison with eager PyTorch (its `reference` member). */
export interface ReferenceComparison {
  /** verify --json carried a `reference` member. */
  present: boolean;
  /** Its status (`compared`: with eager PyTorch's outputs) and the file it compared with; null when absent. */
  status: string | null;
  file: string | null;
  /** The largest max absolute error anywhere under `reference` (keys named max_abs*), null when none. */
  maxAbs: number | null;
  /** How many comparisons (objects with a max_abs* number) it listed. */
  comparisons: number;
}

export interface ZooRun {
  model: string;
  steps: Partial<Record<StepName, StepResult>>;
  reference: ReferenceComparison | null;
  referenceRewritten: ReferenceComparison | null;
}

/** The exported program's name for one model, and the rewrite's. */
export const programs = (model: ZooModel) => ({ staged: `${model.name}.pte`, zeroCopy: `${model.name}.zc.pte` });

/** `trtx ARGS` in `cwd`, as a user runs it: its own process, no TRTX_PYTHON (the managed environment). */
export async function trtx(args: string[], cwd: string): Promise<StepResult> {
  const { TRTX_PYTHON: _named, ...env } = process.env;
  const started = performance.now();
  const r = await execa(BIN, args, { cwd, reject: false, extendEnv: false, env: { ...env, NO_COLOR: '1' } });
  const stderr = String(r.stderr);
  const code = /^error: ([A-Z][A-Z0-9_]+)\b/m.exec(stderr)?.[1] ?? /"code"\s*:\s*"([A-Z][A-Z0-9_]+)"/.exec(String(r.stdout))?.[1] ?? null;
  return { args, exitCode: r.exitCode ?? -1, code, seconds: (performance.now() - started) / 1000, stdout: String(r.stdout), stderr };
}

/** Walks verify's `--json` output for its `reference` member and the largest max absolute error in it. */
export function referenceOf(stdout: string): ReferenceComparison {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    return { present: false, status: null, file: null, maxAbs: null, comparisons: 0 };
  }
  const reference = (json as { reference?: unknown } | null)?.reference;
  if (typeof reference !== 'object' || reference === null)
    return { present: false, status: null, file: null, maxAbs: null, comparisons: 0 };
  const { status, file } = reference as { status?: unknown; file?: unknown };
  let maxAbs: number | null = null;
  let comparisons = 0;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (typeof v !== 'object' || v === null) return;
    let counted = false;
    for (const [k, x] of Object.entries(v)) {
      if (/^max_abs/.test(k) && typeof x === 'number') {
        maxAbs = Math.max(maxAbs ?? 0, x);
        if (!counted) comparisons += 1;
        counted = true;
      } else walk(x);
    }
  };
  walk(reference);
  return {
    present: true,
    status: typeof status === 'string' ? status : null,
    file: typeof file === 'string' ? file : null,
    maxAbs,
    comparisons,
  };
}

/** Runs the steps on one zoo model in `work` (made if missing); a step whose input was not written is not run. */
export async function runZooModel(zooDir: string, model: ZooModel, work: string): Promise<ZooRun> {
  mkdirSync(work, { recursive: true });
  const { staged, zeroCopy } = programs(model);
  const run: ZooRun = { model: model.name, steps: {}, reference: null, referenceRewritten: null };
  run.steps.export = await trtx(['export', join(zooDir, model.file), '--engine', 'reference', '--budget', '8GiB', '-o', staged], work);
  if (!existsSync(join(work, staged))) return run;
  run.steps.check = await trtx(['check', staged], work);
  run.steps.rewrite = await trtx(['rewrite', '--zero-copy-kv', staged, '-o', zeroCopy], work);
  // The same line for every model: a program without a KV cache has nothing to make zero-copy and verify says so.
  run.steps.verify = await trtx(['verify', '--zero-copy-kv', '--json', staged], work);
  run.reference = referenceOf(run.steps.verify.stdout);
  if (existsSync(join(work, zeroCopy))) {
    // No --reference, no --init-device-buffers: the reference outputs came with the rewrite, and the contract is the program's (docs/zero-copy-kv.md).
    run.steps.verifyRewritten = await trtx(['verify', '--zero-copy-kv', '--json', zeroCopy], work);
    run.referenceRewritten = referenceOf(run.steps.verifyRewritten.stdout);
  }
  return run;
}

/** One cell of the README table: ok, or the code that refused (exit status when there was none), or "-" when not run. */
export function cell(step: StepResult | undefined): string {
  if (!step) return '-';
  if (step.exitCode === 0) return 'ok';
  return step.code ? `\`${step.code}\`` : `exit ${step.exitCode}`;
}
