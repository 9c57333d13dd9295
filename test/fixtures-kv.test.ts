// The KV decoder against its documented shape (fixtures/README.md, "Staged
// decode, instruction by instruction"), the zero-copy form against what
// docs/zero-copy-kv.md says changes, and the seed-scale numbers (the 30-layer
// model of pytorch/TensorRT#4667).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { openPte } from '../src/pte/open.js';
import { cacheBytes, cacheFqns, kvDecoder, KV_SEED, resolveKv } from '../src/examples/kv-decoder.js';
import { stagingBytes } from '../fixtures/measure.js';
import { engineBytes, parseBlob } from '../src/tensorrt/blob.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { decodeEngine } from '../src/tensorrt/standin-engine.js';
import { scratchBytes } from '../src/tensorrt/standin-engine-bindings.js';
import { blobMeta, callArgSizes, lineDiff, viewMethod, type MethodView } from './helpers/fixture-view.js';
import { tempDir } from './helpers/temp.js';

const H2D = 'et_copy::_h2d_copy.out';
const D2H = 'et_copy::_d2h_copy.out';
const COPY = 'aten::copy_.';

function stagedDecodeShape(layers: number): string[] {
  const c = cacheFqns(layers);
  const C = c.length;
  const outs = Array.from({ length: C }, (_, i) => `kv:output${i}`);
  return [
    ...c.map((f) => `${H2D}(${f}, ${f}@cuda, ${f}@cuda)`),
    `${H2D}(x, x@cuda, x@cuda)`,
    `${H2D}(input_pos, input_pos@cuda, input_pos@cuda)`,
    `delegate kv(${[...c.map((f) => `${f}@cuda`), 'x@cuda', 'input_pos@cuda', ...outs, `kv:output${C}`].join(', ')})`,
    ...outs.map((o) => `${D2H}(${o}, ${o}@cpu, ${o}@cpu)`),
    `${D2H}(kv:output${C}, logits, logits)`,
    ...c.map((f, i) => `${COPY}(${f}, kv:output${i}@cpu, false, ${f})`),
  ];
}

function engineOf(v: MethodView, delegate: string) {
  const d = v.delegates.get(delegate)!;
  const parsed = parseBlob(d.blob);
  return { parsed, engine: decodeEngine(engineBytes(d.blob, parsed)) };
}

