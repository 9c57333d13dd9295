// The zero-copy KV rewrite (src/passes/zero-copy.ts): every staged fixture
// rewritten is structurally the hand-built zero-copy fixture (same
// instructions by operator and argument names, same delegate arguments,
// same compile specs, caches in a CUDA arena overlapping nothing); the
// result passes every check; a second run changes nothing; --share-cache
// records the decision. Its refusals: test/zero-copy-refusals.test.ts.

import { describe, expect, it } from 'vitest';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { CONV_STATE_FQN, cacheFqns, kvDecoder } from '../src/examples/kv-decoder.js';
import { stagingBytes } from '../src/graph/staging.js';
import { memoryOffset, type ExecutionPlan } from '../src/pte/model.js';
import { arenaDevice, tensorAt, tensorBytes, tensorName } from '../src/pte/tensor.js';
import { applyZeroCopyKv, readTrtBlobs, zeroCopyKvPass } from '../src/passes/zero-copy.js';
import { packArena } from '../src/passes/zero-copy-edit.js';
import { parseRuntimes } from '../src/checks/runtime-rules.js';
import { writeBackOrder } from '../src/graph/writeback-order.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { sharedKvCacheOf } from '../src/tensorrt/shared-kv-cache.js';
import type { MethodView } from './helpers/fixture-view.js';
import { DECODE, convStateSharedWithReset, sharedLayout, staged, twoEnginesOneCache } from './helpers/zero-copy-shapes.js';
import { errorCodes, rewriteSpec, rewritten, source } from './helpers/zero-copy-run.js';

/** The rewritten method and the hand-built zero-copy one agree on everything the rewrite is responsible for. */
function expectSameShape(got: MethodView, want: MethodView) {
  expect(got.instructions).toEqual(want.instructions);
  expect(got.inputs).toEqual(want.inputs);
  expect(got.outputs).toEqual(want.outputs);
  expect(got.operators).toEqual(want.operators);
  expect([...got.delegates.keys()]).toEqual([...want.delegates.keys()]);
  for (const [name, d] of want.delegates) {
    expect(got.delegates.get(name)!.specs, `delegate ${name} specs`).toEqual(d.specs);
    expect(Buffer.from(got.delegates.get(name)!.blob).equals(Buffer.from(d.blob)), `delegate ${name} blob`).toBe(true);
  }
  expect([...got.tensors.keys()].sort()).toEqual([...want.tensors.keys()].sort());
  for (const [name, t] of want.tensors) {
    expect({ device: got.tensors.get(name)!.device, fqn: got.tensors.get(name)!.fqn }, name).toEqual({ device: t.device, fqn: t.fqn });
  }
}

/** Every cache of the plan sits in a CUDA arena on `device` and overlaps no other tensor. */
function expectCachesOwnTheirRegions(plan: ExecutionPlan, device = 0) {
  let caches = 0;
  plan.values.forEach((v, i) => {
    if (v.type !== 'Tensor' || !tensorName(v.tensor)?.includes('_cache')) return;
    caches++;
    const a = v.tensor.allocationInfo!;
    expect(arenaDevice(plan, a.memoryId), `cache %${i}`).toEqual({ type: 'cuda', index: device });
    const lo = memoryOffset(a);
    const hi = lo + tensorBytes(v.tensor)!;
    expect(lo % 256n).toBe(0n);
    expect(hi <= plan.nonConstBufferSizes[a.memoryId]).toBe(true);
    plan.values.forEach((w, j) => {
      if (j === i || w.type !== 'Tensor' || !w.tensor.allocationInfo || w.tensor.allocationInfo.memoryId !== a.memoryId) return;
      const wlo = memoryOffset(w.tensor.allocationInfo);
      const whi = wlo + tensorBytes(w.tensor)!;
      expect(wlo < hi && lo < whi, `cache %${i} overlaps %${j}`).toBe(false);
    });
  });
  expect(caches).toBeGreaterThan(0);
}

