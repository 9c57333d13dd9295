// The zero-copy KV checks (src/checks/zero-copy.ts): each rule refuses the
// program that breaks it, with its own code, in the method and place at
// fault, from the delegate side and from the buffer side; every sound
// fixture and every rewritten program passes.
import { describe, expect, it } from 'vitest';
import { CATALOGUE, catalogueEntry } from '../src/examples/catalogue.js';
import { CONV_STATE_FQN, cacheFqns, kFqn, vFqn } from '../src/examples/kv-decoder.js';
import { checkZeroCopy, ZERO_COPY_CODES, ZERO_COPY_RULES, bufferPlaceholder } from '../src/checks/zero-copy.js';
import { buildCheckContext } from '../src/checks/context.js';
import { encodeZeroCopyKv, setSpec } from '../src/tensorrt/compile-specs.js';
import type { Diagnostic } from '../src/checks/diagnostic.js';
import {
  DECODE,
  anotherBackendReads,
  cacheOffDevice,
  crossedWriteBacks,
  inputAtElidedAlias,
  oneCacheTwice,
  sharedLayout,
  stampedButStaged,
  stateReadElsewhere,
  staged,
  twoEnginesOneCache,
  twoWriteBacks,
  unstamped,
  userAlias,
  withSharedSpec,
  zeroCopy,
} from './helpers/zero-copy-shapes.js';
import { rewriteSpec, source, zeroCopyFindings } from './helpers/zero-copy-run.js';
import { pteFromBytes, encodePte } from './helpers/memory-pte.js';

const codes = (ds: Diagnostic[]) => ds.map((d) => d.code);
const only = (ds: Diagnostic[], code: string) => ds.filter((d) => d.code === code);
const built = (file: string) => catalogueEntry(file).build();

describe('sound programs have no zero-copy findings', () => {
  const sound = CATALOGUE.filter((e) => e.expect?.sound && !e.file.includes('-seed-'));
  it.each(sound.map((e) => [e.file, e] as const))('%s', async (_f, e) => {
    expect(await zeroCopyFindings(e.build())).toEqual([]);
  });

  it('the seed-scale zero-copy program', async () => {
    expect(await zeroCopyFindings(built('kv-decode-seed-zero-copy.pte'))).toEqual([]);
  });
});

