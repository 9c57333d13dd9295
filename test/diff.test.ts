// `trtx diff` as a library: empty for the same program (byte-identical, a
// canonical re-encoding, values renumbered), and for a rewrite exactly what
// the rewrite did: staged -> zero-copy KV (rewrites that change one thing:
// test/diff-changes.test.ts).

import { copyFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { cacheBytes, cacheFqns, KV_SMALL, kvDecoder } from '../src/examples/kv-decoder.js';
import type { DiffReport } from '../src/diff/report.js';
import type { ExecutionPlan, Program } from '../src/pte/model.js';
import { withPte } from '../src/pte/open.js';
import { corpusPath, corpusPrograms } from './helpers/corpus.js';
import { decodeBlobAliases, diffFiles, diffWorkspace, expectEmpty, method, rewrite } from './helpers/diff-files.js';

const GiB = 1n << 30n;
const { path, catalogue } = diffWorkspace();

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
