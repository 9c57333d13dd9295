// The corpus models' programs without TensorRT delegates run in ExecuTorch's
// own runtime (executorch.runtime in trtx's managed environment) before and
// after trtx rewrites them, with identical outputs: trtx's re-encoding and its
// budget rewrite keep every program ExecuTorch can run, running the same.
//
// The rewrites run first (beforeAll), then every program of every test in one
// ExecuTorch interpreter (runJobsInExecuTorch): each interpreter start imports
// torch and executorch.runtime, and seven of them were most of this file's
// time (issue 26). Each test then checks its own rewrite and its own runs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RealCorpus } from '../scripts/corpus/build.js';
import { runCli, type CliResult } from './helpers/cli.js';
import { CORPUS_TIMEOUT_MS, file, realCorpus, runJobsInExecuTorch, type RuntimeJob, type RuntimeRun } from './helpers/real-corpus.js';
import { tempDir } from './helpers/temp.js';

const MODELS = ['llama', 'kv-conv', 'split-copyback', 'stateful', 'llama-shared'];

let corpus: RealCorpus;
let out: string;
/** Each model's canonical rewrite (rewrite SRC -o DST). */
const canonical = new Map<string, { src: string; dst: string; result: CliResult }>();
/** llama.mixed.pte's budget rewrite and its canonical one. */
let mixed: { src: string; budget: string; canonical: string; budgetRun: CliResult; canonicalRun: CliResult };
/** The runs of each job below, by its key; a job whose rewrite failed is not run. */
const runs = new Map<string, RuntimeRun[]>();

beforeAll(async () => {
  corpus = await realCorpus();
  out = tempDir('real-runtime');
  for (const name of MODELS) {
    const src = file(corpus, `${name}.portable.pte`);
    const dst = join(out, `${name}.canonical.pte`);
    canonical.set(name, { src, dst, result: await runCli(['rewrite', src, '-o', dst]) });
  }
  const src = file(corpus, corpus.manifest.mixed.file);
  const budget = join(out, 'mixed.8g.pte');
  const canonicalMixed = join(out, 'mixed.canonical.pte');
  mixed = {
    src,
    budget,
    canonical: canonicalMixed,
    budgetRun: await runCli(['rewrite', src, '-o', budget, '--budget', '8GiB', '--json']),
    canonicalRun: await runCli(['rewrite', src, '-o', canonicalMixed]),
  };

  const jobs: [string, RuntimeJob][] = [];
  for (const [name, c] of canonical) if (c.result.code === 0) jobs.push([name, { model: name, ptes: [c.src, c.dst] }]);
  if (mixed.budgetRun.code === 0 && mixed.canonicalRun.code === 0)
    jobs.push(['mixed', { model: 'llama', ptes: [src, budget, canonicalMixed], methods: corpus.manifest.mixed.cpu_methods }]);
  jobs.push([
    'shared',
    { model: 'llama', ptes: [file(corpus, 'llama-shared.portable.pte'), file(corpus, 'llama.portable.pte')], steps: 1 },
  ]);
  const results = await runJobsInExecuTorch(
    corpus,
    jobs.map(([, j]) => j),
  );
  jobs.forEach(([key], i) => runs.set(key, results[i] ?? []));
}, CORPUS_TIMEOUT_MS);

const runsOf = (key: string): RuntimeRun[] => {
  const r = runs.get(key);
  if (!r) throw new Error(`ExecuTorch did not run ${key}: its rewrite failed`);
  return r;
};

describe('ExecuTorch runs the portable programs the same after a trtx rewrite', () => {
  it.each(MODELS)('%s.portable.pte: canonical re-encoding', (name) => {
    expect(canonical.get(name)?.result.code).toBe(0);
    const [before, after] = runsOf(name);
    expect(before.calls.length).toBeGreaterThanOrEqual(3);
    expect(after.calls).toEqual(before.calls);
    // Decode steps see state: consecutive outputs differ.
    const shas = before.calls.map((c) => c.outputs[0].sha256);
    expect(new Set(shas).size).toBe(shas.length);
  });

  it.each(MODELS)('%s.portable.pte: a budget rewrite is refused (no TensorRT delegate to carry it) and writes nothing', async (name) => {
    const dst = join(out, `${name}.8g.pte`);
    const r = await runCli(['rewrite', file(corpus, `${name}.portable.pte`), '-o', dst, '--budget', '8GiB']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/BUDGET_NO_TENSORRT_DELEGATE/);
    expect(existsSync(dst)).toBe(false);
  });

  it('llama.mixed.pte: prefill and decode on XNNPACK run the same after the budget rewrite of its TensorRT method, and after a canonical one', async () => {
    expect(mixed.budgetRun.code).toBe(0);
    expect(JSON.parse(mixed.budgetRun.stdout).changes.join('\n')).toMatch(
      /decode_tensorrt > delegate 0 \(TensorRTBackend\): weight_streaming_budget automatic -> 8 GiB/,
    );
    expect(mixed.canonicalRun.code).toBe(0);
    const [before, afterBudget, afterCanonical] = runsOf('mixed');
    expect(before.calls.map((c) => c.method)).toEqual(['prefill', 'decode', 'decode', 'decode']);
    expect(afterBudget.calls).toEqual(before.calls);
    expect(afterCanonical.calls).toEqual(before.calls);
    // The XNNPACK delegates are untouched by the budget: only the TensorRT method's spec differs.
    const diff = JSON.parse((await runCli(['diff', mixed.src, mixed.budget, '--json'])).stdout);
    const changed = diff.methods.filter((m: { change: string }) => m.change !== 'unchanged').map((m: { name: string }) => m.name);
    expect(changed).toEqual(['decode_tensorrt']);
  });

  it('the shared caches are what makes prefill and decode one conversation: without them decode starts from empty caches', () => {
    const [shared, separate] = runsOf('shared');
    expect(shared.calls[0].outputs).toEqual(separate.calls[0].outputs); // the same prefill
    expect(shared.calls[1].outputs[0].sha256).not.toBe(separate.calls[1].outputs[0].sha256);
  });
});