describe('staged KV decoder', () => {
  const built = buildProgram(kvDecoder({ mode: 'staged' }));
  const decode = viewMethod(built, 'decode');
  const fqns = cacheFqns(2);

  it('emits its methods in name order, as ExecuTorch does', () => {
    expect(built.program.executionPlan.map((p) => p.name)).toEqual(['decode', 'prefill']);
  });

  it('decode is the documented instruction stream, instruction by instruction', () => {
    const want = stagedDecodeShape(2);
    expect(decode.instructions.length).toBe(want.length);
    decode.instructions.forEach((line, i) => expect(line, `instruction ${i}`).toBe(want[i]));
    expect(decode.operators).toEqual([H2D, D2H, COPY]);
    expect(decode.inputs).toEqual(['x', 'input_pos']);
    expect(decode.outputs).toEqual(['logits']);
  });

  it('the file on disk holds exactly that stream', async () => {
    const dir = tempDir('kv');
    const { built: b } = await writeFixture(join(dir, 'kv-decode-staged.pte'), kvDecoder({ mode: 'staged' }));
    const pte = await openPte(join(dir, 'kv-decode-staged.pte'));
    const [onDisk, inMemory] = [pte.program.executionPlan[0], b.program.executionPlan[0]];
    expect(onDisk.chains[0].instructions).toEqual(inMemory.chains[0].instructions);
    expect(onDisk.operators).toEqual(inMemory.operators);
    expect(onDisk.values).toEqual(inMemory.values);
    await pte.close();
  });

  it('the same shape holds for any layer count', () => {
    expect(viewMethod(buildProgram(kvDecoder({ layers: 3, methods: ['decode'] })), 'decode').instructions).toEqual(stagedDecodeShape(3));
  });

  it('caches are named host-planned buffers; staging copies and delegate outputs live in the CUDA arena', () => {
    for (const f of fqns) {
      expect(decode.tensors.get(f)).toMatchObject({ arena: 1, device: 'cpu', fqn: f, sizes: [1, 2, 8, 4] });
      expect(decode.tensors.get(`${f}@cuda`)).toMatchObject({ arena: 2, device: 'cuda:0', fqn: null });
    }
    expect(decode.tensors.get('kv:output0')).toMatchObject({ arena: 2, device: 'cuda:0' });
    expect(decode.tensors.get('logits')).toMatchObject({ arena: 1, device: 'cpu', sizes: [1, 16] });
    expect(decode.deviceEntries).toEqual(['2:cuda:0']);
    expect(decode.arenaSizes[0]).toBe(0n);
  });

  it('the blob is TR02 and aliases each updated cache output to its cache input', () => {
    const { parsed } = engineOf(decode, 'kv');
    expect(parsed.magic).toBe('TR02');
    const names = parsed.metadata.io_bindings.map((b) => `${b.is_input ? 'in' : 'out'}:${b.name}`);
    expect(names).toEqual([
      'in:b_layers_0_attn_k_cache',
      'in:b_layers_0_attn_v_cache',
      'in:b_layers_1_attn_k_cache',
      'in:b_layers_1_attn_v_cache',
      'in:x',
      'in:input_pos',
      'out:output0',
      'out:output1',
      'out:output2',
      'out:output3',
      'out:output4',
    ]);
    expect(parsed.metadata.aliased_io).toEqual(
      fqns.map((f, i) => ({ output: `output${i}`, input: `b_${f.replace(/\./g, '_')}`, kind: 'kv_cache_update' })),
    );
    // Names only, as the real export writes them (backend.py preprocess).
    expect(parsed.metadata.io_bindings.every((b) => b.dtype === '' && b.shape.length === 0)).toBe(true);
    expect(decode.tensors.get('input_pos')!.sizes).toEqual([1]);
    expect(decode.delegates.get('kv')!.specs).toEqual([['target_device', 'cuda:0']]);
  });

  it('the engine writes every cache at input_pos, then attends over all of them into the logits', () => {
    const { engine } = engineOf(decode, 'kv');
    expect(engine.steps.map((s) => s.op)).toEqual(['KvWrite', 'KvWrite', 'KvWrite', 'KvWrite', 'Attend']);
    engine.steps.slice(0, 4).forEach((s, i) => expect(s).toMatchObject({ op: 'KvWrite', cache: i, position: 5, source: 4, seqDim: 2 }));
    expect(new Set(engine.steps.slice(0, 4).map((s) => (s.op === 'KvWrite' ? s.salt : 0))).size).toBe(4);
    expect(engine.steps[4]).toEqual({ op: 'Attend', caches: [0, 1, 2, 3], query: 4, output: 10 });
    expect(engine.weightStreaming).toBe(true);
    expect(engine.streamableWeightBytes).toBeGreaterThan(0n);
  });

  it('prefill writes a few positions, each from its own position input, and needs more scratch', () => {
    const prefill = viewMethod(built, 'prefill');
    expect(prefill.inputs).toEqual(['x', 'pos_0', 'pos_1', 'pos_2']);
    const { engine } = engineOf(prefill, 'kv');
    const writes = engine.steps.filter((s) => s.op === 'KvWrite');
    expect(writes.length).toBe(3 * 4);
    expect(new Set(writes.map((s) => (s.op === 'KvWrite' ? s.position : -1)))).toEqual(new Set([5, 6, 7]));
    // Scratch is sized by the tensors the call binds (the blob records no shapes).
    const dec = engineOf(decode, 'kv');
    expect(scratchBytes(engine, callArgSizes(built, 'prefill', 'kv'))).toBeGreaterThan(
      scratchBytes(dec.engine, callArgSizes(built, 'decode', 'kv')),
    );
  });
});