const PAIRS = [
  ['kv-decode-staged.pte', 'kv-decode-zero-copy.pte'],
  ['kv-decode-two-engine-staged.pte', 'kv-decode-two-engine-zero-copy.pte'],
  ['mixed-conv-state-one-delegate-staged.pte', 'mixed-conv-state-one-delegate-zero-copy.pte'],
  ['mixed-conv-state-split-staged.pte', 'mixed-conv-state-split-zero-copy.pte'],
  ['kv-decode-seed-staged.pte', 'kv-decode-seed-zero-copy.pte'],
] as const;

describe('rewriting the staged fixtures gives the hand-built zero-copy ones', () => {
  it.each(PAIRS)('%s -> %s', async (stagedFile, zeroFile) => {
    const r = await rewriteSpec(catalogueEntry(stagedFile).build());
    const want = source(catalogueEntry(zeroFile).build()).built;
    const methods = want.program.executionPlan.map((p) => p.name!);
    expect(r.pte.program.executionPlan.map((p) => p.name)).toEqual(methods);
    for (const m of methods) {
      expectSameShape(r.view(m), (await import('./helpers/fixture-view.js')).viewMethod(want, m));
      expectCachesOwnTheirRegions(r.pte.program.executionPlan[want.index.get(m)!.plan]);
    }
    expect(await errorCodes(r.pte)).toEqual([]);
    expect(await errorCodes(r.pte, { requireZeroCopyKv: true })).toEqual([]);
  });

  it('the two-method program: each method un-staged on its own, both methods stamped', async () => {
    const r = await rewriteSpec(kvDecoder({ mode: 'staged' }));
    expect(r.result.rewritten.map((d) => d.location)).toEqual([
      'decode > delegate 0 (TensorRTBackend)',
      'prefill > delegate 0 (TensorRTBackend)',
    ]);
    expect(r.result.methods.map((m) => m.method)).toEqual(['decode', 'prefill']);
    for (const d of r.result.rewritten) expect(d.shared).toEqual([]);
  });

  it('a method with no cache beside one with caches: only the one with caches changes (no cache is refused program-wide only)', async () => {
    const forward = catalogueEntry('trt-single.pte').build().methods[0];
    const spec = { methods: [...staged(DECODE).methods, forward] };
    const { pte: before } = source(spec);
    const r = await rewriteSpec(spec);
    expect(r.result.rewritten.map((d) => d.method)).toEqual(['decode']);
    expect(r.pte.program.executionPlan[1]).toEqual(before.program.executionPlan[1]);
    expect(await errorCodes(r.pte)).toEqual([]);
  });

  it('the seed-scale decode step stages 1.15 GB before and only x, the position and the logits after', async () => {
    const r = await rewriteSpec(kvDecoder({ mode: 'staged', scale: 'seed', methods: ['decode'] }));
    const [m] = r.result.methods;
    expect(m.stagingBefore.host_to_device_bytes + m.stagingBefore.device_to_host_bytes).toBe(576_681_480 + 577_200_128);
    expect(stagingBytes(r.pte.program.executionPlan[0])).toEqual({ host_to_device_bytes: 5_640, device_to_host_bytes: 524_288, copies: 3 });
    expect(m.caches.reduce((s, c) => s + c.bytes, 0n)).toBe(576_675_840n);
  });
});

