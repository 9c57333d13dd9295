// The real-program corpus for the real-*.test.ts suites: built by ExecuTorch
// in trtx's managed environment on first use (under a lock: vitest runs the
// files in parallel), reused after. A corpus that cannot be built fails the
// suite; it is never skipped.
import { execa } from 'execa';
import { join } from 'node:path';
import { bridgeEnv, bridgePackageDir } from '../../src/bridge/env.js';
import { ensureRealCorpus, type RealCorpus } from '../../scripts/corpus/build.js';
import type { CorpusModel } from '../../scripts/corpus/manifest.js';
import { testRunner } from './runner.js';

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

/** Runs programs in ExecuTorch's own runtime (python-bridge/corpus/run.py) with the model's inputs, one interpreter for all. */
export async function runInExecuTorch(
  corpus: RealCorpus,
  ptes: string[],
  modelName: string,
  opts: { methods?: string[]; steps?: number } = {},
): Promise<RuntimeRun[]> {
  const args = ['-m', 'corpus.run', modelName, ...ptes, '--steps', String(opts.steps ?? 3)];
  if (opts.methods) args.push('--methods', opts.methods.join(','));
  const r = await execa(corpus.python, args, { cwd: bridgePackageDir(), env: bridgeEnv(), extendEnv: false, reject: false });
  if (r.exitCode !== 0)
    throw new Error(
      `ExecuTorch's runtime failed on ${ptes.join(', ')} (exit ${r.exitCode}):\n${String(r.stderr).split('\n').slice(-15).join('\n')}`,
    );
  return (JSON.parse(String(r.stdout).trim().split('\n').pop()!) as { runs: RuntimeRun[] }).runs;
}