describe('zero-copy KV decoder differs from the staged one only by un-staged caches, elided outputs and the stamp', () => {
  const s = buildProgram(kvDecoder({ mode: 'staged' }));
  const z = buildProgram(kvDecoder({ mode: 'zero-copy' }));
  const fqns = cacheFqns(2);

  for (const method of ['decode', 'prefill']) {
    it(`${method}`, () => {
      const sv = viewMethod(s, method);
      const zv = viewMethod(z, method);
      const outs = fqns.map((_, i) => `kv:output${i}`);

      // Instructions: only the caches' staging, their copies back and their
      // write-backs are gone, and the delegate call lost exactly the aliased
      // outputs and took the buffers themselves.
      const { removed, added } = lineDiff(sv.instructions, zv.instructions);
      const call = (v: MethodView) => v.instructions.find((l) => l.startsWith('delegate kv('))!;
      expect(removed.sort()).toEqual(
        [
          ...fqns.map((f) => `${H2D}(${f}, ${f}@cuda, ${f}@cuda)`),
          ...outs.map((o) => `${D2H}(${o}, ${o}@cpu, ${o}@cpu)`),
          ...fqns.map((f, i) => `${COPY}(${f}, ${outs[i]}@cpu, false, ${f})`),
          call(sv),
        ].sort(),
      );
      expect(added).toEqual([call(zv)]);
      const sArgs = call(sv).slice('delegate kv('.length, -1).split(', ');
      const zArgs = call(zv).slice('delegate kv('.length, -1).split(', ');
      expect(zArgs).toEqual(
        sArgs.filter((a) => !outs.includes(a)).map((a) => (fqns.map((f) => `${f}@cuda`).includes(a) ? a.slice(0, -'@cuda'.length) : a)),
      );
      expect(sArgs.length - zArgs.length).toBe(fqns.length);
      expect(zv.operators).not.toContain(COPY);

      // Caches: CUDA arena, device tag, a region nothing else overlaps.
      for (const f of fqns) {
        expect(zv.tensors.get(f)).toMatchObject({ arena: 2, device: 'cuda:0', fqn: f });
        const t = zv.tensors.get(f)!;
        const size = 2n * 8n * 4n * 4n;
        for (const o of zv.tensors.values()) {
          if (o.name === f || o.arena !== 2) continue;
          const osize = BigInt(o.sizes.reduce((p, d) => p * d, 1)) * (o.name === 'input_pos@cuda' ? 8n : 4n);
          expect(o.offset! + osize <= t.offset! || t.offset! + size <= o.offset!, `${o.name} overlaps ${f}`).toBe(true);
        }
      }
      expect(zv.deviceEntries).toEqual(sv.deviceEntries);

      // Everything else is identical: user I/O, blob bytes, other specs.
      expect(zv.inputs).toEqual(sv.inputs);
      expect(zv.outputs).toEqual(sv.outputs);
      expect(zv.delegates.get('kv')!.blob).toEqual(sv.delegates.get('kv')!.blob);
      const zs = zv.delegates.get('kv')!.specs;
      expect(zs.slice(0, -1)).toEqual(sv.delegates.get('kv')!.specs);
      expect(zs[zs.length - 1]).toEqual(['zero_copy_kv', JSON.stringify(outs.map((o) => o.slice('kv:'.length)))]);
      for (const [name, t] of sv.tensors)
        if (!fqns.includes(name) && zv.tensors.has(name)) expect(zv.tensors.get(name)!.device).toBe(t.device);

      // Arity: staged n_in + n_out; zero-copy n_in + n_out - n_aliased.
      const meta = blobMeta(zv.delegates.get('kv')!).metadata;
      const nIn = meta.io_bindings.filter((b) => b.is_input).length;
      const nOut = meta.io_bindings.length - nIn;
      expect(sArgs.length).toBe(nIn + nOut);
      expect(zArgs.length).toBe(nIn + nOut - meta.aliased_io.length);
    });
  }
});

describe('mixed caches and conv_state', () => {
  it('one delegate: the caches go zero-copy, conv_state keeps staging, trailing output and write-back', () => {
    const z = viewMethod(buildProgram(kvDecoder({ mode: 'zero-copy', convState: 'same-delegate', methods: ['decode'] })), 'decode');
    expect(z.instructions).toEqual([
      `${H2D}(conv_state, conv_state@cuda, conv_state@cuda)`,
      `${H2D}(x, x@cuda, x@cuda)`,
      `${H2D}(input_pos, input_pos@cuda, input_pos@cuda)`,
      'delegate kv(layers.0.attn.k_cache, layers.0.attn.v_cache, layers.1.attn.k_cache, layers.1.attn.v_cache, conv_state@cuda, x@cuda, input_pos@cuda, kv:output4, kv:output5)',
      `${D2H}(kv:output4, logits, logits)`,
      `${D2H}(kv:output5, kv:output5@cpu, kv:output5@cpu)`,
      `${COPY}(conv_state, kv:output5@cpu, false, conv_state)`,
    ]);
    expect(z.tensors.get('conv_state')).toMatchObject({ arena: 1, device: 'cpu', fqn: 'conv_state' });
    const meta = blobMeta(z.delegates.get('kv')!).metadata;
    expect(meta.aliased_io.map((a) => a.output)).not.toContain('output5');
    const { engine } = engineOf(z, 'kv');
    expect(engine.steps.at(-1)).toEqual({ op: 'RingShift', stateIn: 4, source: 5, stateOut: 12 });
    expect(
      decodeCompileSpecs([{ key: 'zero_copy_kv', value: new TextEncoder().encode(z.delegates.get('kv')!.specs[1][1]) }]).specs.zeroCopyKv,
    ).toEqual(['output0', 'output1', 'output2', 'output3']);
  });

  it('split: only the KV engine is stamped; the conv engine hands its state to the KV engine on the device', () => {
    const z = viewMethod(buildProgram(kvDecoder({ mode: 'zero-copy', convState: 'own-delegate', methods: ['decode'] })), 'decode');
    expect(z.delegates.get('conv')!.specs.map(([k]) => k)).toEqual(['target_device']);
    expect(z.delegates.get('kv')!.specs.map(([k]) => k)).toEqual(['target_device', 'zero_copy_kv']);
    expect(blobMeta(z.delegates.get('conv')!).magic).toBe('TR01');
    expect(z.instructions).toContain('delegate conv(conv_state@cuda, x@cuda, conv:output0, conv:output1)');
    expect(z.instructions.find((l) => l.startsWith('delegate kv('))).toContain('conv:output0, input_pos@cuda');
    expect(z.instructions.at(-1)).toBe(`${COPY}(conv_state, conv:output1@cpu, false, conv_state)`);
    expect(z.instructions.filter((l) => l.startsWith(COPY))).toHaveLength(1);
  });

  it('two KV engines: each stamped with its own outputs, each staging its own input_pos', () => {
    const z = viewMethod(buildProgram(kvDecoder({ mode: 'zero-copy', kvEngines: 2, methods: ['decode'] })), 'decode');
    expect(z.delegates.get('kv0')!.specs.at(-1)).toEqual(['zero_copy_kv', '["output0","output1"]']);
    expect(z.delegates.get('kv1')!.specs.at(-1)).toEqual(['zero_copy_kv', '["output0","output1"]']);
    expect(z.instructions.filter((l) => l.startsWith(`${H2D}(input_pos`))).toEqual([
      `${H2D}(input_pos, input_pos@cuda, input_pos@cuda)`,
      `${H2D}(input_pos, input_pos@cuda#2, input_pos@cuda#2)`,
    ]);
    expect(z.instructions.find((l) => l.startsWith('delegate kv1('))).toContain('kv0:output2');
  });
});

