// Each broken fixture differs from its sound twin in exactly the one way its
// name says: everything outside that difference is asserted equal.
import { describe, expect, it } from 'vitest';
import { buildProgram, renderBlob, type BuiltProgram } from '../src/examples/builder.js';
import { BLOB_FAULTS, patchBlob, PARTIAL_ELISION_STAGED, type BlobFault } from '../src/examples/broken.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { cacheFqns, kFqn, kvDecoder } from '../src/examples/kv-decoder.js';
import { parseBlob } from '../src/tensorrt/blob.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { TrtxError } from '../src/util/errors.js';
import { lineDiff, viewMethod, type MethodView, type TensorView } from './helpers/fixture-view.js';

const H2D = 'et_copy::_h2d_copy.out';
const D2H = 'et_copy::_d2h_copy.out';
const COPY = 'aten::copy_.';

const built = new Map<string, BuiltProgram>();
function build(file: string): BuiltProgram {
  if (!built.has(file)) built.set(file, buildProgram(catalogueEntry(file).build()));
  return built.get(file)!;
}

/** The broken file and its twin, as views of one method. */
function pair(file: string, method = 'decode'): { b: MethodView; t: MethodView; twin: string } {
  const twin = catalogueEntry(file).expect!.twin!;
  return { b: viewMethod(build(file), method), t: viewMethod(build(twin), method), twin };
}

/** Every other method of the two programs is identical. */
function otherMethodsEqual(file: string, except: string) {
  const b = build(file);
  const t = build(catalogueEntry(file).expect!.twin!);
  expect([...b.index.keys()]).toEqual([...t.index.keys()]);
  for (const m of b.index.keys()) if (m !== except) expect(viewMethod(b, m)).toEqual(viewMethod(t, m));
}

function sameExcept<T>(a: Map<string, T>, b: Map<string, T>, names: string[]) {
  const keys = new Set([...a.keys(), ...b.keys()]);
  for (const k of keys) if (!names.includes(k)) expect(a.get(k), k).toEqual(b.get(k));
}

function delegatesEqual(b: MethodView, t: MethodView, except: string[] = []) {
  sameExcept(b.delegates, t.delegates, except);
}

function callOf(v: MethodView, d: string): string[] {
  const l = v.instructions.find((x) => x.startsWith(`delegate ${d}(`))!;
  return l.slice(`delegate ${d}(`.length, -1).split(', ');
}

function nbytes(t: TensorView): bigint {
  return BigInt(t.sizes.reduce((p, d) => p * d, 1)) * 4n;
}