describe('what the rewrite keeps', () => {
  it('a copy-back buffer (conv_state) keeps its staging, its output and its write-back, in place in the write-back order', async () => {
    const spec = staged({ convState: 'same-delegate', ...DECODE });
    const before = source(spec).pte.program.executionPlan[0];
    const r = await rewriteSpec(spec);
    const v = r.view('decode');
    expect(v.instructions.filter((l) => l.includes(CONV_STATE_FQN))).toEqual([
      'et_copy::_h2d_copy.out(conv_state, conv_state@cuda, conv_state@cuda)',
      expect.stringMatching(/^delegate kv\(.*conv_state@cuda.*kv:output5\)$/),
      'aten::copy_.(conv_state, kv:output5@cpu, false, conv_state)',
    ]);
    expect(r.result.rewritten[0].elided).toEqual(['output0', 'output1', 'output2', 'output3']);
    const name = (p: ExecutionPlan, i: number) => tensorName(tensorAt(p, i)!);
    expect(writeBackOrder(before).map((i) => name(before, i))).toEqual([...cacheFqns(2), CONV_STATE_FQN]);
    expect(writeBackOrder(r.pte.program.executionPlan[0]).map((i) => name(r.pte.program.executionPlan[0], i))).toEqual([CONV_STATE_FQN]);
    expect(v.tensors.get(CONV_STATE_FQN)).toMatchObject({ device: 'cpu', arena: 1 });
  });

  it('only the KV engine is stamped when the copy-back rides on its own engine', async () => {
    const r = await rewriteSpec(staged({ convState: 'own-delegate', ...DECODE }));
    const specs = r.view('decode').delegates;
    expect(specs.get('conv')!.specs.map(([k]) => k)).toEqual(['target_device']);
    expect(specs.get('kv')!.specs.map(([k]) => k)).toEqual(['target_device', 'zero_copy_kv']);
  });

  it("keeps the caches' initial state (data_buffer_idx) and the mutable data segment, which check then refuses on the device", async () => {
    const spec = staged({ ...DECODE, cacheInitialState: true });
    const { pte } = source(spec);
    const before = pte.program.executionPlan[0].values.slice(0, 4).map((v) => (v.type === 'Tensor' ? v.tensor.dataBufferIdx : -1));
    expect(before.every((i) => i > 0)).toBe(true);
    const r = await rewriteSpec(spec);
    const after = r.pte.program.executionPlan[0].values.slice(0, 4).map((v) => (v.type === 'Tensor' ? v.tensor.dataBufferIdx : -1));
    expect(after).toEqual(before);
    expect(r.pte.program.mutableDataSegments).toEqual(pte.program.mutableDataSegments);
    // ExecuTorch cannot load initial state into a device arena: the rewrite
    // is refused by the check that follows it (trtx rewrite writes nothing).
    expect(await errorCodes(r.pte)).toEqual(Array(4).fill('RT_DEVICE_INITIAL_STATE'));
  });

  it('creates a CUDA arena with its non_const_buffer_device entry when the method has none on the delegate device', async () => {
    // Plan the device tensors in a second host arena: the method has no CUDA arena.
    const { built, pte } = source(staged(DECODE));
    const plan = pte.program.executionPlan[0];
    plan.nonConstBufferDevice = [];
    const arenasBefore = plan.nonConstBufferSizes.length;
    const result = applyZeroCopyKv(pte.program, await readTrtBlobs(pte));
    const r = rewritten(built, pte, result);
    const after = r.pte.program.executionPlan[0];
    expect(after.nonConstBufferSizes.length).toBe(arenasBefore + 1);
    expect(after.nonConstBufferDevice).toEqual([{ bufferIdx: arenasBefore, deviceType: 1, deviceIndex: 0 }]);
    for (const f of cacheFqns(2)) expect(r.view('decode').tensors.get(f)).toMatchObject({ arena: arenasBefore, device: 'cuda:0' });
  });

  it('re-packing an arena keeps overlapping tensors together and their offsets modulo 256', () => {
    const { pte } = source(staged(DECODE));
    const plan = pte.program.executionPlan[0];
    const t = (i: number) => tensorAt(plan, i)!;
    // x (tensor 4) at an odd residue, input_pos (5) over it at +8, as a planner reusing memory would.
    t(4).allocationInfo = { memoryId: 1, memoryOffsetLow: 1100, memoryOffsetHigh: 0 };
    t(5).allocationInfo = { memoryId: 1, memoryOffsetLow: 1108, memoryOffsetHigh: 0 };
    const end = packArena(plan, 1, new Set([0, 1, 2, 3]))!;
    expect(memoryOffset(t(5).allocationInfo!) - memoryOffset(t(4).allocationInfo!)).toBe(8n);
    expect(memoryOffset(t(4).allocationInfo!)).toBe(1100n % 256n);
    for (let i = 4; i < plan.values.length; i++) {
      const a = tensorAt(plan, i)?.allocationInfo;
      if (a && a.memoryId === 1) expect(memoryOffset(a) < end).toBe(true);
    }
  });

  it('leaves the offsets of state another method shares alone when the caches leave its arena', async () => {
    const r = await rewriteSpec(convStateSharedWithReset());
    for (const m of ['decode', 'reset'])
      expect(r.view(m).tensors.get(CONV_STATE_FQN), m).toMatchObject({ arena: 3, offset: 4096n, device: 'cpu' });
    for (const f of cacheFqns(2)) expect(r.view('decode').tensors.get(f)).toMatchObject({ arena: 2, device: 'cuda:0' });
    expect(await errorCodes(r.pte)).toEqual([]);
  });
});

