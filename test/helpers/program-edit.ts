// Names for editing a built fixture program in place before it is encoded:
// a test that breaks one field reaches the tensor, value index or kernel
// call by its name in the fixture spec rather than by a position that moves
// whenever the fixture changes. Used by the structural and runtime-refusal
// check tests and by the check/runner agreement shapes.
import type { BuiltProgram } from '../../src/examples/builder.js';
import { trtSingle } from '../../src/examples/programs.js';
import type { ProgramSpec } from '../../src/examples/spec.js';
import type { ExecutionPlan, Instruction, Program, Tensor } from '../../src/pte/model.js';

export type KernelCall = Extract<Instruction, { type: 'KernelCall' }>;

export interface ProgramEdit {
  program: Program;
  /** The execution plan of the method being edited. */
  plan: ExecutionPlan;
  built: BuiltProgram;
  /** The index in plan.values of the value the spec names `name`. */
  index(name: string): number;
  /** The tensor the spec names `name`. */
  tensor(name: string): Tensor;
  /** The `nth` KernelCall (from 0) of the first chain that calls operator `op`. */
  kernel(op: string, nth?: number): KernelCall;
}

export function programEdit(program: Program, built: BuiltProgram, method = 'forward'): ProgramEdit {
  const plan = program.executionPlan.find((e) => e.name === method);
  if (!plan) throw new Error(`no method ${method}`);
  const values = built.index.get(method)!.values;
  const index = (name: string) => {
    const i = values.get(name);
    if (i === undefined) throw new Error(`no value ${name}`);
    return i;
  };
  return {
    program,
    plan,
    built,
    index,
    tensor: (name) => {
      const v = plan.values[index(name)];
      if (v.type !== 'Tensor') throw new Error(`${name} is not a tensor`);
      return v.tensor;
    },
    kernel: (op, nth = 0) => {
      const k = plan.chains[0].instructions.filter((i) => i.type === 'KernelCall' && plan.operators[i.opIndex].name === op)[nth];
      if (!k || k.type !== 'KernelCall') throw new Error(`no ${op} call`);
      return k;
    },
  };
}

/** trt-single (x -> _h2d_copy -> engine -> _d2h_copy -> y) with one constant tensor w. */
export function trtSingleWithConstant(): ProgramSpec {
  const spec = trtSingle();
  spec.methods[0].tensors.push({ name: 'w', dtype: 'float32', shape: [4], data: new Uint8Array(16).fill(7) });
  return spec;
}