describe('broken KV shapes against their twins', () => {
  it('partial-elision: one cache left staged on the stamped delegate, its name missing from zero_copy_kv', () => {
    const { b, t } = pair('broken-partial-elision.pte');
    const f = PARTIAL_ELISION_STAGED;
    const out = `kv:output${cacheFqns(2).indexOf(f)}`;
    const { removed, added } = lineDiff(t.instructions, b.instructions);
    expect(removed).toEqual([t.instructions.find((l) => l.startsWith('delegate kv('))]);
    expect(added.sort()).toEqual(
      [
        `${H2D}(${f}, ${f}@cuda, ${f}@cuda)`,
        b.instructions.find((l) => l.startsWith('delegate kv(')),
        `${D2H}(${out}, ${out}@cpu, ${out}@cpu)`,
        `${COPY}(${f}, ${out}@cpu, false, ${f})`,
      ].sort(),
    );
    expect(callOf(b, 'kv').length).toBe(callOf(t, 'kv').length + 1);
    expect(callOf(b, 'kv')).toContain(out);
    expect(b.tensors.get(f)).toMatchObject({ arena: 1, device: 'cpu' });
    const spec = decodeCompileSpecs([{ key: 'zero_copy_kv', value: new TextEncoder().encode(b.delegates.get('kv')!.specs.at(-1)![1]) }])
      .specs.zeroCopyKv!;
    expect(spec).toHaveLength(3);
    expect(spec).not.toContain(out.slice(3));
    expect(b.delegates.get('kv')!.blob).toEqual(t.delegates.get('kv')!.blob);
    otherMethodsEqual('broken-partial-elision.pte', 'decode');
  });

  it('copy-back-elided: conv_state un-staged, its non-aliased output elided and stamped, its write-back gone', () => {
    const { b, t } = pair('broken-copy-back-elided.pte');
    const { removed, added } = lineDiff(t.instructions, b.instructions);
    expect(removed.sort()).toEqual(
      [
        `${H2D}(conv_state, conv_state@cuda, conv_state@cuda)`,
        t.instructions.find((l) => l.startsWith('delegate kv(')),
        `${D2H}(kv:output5, kv:output5@cpu, kv:output5@cpu)`,
        `${COPY}(conv_state, kv:output5@cpu, false, conv_state)`,
      ].sort(),
    );
    expect(added).toEqual([b.instructions.find((l) => l.startsWith('delegate kv('))]);
    expect(b.tensors.get('conv_state')).toMatchObject({ arena: 2, device: 'cuda:0' });
    expect(b.delegates.get('kv')!.specs.at(-1)![1]).toBe('["output0","output1","output2","output3","output5"]');
    // The blob never aliased output5: the elision was inferred, not read.
    expect(parseBlob(b.delegates.get('kv')!.blob).metadata.aliased_io.map((a) => a.output)).not.toContain('output5');
    expect(b.delegates.get('kv')!.blob).toEqual(t.delegates.get('kv')!.blob);
  });

  it('leftover-staging-copy: one extra _h2d_copy of a zero-copy cache, nothing else', () => {
    const { b, t } = pair('broken-leftover-staging-copy.pte');
    const f = kFqn(0);
    expect(b.instructions).toEqual([`${H2D}(${f}, ${f}@cuda, ${f}@cuda)`, ...t.instructions]);
    expect(t.tensors.get(f)).toMatchObject({ arena: 2, device: 'cuda:0' });
    sameExcept(b.tensors, t.tensors, [`${f}@cuda`]);
    expect(b.tensors.get(`${f}@cuda`)).toMatchObject({ arena: 2, device: 'cuda:0' });
    delegatesEqual(b, t);
    expect(b.arenaSizes[1]).toBe(t.arenaSizes[1]);
    otherMethodsEqual('broken-leftover-staging-copy.pte', 'decode');
  });

  it('cache-overlaps-activation: only the cache offset moves, onto the staging copy of x', () => {
    const { b, t } = pair('broken-cache-overlaps-activation.pte');
    const f = kFqn(0);
    expect(b.instructions).toEqual(t.instructions);
    sameExcept(b.tensors, t.tensors, [f]);
    const cache = b.tensors.get(f)!;
    const x = b.tensors.get('x@cuda')!;
    expect({ ...cache, offset: null }).toEqual({ ...t.tensors.get(f)!, offset: null });
    expect(cache.offset).toBe(x.offset);
    expect(cache.arena).toBe(x.arena);
    expect(x.offset! < cache.offset! + nbytes(cache)).toBe(true);
    expect(b.arenaSizes).toEqual(t.arenaSizes);
    delegatesEqual(b, t);
    otherMethodsEqual('broken-cache-overlaps-activation.pte', 'decode');
  });

  it.each(['decode', 'prefill'])('host-planned-arena (%s): every tensor in one host arena, device tags kept, no device entry', (method) => {
    const { b, t } = pair('broken-host-planned-arena.pte', method);
    expect(b.instructions).toEqual(t.instructions);
    expect(b.arenaSizes.length).toBe(2);
    expect(b.deviceEntries).toEqual([]);
    expect(t.deviceEntries).toEqual(['2:cuda:0']);
    for (const [n, tv] of t.tensors) {
      const bv = b.tensors.get(n)!;
      expect(bv.arena, n).toBe(tv.arena === null ? null : 1);
      expect(bv.device, n).toBe(tv.device);
    }
    expect([...t.tensors.values()].some((x) => x.device === 'cuda:0' && x.fqn)).toBe(true);
    delegatesEqual(b, t);
  });

  it('writeback-into-zero-copy-cache: one extra aten::copy_ into a zero-copy cache from a host tensor nothing fills', () => {
    const { b, t } = pair('broken-writeback-into-zero-copy-cache.pte');
    const f = kFqn(0);
    expect(b.instructions).toEqual([...t.instructions, `${COPY}(${f}, kv:output0@cpu, false, ${f})`]);
    expect(t.tensors.get(f)!.arena).toBe(2);
    sameExcept(b.tensors, t.tensors, ['kv:output0@cpu']);
    expect(t.tensors.has('kv:output0@cpu')).toBe(false);
    expect(b.instructions.filter((l) => l.includes('kv:output0@cpu'))).toHaveLength(1);
    delegatesEqual(b, t);
  });

  it('zero-copy-no-outputs-left: the stamped delegate has every output elided', () => {
    const { b, t } = pair('broken-zero-copy-no-outputs-left.pte');
    const meta = parseBlob(b.delegates.get('kv')!.blob).metadata;
    const nIn = meta.io_bindings.filter((x) => x.is_input).length;
    expect(callOf(b, 'kv')).toHaveLength(nIn);
    expect(callOf(t, 'kv')).toHaveLength(meta.io_bindings.length);
    expect(meta.aliased_io).toHaveLength(meta.io_bindings.length - nIn);
    expect(b.delegates.get('kv')!.specs.at(-1)).toEqual(['zero_copy_kv', '["output0","output1"]']);
    expect(b.delegates.get('kv')!.blob).toEqual(t.delegates.get('kv')!.blob);
    expect(b.delegates.get('head')).toEqual(t.delegates.get('head'));
  });

  it("swapped-caches: the two engines take each other's caches; counts, blobs and specs unchanged", () => {
    const { b, t } = pair('broken-swapped-caches.pte');
    const [c0, c1] = [cacheFqns(2).slice(0, 2), cacheFqns(2).slice(2)];
    expect(callOf(t, 'kv0').slice(0, 2)).toEqual(c0);
    expect(callOf(b, 'kv0').slice(0, 2)).toEqual(c1);
    expect(callOf(b, 'kv1').slice(0, 2)).toEqual(c0);
    expect(callOf(b, 'kv0').slice(2)).toEqual(callOf(t, 'kv0').slice(2));
    expect(callOf(b, 'kv1').slice(2)).toEqual(callOf(t, 'kv1').slice(2));
    const others = (v: MethodView) => v.instructions.filter((l) => !l.startsWith('delegate '));
    expect(others(b)).toEqual(others(t));
    sameExcept(b.tensors, t.tensors, []);
    delegatesEqual(b, t);
    // The pairing of binding and buffer is the only tell.
    const bindings = parseBlob(b.delegates.get('kv0')!.blob).metadata.io_bindings;
    expect(bindings[0].name).toBe('b_layers_0_attn_k_cache');
    expect(callOf(b, 'kv0')[0]).toBe('layers.1.attn.k_cache');
  });

  it("lost-update: conv_state's write-back removed, nothing else", () => {
    const { b, t } = pair('broken-lost-update.pte');
    const { removed, added } = lineDiff(t.instructions, b.instructions);
    expect(removed).toEqual([`${COPY}(conv_state, kv:output5@cpu, false, conv_state)`]);
    expect(added).toEqual([]);
    expect(parseBlob(b.delegates.get('kv')!.blob).metadata.aliased_io.map((a) => a.output)).not.toContain('output5');
    sameExcept(b.tensors, t.tensors, []);
    delegatesEqual(b, t);
  });

  it('arity: the decode call lost its non-aliased logits output, nothing else', () => {
    const { b, t } = pair('broken-arity.pte');
    expect(callOf(b, 'kv')).toEqual(callOf(t, 'kv').filter((a) => a !== 'kv:output4'));
    const meta = parseBlob(b.delegates.get('kv')!.blob).metadata;
    const nIn = meta.io_bindings.filter((x) => x.is_input).length;
    const nOut = meta.io_bindings.length - nIn;
    const n = callOf(b, 'kv').length;
    expect(n).not.toBe(nIn + nOut);
    expect(n).not.toBe(nIn + nOut - meta.aliased_io.length);
    const others = (v: MethodView) => v.instructions.filter((l) => !l.startsWith('delegate '));
    expect(others(b)).toEqual(others(t));
    delegatesEqual(b, t);
    otherMethodsEqual('broken-arity.pte', 'decode');
  });
});

