// `trtx diff` on rewrites that change one thing (a budget, a moved
// instruction, an added method): the report holds that change and nothing else.

import { describe, expect, it } from 'vitest';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { applyBudget } from '../src/passes/budget.js';
import { writeFromSource } from '../src/pte/copy.js';
import { withPte } from '../src/pte/open.js';
import { writePte } from '../src/pte/write.js';
import { diffFiles, diffWorkspace, method, rewrite } from './helpers/diff-files.js';

const GiB = 1n << 30n;
const { path, catalogue } = diffWorkspace();

describe('rewrites that change one thing', () => {
  it('a budget rewrite on one method is one spec change and nothing else', async () => {
    const a = path('budget-4.pte');
    await writeFixture(a, kvDecoder({ mode: 'zero-copy', budget: 4n * GiB }));
    const b = await rewrite(a, path('budget-8-decode.pte'), (p) => applyBudget(p, { budget: 8n * GiB, method: 'decode' }));
    const r = await diffFiles(a, b);
    expect(r.changes).toBe(1);
    expect(r.header).toEqual([]);
    expect(r.segments).toEqual({ count: null, sizes: [] });
    expect(r.methods).toHaveLength(1);
    const m = r.methods[0];
    expect([m.name, m.io, m.instructions, m.arenas, m.tensors, m.staging]).toEqual(['decode', [], [], [], [], null]);
    expect(m.delegates).toHaveLength(1);
    expect(m.delegates[0]).toMatchObject({ index: 0, args: [], blob: [], calls: null });
    expect(m.delegates[0].compile_specs).toEqual([
      {
        key: 'weight_streaming_budget',
        change: 'changed',
        before: { size: 10, raw: '"4294967296"', decoded: { budget_bytes: '4294967296', budget_iec: '4 GiB' }, error: null },
        after: { size: 10, raw: '"8589934592"', decoded: { budget_bytes: '8589934592', budget_iec: '8 GiB' }, error: null },
      },
    ]);
  });

  it('an instruction that changed place is one move', async () => {
    const a = await catalogue('kv-decode-zero-copy.pte');
    // In zero-copy decode the two input staging copies come first; swap them.
    const b = await rewrite(a, path('swapped.pte'), (p) => {
      const ins = p.executionPlan.find((x) => x.name === 'decode')!.chains[0].instructions;
      [ins[0], ins[1]] = [ins[1], ins[0]];
    });
    const r = await diffFiles(a, b);
    expect(r.changes).toBe(1);
    const [c] = method(r, 'decode').instructions;
    expect(c).toMatchObject({ change: 'moved', op: 'et_copy::_h2d_copy.out' });
    expect([c.before_index, c.after_index].sort()).toEqual([0, 1]);
  });

  it('a method only one program has is added or removed, and --method narrows the report', async () => {
    const a = path('decode-only.pte');
    await writeFixture(a, kvDecoder({ mode: 'staged', methods: ['decode'] }));
    const b = await catalogue('kv-decode-staged.pte');
    const r = await diffFiles(a, b);
    expect(r.methods.map((m) => [m.name, m.change])).toEqual([['prefill', 'added']]);
    // prefill's engine is a segment of its own (after the constant segment and decode's engine).
    expect(r.segments.count).toEqual({ before: 2, after: 3 });
    expect(r.segments.sizes).toEqual([{ index: 2, before: null, after: expect.any(Number) }]);
    expect((await diffFiles(b, a)).methods.map((m) => [m.name, m.change])).toEqual([['prefill', 'removed']]);
    expect((await diffFiles(a, b, 'decode')).equivalent).toBe(true);
    await expect(diffFiles(a, b, 'nope')).rejects.toMatchObject({ code: 'DIFF_METHOD_UNKNOWN', kind: 'usage' });
  });

  it('a call whose arity no longer matches its blob is compared by position', async () => {
    // The staged decode call with its last output dropped: neither staged
    // nor zero-copy arity, so both sides are named by position and only the
    // tail differs.
    const a = await catalogue('kv-decode-staged.pte');
    const b = path('short-call.pte');
    const built = buildProgram(catalogueEntry('kv-decode-staged.pte').build());
    const call = built.program.executionPlan
      .find((x) => x.name === 'decode')!
      .chains[0].instructions.find((i) => i.type === 'DelegateCall')!;
    if (call.type !== 'DelegateCall') throw new Error('unreachable');
    call.args = call.args.slice(0, -1);
    await writePte(b, built.program, built.segments, { alignment: 4096 });
    const d = method(await diffFiles(a, b), 'decode').delegates[0];
    expect(d.args).toEqual([
      {
        call: 0,
        change: 'removed',
        name: `arg${call.args.length}`,
        before: expect.stringMatching(/^float\[1,16\]@a2\(cuda:0\)$/),
        after: null,
      },
    ]);
  });

  it('a changed input shape is a signature change (and changes the staging it feeds)', async () => {
    const a = await catalogue('kv-decode-zero-copy.pte');
    const b = await rewrite(a, path('wider-input.pte'), (p) => {
      const plan = p.executionPlan.find((x) => x.name === 'decode')!;
      const x = plan.values[plan.inputs[0]];
      if (x.type === 'Tensor') x.tensor.sizes = [1, 1, 16];
    });
    const m = method(await diffFiles(a, b), 'decode');
    expect(m.io).toEqual([{ role: 'input', index: 0, before: 'float[1,1,8]@a1(cpu)', after: 'float[1,1,16]@a1(cpu)' }]);
    expect(m.staging!.after.host_to_device_bytes - m.staging!.before.host_to_device_bytes).toBe(8 * 4);
    expect(m.instructions).toEqual([]);
  });

  it('another segment alignment is a header change and nothing else', async () => {
    const a = await catalogue('kv-decode-zero-copy.pte');
    const b = path('aligned-16k.pte');
    await withPte(a, (pte) => writeFromSource(pte, pte.program, b, { alignment: 16384 }));
    const r = await diffFiles(a, b);
    expect(r.header).toEqual([{ field: 'segment_alignment', before: 4096, after: 16384 }]);
    expect(r.changes).toBe(1);
  });

  it('initial cache state is a program change: a mutable data segment', async () => {
    const a = await catalogue('kv-decode-staged.pte');
    const b = path('with-initial-state.pte');
    await writeFixture(b, kvDecoder({ mode: 'staged', cacheInitialState: true }));
    const r = await diffFiles(a, b);
    expect(r.program).toEqual([{ field: 'mutable_data_segments', before: 0, after: 1 }]);
    expect(r.segments.count).toEqual({ before: 3, after: 4 });
  });

  it('a changed blob shows its metadata field', async () => {
    const a = await catalogue('kv-decode-staged.pte');
    const b = path('hardware-compatible.pte');
    const spec = catalogueEntry('kv-decode-staged.pte').build();
    const blob = spec.methods.find((m) => m.name === 'decode')!.delegates[0].blob;
    if (blob.kind !== 'tensorrt') throw new Error('unreachable');
    blob.metadata = { ...blob.metadata, hardware_compatible: true };
    await writeFixture(b, spec);
    const d = method(await diffFiles(a, b), 'decode').delegates[0];
    expect(d.blob).toContainEqual({ field: 'hardware_compatible', before: false, after: true });
    // The processed data's size may or may not move with the metadata's length.
    expect(d.blob.filter((f) => !f.field.startsWith('data.'))).toEqual([{ field: 'hardware_compatible', before: false, after: true }]);
  });

  it('another backend at the same delegate index is a removed and an added delegate', async () => {
    const a = await catalogue('kv-decode-zero-copy.pte');
    const b = await rewrite(a, path('other-backend.pte'), (p) => {
      p.executionPlan.find((x) => x.name === 'decode')!.delegates[0].id = 'OtherBackend';
    });
    const m = method(await diffFiles(a, b), 'decode');
    expect(m.delegates.map((d) => [d.index, d.backend_id, d.change, d.calls])).toEqual([
      [0, 'TensorRTBackend', 'removed', { before: 1, after: 0 }],
      [0, 'OtherBackend', 'added', { before: 0, after: 1 }],
    ]);
    const calls = m.instructions.filter((c) => c.kind === 'DelegateCall').map((c) => [c.change, c.text]);
    expect(calls).toEqual([
      ['removed', 'call delegate0 (TensorRTBackend)'],
      ['added', 'call delegate0 (OtherBackend)'],
    ]);
  });
});