describe('idempotence and composition', () => {
  it('a second run changes nothing and says the program is already zero-copy', async () => {
    const first = await rewriteSpec(kvDecoder({ mode: 'staged', kvEngines: 2 }));
    const { pte } = first;
    const before = JSON.stringify(pte.program, (_k, v) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? [...v] : v));
    const report = zeroCopyKvPass(await readTrtBlobs(pte))(pte.program);
    expect(report.changed).toBe(false);
    expect(report.lines).toEqual([
      expect.stringMatching(/^already zero-copy, nothing to un-stage: decode > delegate 0 \(TensorRTBackend\) elides output0, output1; /),
    ]);
    expect((report.details as { already: unknown[] }).already).toHaveLength(4);
    expect(JSON.stringify(pte.program, (_k, v) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? [...v] : v))).toBe(
      before,
    );
  });

  it('the hand-built zero-copy fixture is already zero-copy', async () => {
    const { pte } = source(catalogueEntry('mixed-conv-state-one-delegate-zero-copy.pte').build());
    const r = applyZeroCopyKv(pte.program, await readTrtBlobs(pte));
    expect(r.changed).toBe(false);
    expect(r.already.map((d) => d.elided)).toEqual([['output0', 'output1', 'output2', 'output3']]);
  });
});

describe('--share-cache', () => {
  it('two engines sharing one cache: both fed the buffer, both stamped, the decision recorded on both', async () => {
    const r = await rewriteSpec(twoEnginesOneCache(), { shareCache: true });
    const v = r.view('decode');
    expect(v.instructions.filter((l) => l.startsWith('delegate'))).toEqual([
      'delegate a(cache, x@cuda, input_pos@cuda, a:output1)',
      'delegate b(cache, a:output1, input_pos@cuda#2, b:output1)',
    ]);
    expect(v.instructions.some((l) => l.startsWith('aten::copy_'))).toBe(false);
    for (const d of ['a', 'b']) {
      const specs = r.pte.program.executionPlan[0].delegates[r.built.index.get('decode')!.delegates.get(d)!].compileSpecs;
      expect(decodeCompileSpecs(specs).specs.zeroCopyKv).toEqual(['output0']);
      expect(sharedKvCacheOf(specs)).toEqual(['cache']);
    }
    expect(await errorCodes(r.pte)).toEqual([]);
  });

  it('caches shared between methods: the state arena moves to the device whole, at the same offsets in both', async () => {
    const spec = sharedLayout(staged());
    const { pte: before } = source(spec);
    const r = await rewriteSpec(spec, { shareCache: true });
    for (const m of ['decode', 'prefill']) {
      const v = r.view(m);
      const was = before.program.executionPlan.find((p) => p.name === m)!;
      for (const [i, f] of cacheFqns(2).entries()) {
        expect(v.tensors.get(f)).toMatchObject({ arena: 3, offset: BigInt(i * 1024), device: 'cuda:0' });
        expect(tensorAt(was, i)!.allocationInfo!.memoryId).toBe(3);
      }
      expect(v.deviceEntries).toEqual(['2:cuda:0', '3:cuda:0']);
      expect(v.delegates.get('kv')!.specs.find(([k]) => k === 'shared_kv_cache')![1]).toBe(JSON.stringify(cacheFqns(2)));
    }
    // Module cannot share device arenas between methods; a memory manager of the application's own can.
    expect(await errorCodes(r.pte)).toEqual(Array(4).fill('RT_SHARED_DEVICE_ARENA'));
    expect(await errorCodes(r.pte, { runtime: parseRuntimes(['custom-memory']) })).toEqual([]);
  });

  it('is not needed, and records nothing, when nothing is shared', async () => {
    const r = await rewriteSpec(staged(), { shareCache: true });
    for (const d of r.result.rewritten) expect(d.shared).toEqual([]);
    expect(
      r
        .view('decode')
        .delegates.get('kv')!
        .specs.map(([k]) => k),
    ).toEqual(['target_device', 'zero_copy_kv']);
  });
});