describe('broken compile specs against multi-engine', () => {
  it("budget-spec: one engine's budget value is not decimal bytes", () => {
    const { b, t } = pair('broken-budget-spec.pte', 'forward');
    expect(b.instructions).toEqual(t.instructions);
    delegatesEqual(b, t, ['trt1']);
    const specs = b.delegates.get('trt1')!.specs;
    expect(specs).toEqual(t.delegates.get('trt1')!.specs.map(([k, v]) => [k, k === 'weight_streaming_budget' ? '8GiB' : v]));
  });

  it('duplicate-spec-key: one engine carries the budget twice', () => {
    const { b, t } = pair('broken-duplicate-spec-key.pte', 'forward');
    delegatesEqual(b, t, ['trt1']);
    const bs = b.delegates.get('trt1')!.specs;
    expect(bs.slice(0, -1)).toEqual(t.delegates.get('trt1')!.specs);
    expect(bs.filter(([k]) => k === 'weight_streaming_budget')).toHaveLength(2);
  });

  it('multi-engine itself carries the budget once on every engine', () => {
    const v = viewMethod(build('multi-engine.pte'), 'forward');
    for (const d of ['trt0', 'trt1', 'trt2'])
      expect(v.delegates.get(d)!.specs).toEqual([
        ['weight_streaming_budget', '268435456'],
        ['target_device', 'cuda:0'],
      ]);
  });
});