describe('each rule, from the catalogue fixture that breaks it', () => {
  const broken = Object.entries(ZERO_COPY_RULES).filter(([, r]) => r.fixture.endsWith('.pte') && r.fixture.startsWith('broken-'));

  it('the catalogue holds a broken fixture for the rules it names', () => {
    expect(broken.map(([c]) => c).sort()).toEqual(
      [
        'ZC_PARTIAL_ELISION',
        'ZC_NOT_ALIASED',
        'ZC_LEFTOVER_STAGING',
        'ZC_CACHE_OVERLAP',
        'ZC_HOST_PLANNED',
        'ZC_ALIASED_INPUT_HOST',
        'ZC_WRITEBACK_INTO_CACHE',
        'ZC_NO_OUTPUTS_LEFT',
        'ZC_SWAPPED_CACHE',
        'ZC_UPDATE_MISSING',
      ].sort(),
    );
  });

  it.each(broken.map(([code, r]) => [code, r.fixture] as const))('%s: %s', async (code, file) => {
    const found = await zeroCopyFindings(built(file));
    expect(codes(found)).toContain(code);
    expect(only(found, code).every((d) => d.severity === 'error' && d.hint.length > 0 && d.method !== null)).toBe(true);
  });

  it('ZC_PARTIAL_ELISION names the aliased output left staged', async () => {
    const [d] = only(await zeroCopyFindings(built('broken-partial-elision.pte')), 'ZC_PARTIAL_ELISION');
    expect(d).toMatchObject({ method: 'decode', delegate: 0, location: 'decode > delegate 0 (TensorRTBackend)' });
    expect(d.message).toContain('leaves "output3" staged');
  });

  it('ZC_PARTIAL_ELISION: the call and the stamp disagree (stamp elides all, call keeps every output)', async () => {
    const { pte } = source(staged(DECODE));
    const d = pte.program.executionPlan[0].delegates[0];
    d.compileSpecs = setSpec(d.compileSpecs, 'zero_copy_kv', encodeZeroCopyKv(['output0', 'output1', 'output2', 'output3']));
    const found = await zeroCopyFindings(pte);
    expect(only(found, 'ZC_PARTIAL_ELISION').map((x) => x.location)).toEqual([
      'decode > delegate 0 (TensorRTBackend) > chain 0 instruction 6',
    ]);
  });

  it('ZC_NOT_ALIASED names the copy-back output treated as a cache', async () => {
    const [d] = only(await zeroCopyFindings(built('broken-copy-back-elided.pte')), 'ZC_NOT_ALIASED');
    expect(d.location).toBe('decode > delegate 0 (TensorRTBackend) > binding output5');
  });

  it('ZC_LEFTOVER_STAGING names the copy and the buffer', async () => {
    const [d] = only(await zeroCopyFindings(built('broken-leftover-staging-copy.pte')), 'ZC_LEFTOVER_STAGING');
    expect(d.location).toBe('decode > chain 0 instruction 0');
    expect(d.message).toContain(kFqn(0));
  });

  it('ZC_CACHE_OVERLAP names both tensors', async () => {
    const found = only(await zeroCopyFindings(built('broken-cache-overlaps-activation.pte')), 'ZC_CACHE_OVERLAP');
    expect(found[0].location).toBe(`decode > ${kFqn(0)} (%0)`);
    expect(found[0].message).toMatch(/overlaps %\d+ \[/);
  });

  it('ZC_HOST_PLANNED: once per method, naming every cache', async () => {
    const found = only(await zeroCopyFindings(built('broken-host-planned-arena.pte')), 'ZC_HOST_PLANNED');
    expect(found.map((d) => d.method)).toEqual(['decode', 'prefill']);
    for (const f of cacheFqns(2)) expect(found[0].message).toContain(f);
  });

  it('ZC_ALIASED_INPUT_HOST: a staged program planned without device memory, once per aliased binding, and nothing that blames zero-copy', async () => {
    const found = await zeroCopyFindings(built('broken-staged-host-planned.pte'));
    const host = only(found, 'ZC_ALIASED_INPUT_HOST');
    // Every cache of both methods, each aliased on its engine.
    const n = cacheFqns(2).length;
    expect(host.map((d) => d.method).sort()).toEqual([...Array(n).fill('decode'), ...Array(n).fill('prefill')]);
    expect(host[0].message).toMatch(/is fed layers\.0\.attn\.k_cache \(%\d+\) itself, planned in host memory/);
    expect(codes(found).filter((c) => c !== 'ZC_ALIASED_INPUT_HOST')).toEqual([]);
  });

  it("ZC_SWAPPED_CACHE on each engine handed the other's caches", async () => {
    const found = only(await zeroCopyFindings(built('broken-swapped-caches.pte')), 'ZC_SWAPPED_CACHE');
    expect(new Set(found.map((d) => d.delegate))).toEqual(new Set([0, 1]));
    expect(bufferPlaceholder('layers.0.attn.k_cache')).toBe('b_layers_0_attn_k_cache');
  });

  it('ZC_UPDATE_MISSING names the buffer nothing updates', async () => {
    const [d] = only(await zeroCopyFindings(built('broken-lost-update.pte')), 'ZC_UPDATE_MISSING');
    expect(d.location).toBe(`decode > ${CONV_STATE_FQN} (%4)`);
  });
});

describe('each rule, from a shape the catalogue does not hold', () => {
  it('ZC_USER_ALIAS: a stamped engine with a user alias', async () => {
    const found = await zeroCopyFindings(userAlias(zeroCopy(DECODE)));
    expect(only(found, 'ZC_USER_ALIAS').map((d) => d.location)).toEqual(['decode > delegate 0 (TensorRTBackend) > binding output1']);
  });

  it('ZC_STAGED_CACHE: outputs elided and stamped, caches still staged (the update is lost)', async () => {
    const found = await zeroCopyFindings(stampedButStaged());
    expect(only(found, 'ZC_STAGED_CACHE').map((d) => d.location)).toEqual(
      cacheFqns(2).map((f) => `decode > delegate 0 (TensorRTBackend) > binding ${bufferPlaceholder(f)}`),
    );
  });

  it('ZC_NOT_A_BUFFER: an elided alias fed a method input', async () => {
    const found = await zeroCopyFindings(inputAtElidedAlias());
    expect(only(found, 'ZC_NOT_A_BUFFER').map((d) => d.location)).toEqual([
      `decode > delegate 0 (TensorRTBackend) > binding ${bufferPlaceholder(kFqn(0))}`,
    ]);
  });

  it('ZC_OTHER_READER: another backend reads a zero-copy cache', async () => {
    const [d] = only(await zeroCopyFindings(anotherBackendReads()), 'ZC_OTHER_READER');
    expect(d.message).toContain('delegate 1 (CudaBackend)');
  });

  it.each(['host-arena', 'other-device', 'cpu-tag'] as const)('ZC_CACHE_OFF_DEVICE: %s', async (how) => {
    const found = await zeroCopyFindings(cacheOffDevice(how));
    expect(only(found, 'ZC_CACHE_OFF_DEVICE').map((d) => d.location)).toEqual([`decode > ${kFqn(0)} (%0)`]);
    expect(codes(found)).not.toContain('ZC_HOST_PLANNED');
  });

  it('ZC_SPEC_COUNT: one cache at two aliased inputs', async () => {
    expect(codes(await zeroCopyFindings(oneCacheTwice()))).toContain('ZC_SPEC_COUNT');
  });

  it('ZC_UNSTAMPED_DIRECT: caches fed directly with the stamp gone (the buffer side alone)', async () => {
    const found = await zeroCopyFindings(unstamped());
    expect(only(found, 'ZC_UNSTAMPED_DIRECT')).toHaveLength(4);
    expect(codes(found).filter((c) => c !== 'ZC_UNSTAMPED_DIRECT' && c !== 'ZC_UPDATE_MISSING')).toEqual([]);
  });

  it('ZC_UNSTAMPED_DIRECT: a cache fed directly while its output is still returned', async () => {
    const { pte } = source(staged(DECODE));
    const plan = pte.program.executionPlan[0];
    const call = plan.chains[0].instructions.find((i) => i.type === 'DelegateCall')!;
    if (call.type === 'DelegateCall') call.args[0] = 0; // the buffer itself, not its staging copy
    expect(only(await zeroCopyFindings(pte), 'ZC_UNSTAMPED_DIRECT').map((d) => d.location)).toEqual([
      `decode > delegate 0 (TensorRTBackend) > binding ${bufferPlaceholder(kFqn(0))}`,
    ]);
  });

  it('ZC_UNSTAMPED_DIRECT: on a stamped delegate, a cache fed directly at an alias the stamp does not elide', async () => {
    const { pte } = source(built('broken-partial-elision.pte'));
    const plan = pte.program.executionPlan[0];
    const v1 = plan.values.findIndex((v) => v.type === 'Tensor' && v.tensor.extraTensorInfo?.fullyQualifiedName === vFqn(1));
    const call = plan.chains[0].instructions.find((i) => i.type === 'DelegateCall')!;
    if (call.type === 'DelegateCall') call.args[3] = v1;
    expect(only(await zeroCopyFindings(pte), 'ZC_UNSTAMPED_DIRECT').map((d) => d.location)).toEqual([
      `decode > delegate 0 (TensorRTBackend) > binding ${bufferPlaceholder(vFqn(1))}`,
    ]);
  });

  it('ZC_UPDATE_MISSING: a named buffer nothing updates; not when the method only reads state another method updates', async () => {
    expect(codes(await zeroCopyFindings(stateReadElsewhere(false)))).toEqual(['ZC_UPDATE_MISSING']);
    expect(await zeroCopyFindings(stateReadElsewhere(true))).toEqual([]);
  });

  it('ZC_UPDATE_TWICE: two write-backs of one buffer', async () => {
    const found = await zeroCopyFindings(twoWriteBacks());
    expect(codes(found)).toEqual(['ZC_UPDATE_TWICE']);
  });

  it('ZC_UPDATE_TWICE: a write-back into a zero-copy cache is both', async () => {
    expect(codes(await zeroCopyFindings(built('broken-writeback-into-zero-copy-cache.pte')))).toContain('ZC_UPDATE_TWICE');
  });

  it("ZC_WRITEBACK_CROSSED: staged updates written back into each other's buffers", async () => {
    const found = await zeroCopyFindings(crossedWriteBacks());
    expect(codes(found)).toEqual(['ZC_WRITEBACK_CROSSED', 'ZC_WRITEBACK_CROSSED']);
    expect(found[0].message).toContain(`updates the staging copy of ${kFqn(0)} (%0) but is written back into ${vFqn(0)} (%1)`);
  });
});

describe('rule 7: shared caches are a recorded decision', () => {
  it('two engines sharing a cache, rewritten with --share-cache: clean; without the record: ZC_SHARED_CACHE_UNDECLARED on both', async () => {
    const r = await rewriteSpec(twoEnginesOneCache(), { shareCache: true });
    expect(await zeroCopyFindings(r.pte)).toEqual([]);
    for (const d of r.pte.program.executionPlan[0].delegates) d.compileSpecs = d.compileSpecs.filter((c) => c.key !== 'shared_kv_cache');
    const found = await zeroCopyFindings(r.pte);
    expect(only(found, 'ZC_SHARED_CACHE_UNDECLARED').map((d) => d.delegate)).toEqual([0, 1]);
    expect(codes(found)).toContain('ZC_UPDATE_TWICE');
  });

  it('caches shared between methods without the record: ZC_SHARED_CACHE_UNDECLARED in each method', async () => {
    const r = await rewriteSpec(sharedLayout(staged()), { shareCache: true });
    expect(await zeroCopyFindings(r.pte)).toEqual([]);
    for (const p of r.pte.program.executionPlan)
      for (const d of p.delegates) d.compileSpecs = d.compileSpecs.filter((c) => c.key !== 'shared_kv_cache');
    const found = only(await zeroCopyFindings(r.pte), 'ZC_SHARED_CACHE_UNDECLARED');
    expect(found.map((d) => d.method)).toEqual([...Array(4).fill('decode'), ...Array(4).fill('prefill')]);
    expect(found[0].message).toContain('method prefill');
  });

  it('ZC_SHARED_CACHE_SPLIT: one method holds the shared cache on the device, the other on the host', async () => {
    const r = await rewriteSpec(sharedLayout(staged()), { shareCache: true });
    const prefill = r.pte.program.executionPlan[1];
    prefill.nonConstBufferDevice = prefill.nonConstBufferDevice.filter((e) => e.bufferIdx !== 3);
    const found = await zeroCopyFindings(r.pte);
    expect(only(found, 'ZC_SHARED_CACHE_SPLIT').map((d) => d.method)).toEqual([...Array(4).fill('decode'), ...Array(4).fill('prefill')]);
  });

  it('ZC_SHARED_CACHE_STALE: a record naming a cache nothing shares, or one the delegate does not update', async () => {
    const stale = only(await zeroCopyFindings(withSharedSpec(zeroCopy(DECODE), [kFqn(0), 'no.such.cache'])), 'ZC_SHARED_CACHE_STALE');
    expect(stale.map((d) => d.message)).toEqual([
      expect.stringContaining('no other delegate or method shares it'),
      expect.stringContaining('does not update in place'),
    ]);
  });

  it('SPEC_SHARED_KV_CACHE_INVALID: a record that is not a list of names', async () => {
    const found = await zeroCopyFindings(withSharedSpec(zeroCopy(DECODE), []));
    expect(codes(found)).toEqual(['SPEC_SHARED_KV_CACHE_INVALID']);
  });
});

describe('driven from both sides', () => {
  it('a stamp with no buffer behind it (delegate side) and a buffer with no stamp (buffer side) are both caught', async () => {
    expect(codes(await zeroCopyFindings(stampedButStaged()))).toContain('ZC_STAGED_CACHE');
    expect(codes(await zeroCopyFindings(unstamped()))).toContain('ZC_UNSTAMPED_DIRECT');
  });

  it('a method whose only record is the stamp is still checked (the other method clean)', async () => {
    const spec = zeroCopy();
    const prefill = spec.methods.find((m) => m.name === 'prefill')!;
    const st = stampedButStaged().methods[0];
    const mixed = { methods: [st, prefill] };
    const found = await zeroCopyFindings(mixed);
    expect(new Set(found.map((d) => d.method))).toEqual(new Set(['decode']));
  });
});

describe('--zero-copy-kv (requireZeroCopyKv)', () => {
  it('refuses every staged kv_cache_update alias, per delegate and method', async () => {
    const found = await zeroCopyFindings(staged(), { requireZeroCopyKv: true });
    expect(only(found, 'ZC_NOT_ZERO_COPY').map((d) => d.location)).toEqual([
      'decode > delegate 0 (TensorRTBackend)',
      'prefill > delegate 0 (TensorRTBackend)',
    ]);
    expect(codes(await zeroCopyFindings(staged()))).toEqual([]);
  });

  it('a zero_copy_kv stamp that does not parse is not called staged', async () => {
    const { pte } = source(staged(DECODE));
    const d = pte.program.executionPlan[0].delegates[0];
    d.compileSpecs = setSpec(d.compileSpecs, 'zero_copy_kv', new TextEncoder().encode('not json'));
    const [found] = only(await zeroCopyFindings(pte, { requireZeroCopyKv: true }), 'ZC_NOT_ZERO_COPY');
    expect(found.message).toContain('does not parse');
    expect(found.message).not.toContain('staged');
  });

  it('accepts zero-copy programs, and a copy-back engine beside them', async () => {
    for (const f of ['kv-decode-zero-copy.pte', 'mixed-conv-state-split-zero-copy.pte', 'mixed-conv-state-one-delegate-zero-copy.pte']) {
      expect(await zeroCopyFindings(built(f), { requireZeroCopyKv: true }), f).toEqual([]);
    }
  });

  it('warns when there is no cache to require it of', async () => {
    const found = await zeroCopyFindings(built('trt-single.pte'), { requireZeroCopyKv: true });
    expect(found.map((d) => [d.severity, d.code])).toEqual([['warning', 'ZC_NO_KV_CACHE']]);
  });
});

describe('the code table', () => {
  it('every code has a rule, a fixture and a hint, and the check emits only these codes', async () => {
    for (const c of ZERO_COPY_CODES) expect(ZERO_COPY_RULES[c].rule.length).toBeGreaterThan(0);
    const { pte } = source(built('broken-swapped-caches.pte'));
    const again = pteFromBytes(encodePte(pte.program, source(built('broken-swapped-caches.pte')).built.segments));
    const { ctx } = await buildCheckContext(again);
    for (const d of checkZeroCopy(ctx)) expect(ZERO_COPY_CODES).toContain(d.code);
  });
});
