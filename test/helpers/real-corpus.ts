// The real-program corpus for the real-*.test.ts suites: built by ExecuTorch
// in trtx's managed environment on first use (under a lock: vitest runs the
// files in parallel), reused after. A corpus that cannot be built fails the
// suite; it is never skipped.
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bridgeEnv, bridgePackageDir } from '../../src/bridge/env.js';
import { ensureRealCorpus, type RealCorpus } from '../../scripts/corpus/build.js';
import type { CorpusModel } from '../../scripts/corpus/manifest.js';
import { testRunner } from './runner.js';
import { tempDir } from './temp.js';

/** Building the environment and the corpus takes minutes the first time. */
export const CORPUS_TIMEOUT_MS = 900_000;

let pending: Promise<RealCorpus> | null = null;

export function realCorpus(): Promise<RealCorpus> {
  pending ??= (async () => {
    // trtx verify (in process or a child) uses $TRTX_RUNNER_BIN: the test build
    // unless CI names its own, built here rather than inside a test's time.
    process.env.TRTX_RUNNER_BIN ??= await testRunner();
    return ensureRealCorpus({
      onProgress: (m) => process.stderr.write(`[real corpus] ${m}\n`),
      onPythonEnv: (p) => p.phase !== 'cached' && process.stderr.write(`[python env] ${p.message}\n`),
    });
  })();
  return pending;
}

export function model(corpus: RealCorpus, name: string): CorpusModel {
  const m = corpus.manifest.models.find((x) => x.name === name);
  if (!m) throw new Error(`the corpus has no model ${name}`);
  return m;
}

export const file = (corpus: RealCorpus, name: string) => join(corpus.dir, name);

/** The staged programs ExecuTorch lays out with device memory planning (every model but llama-shared). */
export const DEVICE_PLANNED = ['llama', 'kv-conv', 'split-copyback', 'stateful'] as const;

export interface RuntimeOutput {
  dtype: string;
  shape: number[];
  sha256: string;
  head: number[];
}
export interface RuntimeRun {
  program: string;
  calls: { method: string; step: number; outputs: RuntimeOutput[] }[];
}

/** One model's programs for ExecuTorch's runtime: every program gets the same inputs, calls and steps. */
export interface RuntimeJob {
  model: string;
  ptes: string[];
  methods?: string[];
  steps?: number;
}

/**
 * Runs several models' programs in ExecuTorch's own runtime
 * (python-bridge/corpus/run.py --jobs) with each model's inputs, in one
 * interpreter: each start imports torch and executorch.runtime, seconds of
 * CPU (seven starts were most of real-runtime.test.ts's minute). The runs
 * come back per job, in the jobs' order.
 */
export async function runJobsInExecuTorch(corpus: RealCorpus, jobs: RuntimeJob[]): Promise<RuntimeRun[][]> {
  const dir = tempDir('runtime-jobs');
  const list = join(dir, 'jobs.json');
  writeFileSync(list, JSON.stringify(jobs.map((j) => ({ model: j.model, ptes: j.ptes, steps: j.steps ?? 3, methods: j.methods ?? [] }))));
  const r = await execa(corpus.python, ['-m', 'corpus.run', '--jobs', list], {
    cwd: bridgePackageDir(),
    env: bridgeEnv({ base: process.env }),
    extendEnv: false,
    reject: false,
  });
  if (r.exitCode !== 0)
    throw new Error(
      `ExecuTorch's runtime failed on ${jobs.flatMap((j) => j.ptes).join(', ')} (exit ${r.exitCode}):\n${String(r.stderr).split('\n').slice(-15).join('\n')}`,
    );
  const out = JSON.parse(String(r.stdout).trim().split('\n').pop()!) as { jobs: { model: string; runs: RuntimeRun[] }[] };
  return out.jobs.map((j) => j.runs);
}

/** Runs one model's programs in ExecuTorch's own runtime with the model's inputs, one interpreter for all. */
export async function runInExecuTorch(
  corpus: RealCorpus,
  ptes: string[],
  modelName: string,
  opts: { methods?: string[]; steps?: number } = {},
): Promise<RuntimeRun[]> {
  const [runs] = await runJobsInExecuTorch(corpus, [{ model: modelName, ptes, ...opts }]);
  return runs;
}