describe('broken blobs: a valid blob with one fault', () => {
  const valid = renderBlob(kvDecoder().methods[0].delegates[0].blob);

  it.each(Object.keys(BLOB_FAULTS) as BlobFault[])('%s', (fault) => {
    const file = `broken-blob-${fault}.pte`;
    const { b, t } = pair(file);
    // Only the decode engine's blob differs.
    expect(b.instructions).toEqual(t.instructions);
    sameExcept(b.tensors, t.tensors, []);
    expect(b.delegates.get('kv')!.specs).toEqual(t.delegates.get('kv')!.specs);
    expect(b.delegates.get('kv')!.blob).not.toEqual(t.delegates.get('kv')!.blob);
    expect(t.delegates.get('kv')!.blob).toEqual(valid);
    otherMethodsEqual(file, 'decode');
    // And the parser refuses it with the refusal the fault is named for.
    let code = 'ok';
    try {
      parseBlob(b.delegates.get('kv')!.blob);
    } catch (e) {
      if (!(e instanceof TrtxError)) throw e;
      code = e.code;
    }
    expect(code).toBe(BLOB_FAULTS[fault]);
    expect(catalogueEntry(file).expect!.code).toBe(BLOB_FAULTS[fault]);
  });

  it('header faults patch bytes in place; the engine extent fault wraps a u64 sum', () => {
    for (const f of [
      'magic',
      'metadata-in-header',
      'metadata-extent',
      'engine-extent',
      'overlap',
      'engine-align',
      'alias-in-tr01',
      'metadata-json',
    ] as const) {
      const p = patchBlob(valid, f);
      expect(p.length, f).toBe(valid.length);
      const differing = [...p].map((x, i) => (x === valid[i] ? -1 : i)).filter((i) => i >= 0);
      expect(differing.length, f).toBeGreaterThan(0);
      expect(differing.length, f).toBeLessThanOrEqual(8);
    }
    const dv = new DataView(patchBlob(valid, 'engine-extent').buffer);
    const off = BigInt(dv.getUint32(12, true));
    expect((off + dv.getBigUint64(16, true)) % (1n << 64n)).toBe(16n);
  });
});