describe('scale knobs', () => {
  it.each([
    ['float32', 4n],
    ['float16', 2n],
    ['bfloat16', 2n],
  ] as const)('dtype %s sizes caches and tensors alike; the bindings stay names only', (dtype, bytes) => {
    const v = viewMethod(buildProgram(kvDecoder({ dtype, methods: ['decode'] })), 'decode');
    const meta = blobMeta(v.delegates.get('kv')!).metadata;
    expect(meta.io_bindings[0]).toMatchObject({ dtype: '', shape: [] });
    expect(stagingBytes(kvDecoder({ dtype, methods: ['decode'] }).methods[0]).h2d).toBe(4n * 64n * bytes + 8n * bytes + 8n);
  });

  it('layers, heads, head_dim and max sequence length shape the caches', () => {
    const o = { layers: 3, heads: 4, headDim: 16, maxSeq: 32, methods: ['decode' as const] };
    const v = viewMethod(buildProgram(kvDecoder(o)), 'decode');
    expect(v.tensors.get('layers.2.attn.v_cache')!.sizes).toEqual([1, 4, 32, 16]);
    expect(cacheBytes(resolveKv(o))).toBe(6n * 4n * 32n * 16n * 4n);
  });

  it("kvDecoder({scale: 'seed'}) stages the 576.7 MB in and 577.2 MB out per decode step of pytorch/TensorRT#4667's 30-layer model", () => {
    const spec = kvDecoder({ scale: 'seed' });
    const d = resolveKv({ scale: 'seed' });
    expect([d.layers, d.heads, d.headDim, d.maxSeq, d.dtype]).toEqual([30, 8, 128, 4693, 'bfloat16']);
    expect(cacheBytes(KV_SEED)).toBe(576_675_840n);
    const decode = spec.methods.find((m) => m.name === 'decode')!;
    const st = stagingBytes(decode);
    expect(st.h2d).toBe(576_681_480n);
    expect(st.d2h).toBe(577_200_128n);
    expect(Number(st.h2d) / 1e6).toBeCloseTo(576.7, 1);
    expect(Number(st.d2h) / 1e6).toBeCloseTo(577.2, 1);
    const zc = stagingBytes(kvDecoder({ scale: 'seed', mode: 'zero-copy', methods: ['decode'] }).methods[0]);
    expect(zc).toEqual({ h2d: 5_640n, d2h: 524_288n });
    // No initial-state segment: the built program stays small.
    const built = buildProgram(spec);
    const segBytes = built.segments.reduce((n, s) => n + (s.kind === 'bytes' ? s.bytes.length : 0), 0);
    expect(segBytes).toBeLessThan(1 << 20);
    expect(built.program.executionPlan[0].nonConstBufferSizes[1]).toBeGreaterThan(2n * 576_675_840n);
  });

  it('caches can carry an initial-state segment when asked', () => {
    const built = buildProgram(kvDecoder({ cacheInitialState: true, methods: ['decode'] }));
    expect(built.program.mutableDataSegments).toHaveLength(1);
    expect(built.program.mutableDataSegments[0].offsets).toHaveLength(5);
  });
});
