// `trtx rewrite --zero-copy-kv` refusals (src/passes/zero-copy-analyse.ts):
// every ZC_REWRITE_* code on the program shape that earns it, naming the
// buffer, binding or delegate, and the program left untouched.

import { describe, expect, it } from 'vitest';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { CONV_STATE_FQN, cacheFqns, kFqn } from '../src/examples/kv-decoder.js';
import { applyZeroCopyKv, readTrtBlobs, ZERO_COPY_REWRITE_CODES, type ZeroCopyOptions } from '../src/passes/zero-copy.js';
import { TrtxError } from '../src/util/errors.js';
import {
  DECODE,
  aliasFedActivation,
  aliasedOutputRead,
  anotherStagingReads,
  calledTwice,
  callerOwnedCache,
  lostCacheUpdate,
  crossedWriteBacks,
  sharedLayout,
  stagingCopyShared,
  staged,
  twoEnginesOneCache,
  twoEnginesOneUnnamedCache,
  userAlias,
} from './helpers/zero-copy-shapes.js';
import { rewriteSpec, source } from './helpers/zero-copy-run.js';
import { refusal } from './helpers/refusal.js';

async function rewriteRefusal(spec: Parameters<typeof rewriteSpec>[0], opts: ZeroCopyOptions = {}): Promise<TrtxError> {
  const { pte } = source(spec);
  const blobs = await readTrtBlobs(pte);
  return refusal(() => applyZeroCopyKv(pte.program, blobs, opts), 'the rewrite did not refuse');
}

