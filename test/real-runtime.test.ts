// The corpus models' programs without TensorRT delegates run in ExecuTorch's
// own runtime (executorch.runtime in trtx's managed environment) before and
// after trtx rewrites them, with identical outputs: trtx's re-encoding and its
// budget rewrite keep every program ExecuTorch can run, running the same.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RealCorpus } from '../scripts/corpus/build.js';
import { runCli } from './helpers/cli.js';
import { CORPUS_TIMEOUT_MS, file, realCorpus, runInExecuTorch } from './helpers/real-corpus.js';
import { tempDir } from './helpers/temp.js';

let corpus: RealCorpus;
let out: string;
beforeAll(async () => {
  corpus = await realCorpus();
  out = tempDir('real-runtime');
}, CORPUS_TIMEOUT_MS);

const RUN_MS = 120_000;
const MODELS = ['llama', 'kv-conv', 'split-copyback', 'stateful', 'llama-shared'];

describe('ExecuTorch runs the portable programs the same after a trtx rewrite', () => {
  it.each(MODELS)('%s.portable.pte: canonical re-encoding', { timeout: RUN_MS }, async (name) => {
    const src = file(corpus, `${name}.portable.pte`);
    const dst = join(out, `${name}.canonical.pte`);
    expect((await runCli(['rewrite', src, '-o', dst])).code).toBe(0);
    const [before, after] = await runInExecuTorch(corpus, [src, dst], name);
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

  it(
    'llama.mixed.pte: prefill and decode on XNNPACK run the same after the budget rewrite of its TensorRT method, and after a canonical one',
    { timeout: RUN_MS },
    async () => {
      const src = file(corpus, corpus.manifest.mixed.file);
      const budget = join(out, 'mixed.8g.pte');
      const canonical = join(out, 'mixed.canonical.pte');
      const r = await runCli(['rewrite', src, '-o', budget, '--budget', '8GiB', '--json']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).changes.join('\n')).toMatch(
        /decode_tensorrt > delegate 0 \(TensorRTBackend\): weight_streaming_budget automatic -> 8 GiB/,
      );
      expect((await runCli(['rewrite', src, '-o', canonical])).code).toBe(0);
      const methods = corpus.manifest.mixed.cpu_methods;
      const [before, afterBudget, afterCanonical] = await runInExecuTorch(corpus, [src, budget, canonical], 'llama', { methods });
      expect(before.calls.map((c) => c.method)).toEqual(['prefill', 'decode', 'decode', 'decode']);
      expect(afterBudget.calls).toEqual(before.calls);
      expect(afterCanonical.calls).toEqual(before.calls);
      // The XNNPACK delegates are untouched by the budget: only the TensorRT method's spec differs.
      const diff = JSON.parse((await runCli(['diff', src, budget, '--json'])).stdout);
      const changed = diff.methods.filter((m: { change: string }) => m.change !== 'unchanged').map((m: { name: string }) => m.name);
      expect(changed).toEqual(['decode_tensorrt']);
    },
  );

  it(
    'the shared caches are what makes prefill and decode one conversation: without them decode starts from empty caches',
    { timeout: RUN_MS },
    async () => {
      const [shared, separate] = await runInExecuTorch(
        corpus,
        [file(corpus, 'llama-shared.portable.pte'), file(corpus, 'llama.portable.pte')],
        'llama',
        { steps: 1 },
      );
      expect(shared.calls[0].outputs).toEqual(separate.calls[0].outputs); // the same prefill
      expect(shared.calls[1].outputs[0].sha256).not.toBe(separate.calls[1].outputs[0].sha256);
    },
  );
});
