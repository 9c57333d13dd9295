// trtx against programs ExecuTorch itself wrote: the corpus models of
// python-bridge/corpus, exported through torch.export ->
// to_edge_transform_and_lower (reference lowering) -> to_executorch with
// device-aware memory planning, in trtx's managed environment. inspect,
// check, rewrite --zero-copy-kv, rewrite --budget, diff and verify on each.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { withPte } from '../src/pte/open.js';
import { tensorAt, tensorName } from '../src/pte/tensor.js';
import { blobPlace, delegatesOf, isTensorRT, readDelegateBlob } from '../src/tensorrt/delegates.js';
import { decodeEngine } from '../src/tensorrt/standin-engine.js';
import { checkEngineBindings } from '../src/tensorrt/standin-engine-bindings.js';
import type { RealCorpus } from '../scripts/corpus/build.js';
import { runCli } from './helpers/cli.js';
import { CORPUS_TIMEOUT_MS, DEVICE_PLANNED, file, model, realCorpus } from './helpers/real-corpus.js';
import { tempDir } from './helpers/temp.js';

let corpus: RealCorpus;
let out: string;
beforeAll(async () => {
  corpus = await realCorpus();
  out = tempDir('real-corpus');
}, CORPUS_TIMEOUT_MS);

const json = async (args: string[]) => {
  const r = await runCli([...args, '--json']);
  return { code: r.code, doc: JSON.parse(r.stdout) };
};
const ref = (name: string) => file(corpus, model(corpus, name).files.reference);
type Delegate = {
  backend_id: string;
  tensorrt?: {
    magic: string;
    engine: string;
    inputs: string[];
    outputs: string[];
    aliased: { output: string; input: string; kind: string }[];
  };
  compile_specs: { key: string; decoded?: Record<string, unknown> }[];
};
type Method = {
  name: string;
  delegates: Delegate[];
  arenas: { index: number; device: string }[];
  staging: { host_to_device_bytes: number };
  operators: { name: string }[];
};
const codes = (doc: { diagnostics: { code: string }[] }) => doc.diagnostics.map((d) => d.code);

describe('the corpus', () => {
  it('holds the models the programs come from, with their methods', () => {
    const byName = Object.fromEntries(corpus.manifest.models.map((m) => [m.name, Object.keys(m.methods).sort()]));
    expect(byName).toEqual({
      llama: ['decode', 'prefill'],
      'kv-conv': ['forward'],
      'split-copyback': ['forward'],
      stateful: ['forward'],
      'llama-shared': ['decode', 'prefill'],
    });
    expect(corpus.manifest.versions.executorch).toMatch(/^1\.5\.1/);
    expect(corpus.manifest.versions.torch).toMatch(/^2\.13\.0/);
  });
});