describe('refusals', () => {
  it('every code has a hint', () => {
    expect(ZERO_COPY_REWRITE_CODES.length).toBeGreaterThan(10);
  });

  it('ZC_REWRITE_NO_ALIASED_CACHE: a program with no aliased cache at all, under strict', async () => {
    const e = await rewriteRefusal(catalogueEntry('multi-engine.pte').build(), { strict: true });
    expect([e.code, e.location]).toEqual(['ZC_REWRITE_NO_ALIASED_CACHE', 'program']);
    expect(e.message).toContain('3 TensorRT delegates');
    expect(e.hint).toBeTruthy();
  });

  it('ZC_REWRITE_USER_ALIAS: an engine with a user alias beside its caches, naming the binding', async () => {
    const e = await rewriteRefusal(userAlias(staged(DECODE)));
    expect([e.code, e.location]).toEqual(['ZC_REWRITE_USER_ALIAS', 'decode > delegate 0 (TensorRTBackend) > binding output1']);
  });

  it('ZC_REWRITE_NOT_STAGED_BUFFER: an aliased input fed something no staging copy of a buffer produces', async () => {
    const e = await rewriteRefusal(aliasFedActivation());
    expect([e.code, e.location]).toEqual([
      'ZC_REWRITE_NOT_STAGED_BUFFER',
      'decode > delegate 1 (TensorRTBackend) > binding b_layers_1_attn_k_cache',
    ]);
    expect(e.message).toMatch(/is fed %\d+, which is neither a staging copy/);
  });

  it('ZC_REWRITE_NOT_STAGED_BUFFER: a cache staged from a method input (caller-owned), not a buffer', async () => {
    const e = await rewriteRefusal(callerOwnedCache());
    expect(e.code).toBe('ZC_REWRITE_NOT_STAGED_BUFFER');
    expect(e.message).toContain("is the method's input");
  });

  it('ZC_REWRITE_OUTPUT_READ: an aliased output read by more than its write-back (device side, host side)', async () => {
    const dev = await rewriteRefusal(aliasedOutputRead('device'));
    expect([dev.code, dev.location]).toEqual(['ZC_REWRITE_OUTPUT_READ', 'decode > delegate 0 (TensorRTBackend) > binding output0']);
    const host = await rewriteRefusal(aliasedOutputRead('host'));
    expect(host.code).toBe('ZC_REWRITE_OUTPUT_READ');
    expect(host.message).toContain('kernel aten::add');
  });

  it('ZC_REWRITE_OUTPUT_READ: an aliased output nothing writes back (the staged program already loses the update)', async () => {
    const e = await rewriteRefusal(lostCacheUpdate());
    expect(e.code).toBe('ZC_REWRITE_OUTPUT_READ');
    expect(e.message).toContain('is never written back into layers.0.attn.k_cache (%0)');
  });

  it('ZC_REWRITE_WRITEBACK_MISMATCH: aliased outputs written back crossed', async () => {
    const e = await rewriteRefusal(crossedWriteBacks());
    expect(e.code).toBe('ZC_REWRITE_WRITEBACK_MISMATCH');
    expect(e.message).toMatch(/staging copy of layers\.0\.attn\.k_cache .* writes it back into layers\.0\.attn\.v_cache/);
  });

  it('ZC_REWRITE_OTHER_READER: a cache another backend stages too, naming the buffer', async () => {
    const e = await rewriteRefusal(anotherStagingReads());
    expect([e.code, e.location]).toEqual(['ZC_REWRITE_OTHER_READER', `decode > ${kFqn(0)} (%0)`]);
    expect(e.message).toContain('a staging copy (et_copy::_h2d_copy) at chain 0 instruction 0');
  });

  it('ZC_REWRITE_OTHER_READER: a staging copy another backend reads too', async () => {
    const e = await rewriteRefusal(stagingCopyShared());
    expect(e.code).toBe('ZC_REWRITE_OTHER_READER');
    expect(e.message).toContain('delegate 1 (CudaBackend)');
  });

  it('ZC_REWRITE_SHARED_DELEGATES: a cache two engines update in turn, unless --share-cache', async () => {
    const e = await rewriteRefusal(twoEnginesOneCache());
    expect([e.code, e.location]).toEqual(['ZC_REWRITE_SHARED_DELEGATES', 'decode > cache (%0)']);
    expect(e.message).toContain('delegate 0 (TensorRTBackend) then decode > delegate 1 (TensorRTBackend)');
    expect(e.hint).toContain('--share-cache');
  });

  it('ZC_REWRITE_SHARED_DELEGATES: the decision cannot be recorded for a buffer without a name', async () => {
    const e = await rewriteRefusal(twoEnginesOneUnnamedCache(), { shareCache: true });
    expect(e.code).toBe('ZC_REWRITE_SHARED_DELEGATES');
    expect(e.message).toContain('has no fully_qualified_name');
  });

  it('ZC_REWRITE_DEVICE_CONFLICT: engines on two devices updating one cache', async () => {
    const e = await rewriteRefusal(twoEnginesOneCache(1), { shareCache: true });
    expect(e.code).toBe('ZC_REWRITE_DEVICE_CONFLICT');
  });

  it('ZC_REWRITE_SHARED_METHODS: a cache both methods plan at one place, unless --share-cache', async () => {
    const e = await rewriteRefusal(sharedLayout(staged()));
    expect([e.code, e.location]).toEqual(['ZC_REWRITE_SHARED_METHODS', `decode > ${kFqn(0)} (%0)`]);
    expect(e.message).toContain('shared with method prefill');
  });

  it('the same name in two separately planned methods is not sharing', async () => {
    const r = await rewriteSpec(staged());
    expect(r.result.rewritten.every((d) => d.shared.length === 0)).toBe(true);
  });

  it('ZC_REWRITE_SHARED_ARENA_MIXED: a shared state arena holding a buffer that stays on the host', async () => {
    const spec = sharedLayout(staged({ convState: 'same-delegate' }), () => [...cacheFqns(2), CONV_STATE_FQN]);
    const e = await rewriteRefusal(spec, { shareCache: true });
    expect(e.code).toBe('ZC_REWRITE_SHARED_ARENA_MIXED');
    expect(e.message).toContain('conv_state');
  });

  it('ZC_REWRITE_SHARED_ARENA_MIXED: a shared state arena already on another device', async () => {
    const spec = sharedLayout(staged());
    for (const m of spec.methods) m.arenas[2].device = 'cuda:1';
    const e = await rewriteRefusal(spec, { shareCache: true });
    expect(e.code).toBe('ZC_REWRITE_SHARED_ARENA_MIXED');
    expect(e.message).toContain('is on cuda:1');
  });

  it('ZC_REWRITE_NO_OUTPUTS_LEFT: an engine whose outputs are all caches', async () => {
    const e = await rewriteRefusal(catalogueEntry('kv-writer-only-staged.pte').build());
    expect([e.code, e.location]).toEqual(['ZC_REWRITE_NO_OUTPUTS_LEFT', 'decode > delegate 0 (TensorRTBackend)']);
  });

  it('ZC_REWRITE_INPUT_UNSOUND: a program that is neither staged nor zero-copy', async () => {
    expect((await rewriteRefusal(catalogueEntry('broken-partial-elision.pte').build())).code).toBe('ZC_REWRITE_INPUT_UNSOUND');
    expect((await rewriteRefusal(catalogueEntry('broken-arity.pte').build())).code).toBe('ZC_REWRITE_INPUT_UNSOUND');
  });

  it('ZC_REWRITE_INPUT_UNSOUND: an engine called twice', async () => {
    const e = await rewriteRefusal(calledTwice());
    expect(e.code).toBe('ZC_REWRITE_INPUT_UNSOUND');
    expect(e.message).toContain('is called 2 times');
  });

  it('leaves the program untouched when it refuses', async () => {
    const { pte } = source(twoEnginesOneCache());
    const before = JSON.stringify(pte.program.executionPlan[0].chains, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    expect(() => applyZeroCopyKv(pte.program, new Map(), { strict: true })).toThrow(TrtxError);
    await expect(readTrtBlobs(pte).then((b) => applyZeroCopyKv(pte.program, b))).rejects.toThrow(TrtxError);
    expect(JSON.stringify(pte.program.executionPlan[0].chains, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))).toBe(before);
  });
});
