// The refusals of src/checks/runtime-program.ts and kernel-arguments.ts, in
// memory: each code tripped by one change to a sound program (the shapes of
// test/helpers/agreement-shapes.ts, which check-runner-agreement.test.ts also
// runs through the runtime), nothing on the sound fixtures, and the cases
// each rule lets through because the runtime does.
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/examples/builder.js';
import { CATALOGUE, catalogueEntry } from '../src/examples/catalogue.js';
import { runChecks } from '../src/checks/run.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { KERNEL_ARGUMENT_CODES } from '../src/checks/kernel-arguments.js';
import { checkRuntimeRefusals } from '../src/checks/runtime-refusals.js';
import { RUNTIME_PROGRAM_CODES } from '../src/checks/runtime-program.js';
import { TensorShapeDynamism, splitMemoryOffset, type ExecutionPlan } from '../src/pte/model.js';
import { encodePte, pteFromBytes } from './helpers/memory-pte.js';
import { SHAPES } from './helpers/agreement-shapes.js';

const CODES = new Set<string>([...RUNTIME_PROGRAM_CODES, ...KERNEL_ARGUMENT_CODES]);
const codesOf = (bytes: Uint8Array) => checkRuntimeRefusals(pteFromBytes(bytes)).filter((d) => CODES.has(d.code));

function stagedDecode(edit: (plan: ExecutionPlan) => void): Uint8Array {
  const built = buildProgram(kvDecoder({ mode: 'staged' }));
  edit(built.program.executionPlan.find((p) => p.name === 'decode')!);
  return encodePte(built.program, built.segments);
}

const copyCall = (plan: ExecutionPlan) => {
  const k = plan.chains[0].instructions.find((i) => i.type === 'KernelCall' && plan.operators[i.opIndex].name === 'aten::copy_');
  if (k?.type !== 'KernelCall') throw new Error('no copy_');
  return k;
};
const tensorOf = (plan: ExecutionPlan, i: number) => {
  const v = plan.values[i];
  if (v.type !== 'Tensor') throw new Error('not a tensor');
  return v.tensor;
};

describe('the runtime-program and kernel-argument refusals', () => {
  it('find nothing in any sound fixture', () => {
    for (const e of CATALOGUE.filter((c) => !c.file.startsWith('broken-') && !c.file.includes('-seed-'))) {
      const built = buildProgram(e.build());
      expect(codesOf(encodePte(built.program, built.segments)).map((d) => `${e.file}: ${d.code}: ${d.message}`)).toEqual([]);
    }
  });

  const tripping = SHAPES.filter((s) => s.check !== null && CODES.has(s.check));
  it.each(tripping.map((s) => [s.check!, s.row, s] as const))('%s: %s', (code, _row, shape) => {
    const found = codesOf(shape.build()).filter((d) => d.code === code);
    expect(found.length).toBeGreaterThan(0);
    for (const d of found) {
      expect(d.severity).toBe('error');
      expect(d.hint.length).toBeGreaterThan(10);
      expect(d.message).not.toMatch(/\n/);
    }
  });

  it('STRUCT_NO_METHODS: a program without execution plans', () => {
    const built = buildProgram(kvDecoder({ mode: 'staged' }));
    built.program.executionPlan = [];
    expect(codesOf(encodePte(built.program, built.segments)).map((d) => d.code)).toContain('STRUCT_NO_METHODS');
  });

  it('every code is tripped by a case here', () => {
    expect(new Set([...tripping.map((s) => s.check), 'STRUCT_NO_METHODS'])).toEqual(CODES);
  });

  it('a write-back into a zero-copy cache is the zero-copy rule\u2019s one finding, not also STRUCT_KERNEL_DEVICE_MEMORY', async () => {
    const built = buildProgram(catalogueEntry('broken-writeback-into-zero-copy-cache.pte').build());
    const codes = (await runChecks(pteFromBytes(encodePte(built.program, built.segments)))).diagnostics.map((d) => d.code);
    expect(codes).toContain('ZC_WRITEBACK_INTO_CACHE');
    expect(codes).not.toContain('STRUCT_KERNEL_DEVICE_MEMORY');
  });

  it('lets through what the runtime lets through', () => {
    // copy_ onto the very same bytes: memcpy with dst == src is passed by the kernel and the sanitizers.
    const same = stagedDecode((plan) => {
      const k = copyCall(plan);
      Object.assign(tensorOf(plan, k.args[1]).allocationInfo!, tensorOf(plan, k.args[0]).allocationInfo!);
    });
    expect(codesOf(same).map((d) => d.code)).not.toContain('STRUCT_COPY_OVERLAP');
    // Ranges that touch without overlapping.
    const touching = stagedDecode((plan) => {
      const k = copyCall(plan);
      const self = tensorOf(plan, k.args[0]);
      Object.assign(tensorOf(plan, k.args[1]).allocationInfo!, { memoryId: self.allocationInfo!.memoryId }, splitMemoryOffset(256n));
    });
    expect(codesOf(touching).map((d) => d.code)).not.toContain('STRUCT_COPY_OVERLAP');
    // A bounded dynamic out of other sizes that can hold self: resize_tensor allows it.
    const dynamic = stagedDecode((plan) => {
      const k = plan.chains[0].instructions.find((i) => i.type === 'KernelCall' && plan.operators[i.opIndex].name === 'et_copy::_h2d_copy');
      if (k?.type !== 'KernelCall') throw new Error('no _h2d_copy');
      const out = tensorOf(plan, k.args[1]);
      out.shapeDynamism = TensorShapeDynamism.DYNAMIC_BOUND;
      out.sizes = out.sizes.map((s, i) => (i === 0 ? s * 2 : s));
    });
    expect(codesOf(dynamic).map((d) => d.code)).not.toContain('STRUCT_COPY_SHAPE');
  });
});