describe('trtx inspect', () => {
  it.each(DEVICE_PLANNED)(
    '%s: TensorRTBackend delegates with reference engines, staged through a CUDA arena by PropagateDevicePass',
    async (name) => {
      const { code, doc } = await json(['inspect', ref(name)]);
      expect(code).toBe(0);
      const methods = doc.methods as Method[];
      expect(methods.map((m) => m.name).sort()).toEqual(Object.keys(model(corpus, name).methods).sort());
      const trt = methods.flatMap((m) => m.delegates);
      expect(trt.length).toBeGreaterThan(0);
      // Every engine is the partition's own program, none synthetic.
      expect(doc.engines).toMatchObject({ tensorrt: 0, reference: trt.length, synthetic: 0, unknown: 0 });
      for (const d of trt) {
        expect(d.backend_id).toBe('TensorRTBackend');
        expect(d.tensorrt?.engine).toBe('reference');
        expect(d.compile_specs.map((s) => s.key)).toEqual(['target_device']);
      }
      for (const m of methods) {
        expect(m.arenas.map((a) => a.device)).toEqual(['reserved', 'cpu', 'cuda:0']);
        expect(m.staging.host_to_device_bytes).toBeGreaterThan(0);
        expect(m.operators.map((o) => o.name)).toEqual(expect.arrayContaining(['et_copy::_h2d_copy', 'et_copy::_d2h_copy', 'aten::copy_']));
      }
      const text = await runCli(['inspect', ref(name)]);
      expect(text.stdout).toMatch(/blob TR0[12]: trtx reference engine /);
      expect(text.stdout).toMatch(/TensorRT delegates? holds? (a )?trtx reference engines?, not (a )?TensorRT plans?/);
    },
  );

  it('llama: decode writes its caches in place (TR02, kv_cache_update), prefill copies them back (TR01): Torch-TensorRT aliases a one-position index_copy only', async () => {
    const { doc } = await json(['inspect', ref('llama')]);
    const byMethod = Object.fromEntries((doc.methods as Method[]).map((m) => [m.name, m.delegates[0].tensorrt!]));
    expect(byMethod.decode.magic).toBe('TR02');
    expect(byMethod.decode.aliased.map((a) => `${a.output}->${a.input}:${a.kind}`)).toEqual([
      'output0->b_layers_0_attn_k_cache:kv_cache_update',
      'output1->b_layers_0_attn_v_cache:kv_cache_update',
      'output2->b_layers_1_attn_k_cache:kv_cache_update',
      'output3->b_layers_1_attn_v_cache:kv_cache_update',
    ]);
    expect(byMethod.prefill.magic).toBe('TR01');
    expect(byMethod.prefill.aliased).toEqual([]);
    // The engine's inputs in delegate-argument order, as ExecuTorch's partition placeholders come.
    expect(byMethod.decode.inputs).toEqual([
      'x',
      'b_layers_0_attn_k_cache',
      'input_pos',
      'b_layers_0_attn_v_cache',
      'b_layers_1_attn_k_cache',
      'b_layers_1_attn_v_cache',
    ]);
  });

  it('split-copyback: the caches on one engine, the conv state and the gate ExecuTorch runs between them on a second', async () => {
    const { doc } = await json(['inspect', ref('split-copyback')]);
    const m = (doc.methods as Method[])[0];
    expect(m.delegates).toHaveLength(2);
    expect(m.delegates[0].tensorrt!.aliased.map((a) => a.input)).toEqual(['b_attn_k_cache', 'b_attn_v_cache']);
    expect(m.delegates[1].tensorrt!).toMatchObject({ magic: 'TR01', aliased: [] });
    expect(m.delegates[1].tensorrt!.inputs).toContain('b_conv_conv_state');
    expect(m.operators.map((o) => o.name)).toContain('aten::mul');
  });

  it('stateful: the initialized buffers carry their state in the program, the caches do not', async () => {
    await withPte(ref('stateful'), (pte) => {
      const plan = pte.program.executionPlan[0];
      const named = plan.values.flatMap((_, i) => {
        const t = tensorAt(plan, i);
        return t && tensorName(t) ? [[tensorName(t)!, t.dataBufferIdx > 0] as const] : [];
      });
      expect(Object.fromEntries(named)).toEqual({ 'attn.k_cache': false, 'attn.v_cache': false, running_scale: true, step: true });
    });
  });

  it('llama-shared: planned without device memory, as ExecuTorch 1.5 must to share buffers: no staging, no CUDA arena', async () => {
    const { doc } = await json(['inspect', ref('llama-shared')]);
    for (const m of doc.methods as Method[]) {
      expect(m.arenas.map((a) => a.device)).toEqual(['reserved', 'cpu', 'cpu']);
      expect(m.staging.host_to_device_bytes).toBe(0);
      expect(m.operators.map((o) => o.name)).toEqual(['aten::copy_']);
    }
  });
});

describe('the reference engines the Python lowering wrote', () => {
  it.each([...DEVICE_PLANNED, 'llama-shared'])(
    '%s: every engine decodes, agrees with its blob bindings, and stands in for its partition',
    async (name) => {
      await withPte(ref(name), async (pte) => {
        for (const r of delegatesOf(pte, isTensorRT)) {
          const blob = await readDelegateBlob(pte, r);
          // Names only, as Torch-TensorRT's backend writes them.
          expect(blob.metadata.io_bindings.every((b) => b.dtype === '' && b.shape.length === 0)).toBe(true);
          const place = blobPlace(pte, r);
          const engine = decodeEngine(await pte.readRange(place.fileOffset! + blob.engineOffset, Number(blob.engineSize)), {
            location: r.location,
          });
          checkEngineBindings(engine, blob.metadata.io_bindings, { location: r.location });
          // Version 3: the partition itself as an ExecuTorch program, its weights the outer program's named data; no synthetic steps.
          expect(engine.version).toBe(3);
          expect(engine.program!.externalWeights.length).toBeGreaterThan(0);
          for (const w of engine.program!.externalWeights) expect(pte.program.namedData.map((n) => n.key)).toContain(w.key);
          expect(engine.steps).toEqual([]);
          const program = engine.program!;
          expect(program.methods).toContain('forward');
          expect(program.inputs).toBe(blob.metadata.io_bindings.filter((b) => b.is_input).length);
          expect(program.outputs).toBe(blob.metadata.io_bindings.filter((b) => !b.is_input).length);
          expect(program.weightBytes).toBeGreaterThan(0);
          expect(engine.streamableWeightBytes).toBeGreaterThan(0n); // the partition's weights
          expect(engine.weightStreaming).toBe(false); // exported without a budget
          // Each aliased output updates a cache the engine takes as an input.
          for (const a of blob.metadata.aliased_io) expect(blob.metadata.io_bindings.find((b) => b.name === a.input)?.is_input).toBe(true);
        }
      });
    },
  );

  it("a copy-back (a prefill's caches) is an ordinary engine output, computed by the partition's program", async () => {
    await withPte(ref('llama'), async (pte) => {
      const prefill = delegatesOf(pte, isTensorRT).find((r) => r.plan.name === 'prefill')!;
      const blob = await readDelegateBlob(pte, prefill);
      const place = blobPlace(pte, prefill);
      const engine = decodeEngine(await pte.readRange(place.fileOffset! + blob.engineOffset, Number(blob.engineSize)));
      // Four positions at once: no KVCacheUpdate layer, so no alias; the four caches come back as outputs.
      expect(blob.metadata.aliased_io).toEqual([]);
      expect(engine.program!.outputs).toBe(5);
      expect(prefill.plan.operators.map((o) => o.name)).toContain('aten::copy_');
    });
  });
});

