// `trtx diff` as a library: empty for the same program (byte-identical, a
// canonical re-encoding, values renumbered), and for a rewrite exactly what
// the rewrite did: staged -> zero-copy KV, a budget change, a moved
// instruction, an added method.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { cacheBytes, cacheFqns, KV_SMALL, kvDecoder } from '../src/examples/kv-decoder.js';
import { diffPte } from '../src/diff/diff.js';
import type { DiffReport, MethodDiff } from '../src/diff/report.js';
import { applyBudget } from '../src/passes/budget.js';
import { writeFromSource } from '../src/pte/copy.js';
import type { ExecutionPlan, Program } from '../src/pte/model.js';
import { openPte, withPte } from '../src/pte/open.js';
import { writePte } from '../src/pte/write.js';
import { delegatesOf, readDelegateBlob } from '../src/tensorrt/delegates.js';
import { corpusPath, corpusPrograms } from './helpers/corpus.js';

const dir = mkdtempSync(join(tmpdir(), 'trtx-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GiB = 1n << 30n;
const path = (name: string) => join(dir, name);

async function diffFiles(a: string, b: string, method?: string): Promise<DiffReport> {
  return withPte(a, (pa) => withPte(b, (pb) => diffPte(pa, pb, { method })));
}

/** Writes `file` of the catalogue under the test directory. */
async function catalogue(file: string): Promise<string> {
  await writeFixture(path(file), catalogueEntry(file).build());
  return path(file);
}

/** Rewrites `src` to `dst` after `edit` changed its decoded program. */
async function rewrite(src: string, dst: string, edit: (p: Program) => void): Promise<string> {
  const pte = await openPte(src);
  try {
    edit(pte.program);
    await writeFromSource(pte, pte.program, dst);
  } finally {
    await pte.close();
  }
  return dst;
}

function expectEmpty(r: DiffReport): void {
  expect(r.header).toEqual([]);
  expect(r.program).toEqual([]);
  expect(r.segments).toEqual({ count: null, sizes: [] });
  expect(r.methods).toEqual([]);
  expect(r.changes).toBe(0);
  expect(r.equivalent).toBe(true);
}

/** The aliased outputs of a method's first delegate, and the inputs they alias, as its blob says. */
async function decodeBlobAliases(file: string, name: string): Promise<{ aliasedOutputs: string[]; aliasedInputs: string[] }> {
  return withPte(file, async (pte) => {
    const ref = delegatesOf(pte).find((d) => d.plan.name === name && d.delegateIndex === 0)!;
    const aliased = (await readDelegateBlob(pte, ref)).metadata.aliased_io;
    return { aliasedOutputs: aliased.map((x) => x.output), aliasedInputs: aliased.map((x) => x.input) };
  });
}

const method = (r: DiffReport, name: string): MethodDiff => {
  const m = r.methods.find((x) => x.name === name);
  if (!m) throw new Error(`no method ${name} in the diff`);
  return m;
};

describe('programs that mean the same', () => {
  it('byte-identical files give an empty diff', async () => {
    const a = await catalogue('kv-decode-staged.pte');
    copyFileSync(a, path('staged-copy.pte'));
    expectEmpty(await diffFiles(a, path('staged-copy.pte')));
  });

  it('a canonical rewrite of every corpus program gives an empty diff', async () => {
    for (const name of corpusPrograms()) {
      const out = await rewrite(corpusPath(name), path(`${name}.canonical.pte`), () => {});
      const r = await diffFiles(corpusPath(name), out);
      expect({ name, ...r }).toMatchObject({ name, equivalent: true, changes: 0, methods: [], header: [], program: [] });
    }
  });

  it('two different corpus programs do not (the empty result above is not vacuous)', async () => {
    const r = await diffFiles(corpusPath('add'), corpusPath('keyword-spotting-cortex-m'));
    expect(r.equivalent).toBe(false);
    expect(r.methods.some((m) => m.instructions.length > 0)).toBe(true);
  });

  it('renumbering every value (an unused value prepended) gives an empty diff', async () => {
    const a = await catalogue('kv-decode-zero-copy.pte');
    const b = await rewrite(a, path('renumbered.pte'), (p) => p.executionPlan.forEach(prependUnusedValue));
    // The rewrite really renumbered: the first delegate argument's index moved.
    const first = async (f: string) =>
      withPte(f, (x) => x.program.executionPlan[0].chains[0].instructions.find((i) => i.type === 'DelegateCall'));
    expect(await first(a)).not.toEqual(await first(b));
    expectEmpty(await diffFiles(a, b));
  });

  it('a budget written with a leading zero is the same budget', async () => {
    const a = path('budget-8.pte');
    await writeFixture(a, kvDecoder({ mode: 'zero-copy', budget: 8n * GiB }));
    const b = await rewrite(a, path('budget-08.pte'), (p) => {
      for (const plan of p.executionPlan) {
        for (const d of plan.delegates) {
          for (const s of d.compileSpecs) if (s.key === 'weight_streaming_budget') s.value = new TextEncoder().encode('08589934592');
        }
      }
    });
    expectEmpty(await diffFiles(a, b));
  });
});

/** Shifts every value index of `plan` by one, with an Int nobody reads at index 0. */
function prependUnusedValue(plan: ExecutionPlan): void {
  const up = (i: number) => i + 1;
  plan.values = [{ type: 'Int', intVal: 7n }, ...plan.values];
  for (const v of plan.values) {
    if (v.type === 'TensorList' || v.type === 'OptionalTensorList') v.items = v.items.map((i) => (i < 0 ? i : i + 1));
    if (v.type === 'IntList') v.items = v.items.map((i) => i + 1n);
  }
  plan.inputs = plan.inputs.map(up);
  plan.outputs = plan.outputs.map(up);
  for (const c of plan.chains) {
    c.inputs = c.inputs.map(up);
    c.outputs = c.outputs.map(up);
    c.instructions = c.instructions.map((ins) => {
      switch (ins.type) {
        case 'KernelCall':
        case 'DelegateCall':
          return { ...ins, args: ins.args.map(up) };
        case 'MoveCall':
          return { ...ins, moveFrom: up(ins.moveFrom), moveTo: up(ins.moveTo) };
        case 'JumpFalseCall':
          return { ...ins, condValueIndex: up(ins.condValueIndex) };
        case 'FreeCall':
          return { ...ins, valueIndex: up(ins.valueIndex) };
        default:
          return ins;
      }
    });
  }
}

describe('kv-decode-staged.pte -> kv-decode-zero-copy.pte', () => {
  let r: DiffReport;
  let staged: Program;
  let zeroCopy: Program;
  const caches = cacheFqns(KV_SMALL.layers);

  beforeAll(async () => {
    const a = await catalogue('kv-decode-staged.pte');
    const b = await catalogue('kv-decode-zero-copy.pte');
    r = await diffFiles(a, b);
    staged = buildProgram(catalogueEntry('kv-decode-staged.pte').build()).program;
    zeroCopy = buildProgram(catalogueEntry('kv-decode-zero-copy.pte').build()).program;
  });

  it('changes the methods only: header, program tables and segments are the same', () => {
    expect(r.header).toEqual([]);
    expect(r.program).toEqual([]);
    expect(r.segments).toEqual({ count: null, sizes: [] });
    expect(r.methods.map((m) => [m.name, m.change])).toEqual([
      ['decode', 'changed'],
      ['prefill', 'changed'],
    ]);
  });

  for (const name of ['decode', 'prefill']) {
    describe(name, () => {
      it('removes exactly the cache staging copies, their copies back and the write-backs', async () => {
        const m = method(r, name);
        const { aliasedOutputs } = await decodeBlobAliases(path('kv-decode-staged.pte'), name);
        expect(m.instructions.every((c) => c.change === 'removed' && c.kind === 'KernelCall')).toBe(true);
        const texts = (op: string) => m.instructions.filter((c) => c.op === op).map((c) => c.text);
        expect(texts('et_copy::_h2d_copy.out')).toEqual(
          caches.map((f) => expect.stringMatching(new RegExp(`^et_copy::_h2d_copy\\.out\\(${f.replace(/\./g, '\\.')}, `))),
        );
        expect(texts('et_copy::_d2h_copy.out')).toEqual(aliasedOutputs.map((o) => expect.stringContaining(`(delegate0.${o}, `)));
        expect(texts('aten::copy_')).toEqual(
          caches.map((f) => expect.stringMatching(new RegExp(`^aten::copy_\\(${f.replace(/\./g, '\\.')}, `))),
        );
        expect(m.instructions).toHaveLength(3 * caches.length);
      });

      it('removes the aliased outputs from the delegate arguments and binds the caches themselves', async () => {
        const m = method(r, name);
        const { aliasedOutputs, aliasedInputs } = await decodeBlobAliases(path('kv-decode-staged.pte'), name);
        expect(m.delegates).toHaveLength(1);
        const d = m.delegates[0];
        expect([d.index, d.backend_id, d.change, d.calls]).toEqual([0, 'TensorRTBackend', 'changed', null]);
        expect(d.args.filter((x) => x.change === 'removed').map((x) => x.name)).toEqual(aliasedOutputs);
        expect(d.args.filter((x) => x.change === 'added')).toEqual([]);
        const rebound = d.args.filter((x) => x.change === 'rebound');
        expect(rebound.map((x) => x.name)).toEqual(aliasedInputs);
        rebound.forEach((x, i) => expect(x.after).toMatch(new RegExp(`^${caches[i].replace(/\./g, '\\.')} .*\\(cuda:0\\)$`)));
        expect(d.blob).toEqual([]);
      });

      it('adds zero_copy_kv, decoded, and changes no other spec', async () => {
        const { aliasedOutputs } = await decodeBlobAliases(path('kv-decode-staged.pte'), name);
        const specs = method(r, name).delegates[0].compile_specs;
        expect(specs).toHaveLength(1);
        expect(specs[0]).toMatchObject({
          key: 'zero_copy_kv',
          change: 'added',
          before: null,
          after: { decoded: { zero_copy_kv: aliasedOutputs }, error: null },
        });
      });

      it('moves every cache from the host arena to the CUDA arena', () => {
        const m = method(r, name);
        const plan = (p: Program) => p.executionPlan.find((x) => x.name === name)!;
        expect(m.tensors.map((t) => t.name)).toEqual(caches);
        for (const t of m.tensors) {
          expect(t).toMatchObject({ change: 'changed', moved: true, retyped: false });
          expect(t.before).toMatchObject({
            arena: 1,
            device: 'cpu',
            tagged_device: 'cpu',
            dtype: 'float',
            shape: [1, KV_SMALL.heads, KV_SMALL.maxSeq, KV_SMALL.headDim],
          });
          expect(t.after).toMatchObject({ arena: 2, device: 'cuda:0', tagged_device: 'cuda:0' });
        }
        // Offsets are the planned ones of each program.
        const offsetOf = (p: Program, fqn: string) => {
          const v = plan(p).values.find((x) => x.type === 'Tensor' && x.tensor.extraTensorInfo?.fullyQualifiedName === fqn);
          return v?.type === 'Tensor' ? v.tensor.allocationInfo?.memoryOffsetLow : undefined;
        };
        expect(m.tensors.map((t) => [t.before!.offset, t.after!.offset])).toEqual(
          caches.map((f) => [offsetOf(staged, f), offsetOf(zeroCopy, f)]),
        );
      });

      it('reports the arena sizes of both programs where they differ', () => {
        const m = method(r, name);
        const sizes = (p: Program) => p.executionPlan.find((x) => x.name === name)!.nonConstBufferSizes.map(Number);
        const [sa, sb] = [sizes(staged), sizes(zeroCopy)];
        const changed = sa.map((_, i) => i).filter((i) => sa[i] !== sb[i]);
        expect(changed.length).toBeGreaterThan(0);
        expect(m.arenas).toEqual(
          changed.map((i) => ({
            index: i,
            before: { size: sa[i], device: i === 1 ? 'cpu' : 'cuda:0' },
            after: { size: sb[i], device: i === 1 ? 'cpu' : 'cuda:0' },
          })),
        );
      });

      it('reports the staging traffic per execution before and after: every cache once each way less', () => {
        const s = method(r, name).staging!;
        expect(s).not.toBeNull();
        expect(s.before.host_to_device_bytes - s.after.host_to_device_bytes).toBe(Number(cacheBytes(KV_SMALL)));
        expect(s.before.device_to_host_bytes - s.after.device_to_host_bytes).toBe(Number(cacheBytes(KV_SMALL)));
        expect(s.before.copies - s.after.copies).toBe(2 * caches.length);
      });

      it('changes nothing else', () => {
        const m = method(r, name);
        expect(m.io).toEqual([]);
        const perDelegate = 2 * caches.length + 1; // removed + rebound args, one spec
        expect(r.changes).toBe(2 * (3 * caches.length + perDelegate + m.arenas.length + caches.length + 1));
      });
    });
  }
});

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