describe('unnamed twins: finalized as Torch-TensorRT documents it (no emit_mutable_buffer_names)', () => {
  it.each(DEVICE_PLANNED)(
    '%s: rewrite --zero-copy-kv finds the caches by structure, and verify --zero-copy-kv proves the contract',
    async (name) => {
      const unnamed = file(corpus, model(corpus, name).files.unnamed!);
      const out = join(tempDir('real-corpus-unnamed'), `${name}.zc.pte`);
      const rewritten = await runCli(['rewrite', '--zero-copy-kv', unnamed, '-o', out]);
      expect(rewritten.code, rewritten.stderr).toBe(0);
      // Named by value: the program has no names.
      expect(rewritten.stdout).toMatch(/fed its caches directly \(%\d+/);
      const verified = await runCli(['verify', '--zero-copy-kv', unnamed, '--json']);
      expect(verified.code, verified.stdout).toBe(0);
      const doc = JSON.parse(verified.stdout) as { mode: string; caches: string[]; notes: string[] };
      expect(doc.mode).toBe('staged-vs-zero-copy');
      // Each cache named after the engine input it feeds, as torch.export names a buffer's placeholder.
      expect(doc.caches.length).toBeGreaterThan(0);
      for (const c of doc.caches) expect(c).toMatch(/^b_/);
      expect(doc.notes.join(' ')).toMatch(/carry no names/);
    },
    120_000,
  );
});

describe('trtx check', () => {
  it.each(DEVICE_PLANNED)('%s: the staged program passes; --zero-copy-kv says its caches are staged', async (name) => {
    const plain = await json(['check', ref(name)]);
    expect(plain.code).toBe(0);
    expect(plain.doc.summary.errors).toBe(0);
    expect(plain.doc.engines.reference).toBeGreaterThan(0);
    const zc = await json(['check', ref(name), '--zero-copy-kv']);
    expect(zc.code).toBe(1);
    expect(new Set(codes(zc.doc))).toEqual(new Set(['ZC_NOT_ZERO_COPY']));
  });

  it('llama-shared: every cache fed to its engine from host memory is refused, and nothing blames zero-copy', async () => {
    const { code, doc } = await json(['check', ref('llama-shared')]);
    expect(code).toBe(1);
    expect(codes(doc)).toEqual(Array(4).fill('ZC_ALIASED_INPUT_HOST'));
    expect(doc.diagnostics.every((d: { method: string }) => d.method === 'decode')).toBe(true);
  });
});

describe('trtx rewrite --zero-copy-kv', () => {
  it.each(DEVICE_PLANNED)('%s: un-stages the caches, and the result passes check --zero-copy-kv', async (name) => {
    const dst = join(out, `${name}.zero-copy.pte`);
    const r = await json(['rewrite', ref(name), '-o', dst, '--zero-copy-kv']);
    expect(r.code).toBe(0);
    const check = await json(['check', dst, '--zero-copy-kv']);
    expect(check.code).toBe(0);
    expect(check.doc.summary.errors).toBe(0);
    const moved = (r.doc.passes[0].details.methods as { caches: { buffer: string }[] }[]).flatMap((m) =>
      m.caches.map((c) => c.buffer.replace(/ \(%\d+\)$/, '')),
    );
    expect(moved.every((b) => /k_cache|v_cache/.test(b))).toBe(true);
  });

  it('kv-conv: the conv state keeps its staging and its write-back; only the caches move', async () => {
    const dst = join(out, 'kv-conv.zc-diff.pte');
    await runCli(['rewrite', ref('kv-conv'), '-o', dst, '--zero-copy-kv']);
    const { doc } = await json(['diff', ref('kv-conv'), dst]);
    const ops = (doc.methods[0].instructions as { change: string; text: string }[])
      .filter((i) => i.change === 'removed')
      .map((i) => i.text);
    expect(ops.some((t) => t.includes('conv.conv_state'))).toBe(false);
    expect(ops.filter((t) => t.startsWith('aten::copy_')).map((t) => t.split('(')[1].split(',')[0])).toEqual([
      'attn.k_cache',
      'attn.v_cache',
    ]);
  });

  it('split-copyback: only the engine that lost outputs is stamped', async () => {
    const dst = join(out, 'split.zc.pte');
    await runCli(['rewrite', ref('split-copyback'), '-o', dst, '--zero-copy-kv']);
    const { doc } = await json(['inspect', dst]);
    const [kv, conv] = (doc.methods as Method[])[0].delegates;
    expect(kv.compile_specs.map((s) => s.key)).toEqual(['target_device', 'zero_copy_kv']);
    expect(conv.compile_specs.map((s) => s.key)).toEqual(['target_device']);
  });

  it('llama-shared: refused, nothing written', async () => {
    const dst = join(out, 'llama-shared.zc.pte');
    const r = await runCli(['rewrite', ref('llama-shared'), '-o', dst, '--zero-copy-kv']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ZC_REWRITE_NOT_STAGED_BUFFER/);
    expect(existsSync(dst)).toBe(false);
  });
});

describe('trtx rewrite --budget', () => {
  it.each(DEVICE_PLANNED)('%s: bakes the budget on every TensorRT delegate and nothing else', async (name) => {
    const dst = join(out, `${name}.8g.pte`);
    const r = await json(['rewrite', ref(name), '-o', dst, '--budget', '8GiB']);
    expect(r.code).toBe(0);
    const { doc } = await json(['inspect', dst]);
    for (const d of (doc.methods as Method[]).flatMap((m) => m.delegates)) {
      expect(d.compile_specs.map((s) => s.key)).toEqual(['target_device', 'weight_streaming_budget']);
      expect(d.compile_specs[1].decoded).toMatchObject({ budget_bytes: '8589934592' });
    }
    const diff = await json(['diff', ref(name), dst]);
    expect(diff.doc.methods.flatMap((m: { instructions: unknown[] }) => m.instructions)).toEqual([]);
  });

  it('llama-shared: a program that fails check is not rewritten, whatever the rewrite', async () => {
    for (const extra of [['--budget', '8GiB'], []]) {
      const dst = join(out, `llama-shared.refused.pte`);
      const r = await runCli(['rewrite', ref('llama-shared'), '-o', dst, ...extra]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/ZC_ALIASED_INPUT_HOST/);
      expect(existsSync(dst)).toBe(false);
    }
  });
});

describe('trtx diff', () => {
  it.each(corpusFiles())('a canonical rewrite of %s diffs empty', async (name) => {
    const dst = join(out, `canonical-${name}`);
    expect((await runCli(['rewrite', file(corpus, name), '-o', dst])).code).toBe(0);
    const { doc } = await json(['diff', file(corpus, name), dst]);
    expect(doc.equivalent).toBe(true);
    expect(doc.changes).toBe(0);
  });
});

function corpusFiles(): string[] {
  // Names are fixed by python-bridge/corpus/build.py; the manifest test above holds them to it.
  // llama-shared.pte fails check, so no rewrite writes it (above).
  return ['llama', 'kv-conv', 'split-copyback', 'stateful', 'llama-shared']
    .flatMap((m) => [`${m}.pte`, `${m}.portable.pte`])
    .filter((f) => f !== 'llama-shared.pte')
    .concat(['llama.mixed.pte']);
}

describe('trtx verify --zero-copy-kv', () => {
  it.each(DEVICE_PLANNED)(
    '%s: staged and zero-copy compute the same, every cache changes, each step sees the last',
    { timeout: 120_000 },
    async (name) => {
      const { code, doc } = await json(['verify', ref(name), '--zero-copy-kv', '--steps', '3']);
      expect(doc.assertions.filter((a: { ok: boolean }) => !a.ok)).toEqual([]);
      expect(code).toBe(0);
      expect(doc.mode).toBe('staged-vs-zero-copy');
      expect(doc.engines.reference).toBeGreaterThan(0);
      expect(doc.caches.every((c: string) => /k_cache|v_cache/.test(c))).toBe(true);
    },
  );
});
