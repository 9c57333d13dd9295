// The method surgery the zero-copy rewrite does (src/passes/zero-copy-edit.ts):
// dropping instructions keeps jumps and stack traces in step, dropping values
// renumbers every index that names one, dropping operators renumbers calls.
import { describe, expect, it } from 'vitest';
import type { EValue, ExecutionPlan, Instruction } from '../src/pte/model.js';
import { removeDeadValues, removeInstructions, removeUnusedOperators } from '../src/passes/zero-copy-edit.js';

const tensor = (): EValue => ({
  type: 'Tensor',
  tensor: {
    scalarType: 6,
    storageOffset: 0,
    sizes: [1],
    dimOrder: [0],
    requiresGrad: false,
    dataBufferIdx: 0,
    allocationInfo: null,
    layout: 0,
    shapeDynamism: 0,
    extraTensorInfo: null,
  },
});

function plan(instructions: Instruction[], values: EValue[]): ExecutionPlan {
  return {
    name: 'm',
    containerMetaType: null,
    values,
    inputs: [0],
    outputs: [5],
    chains: [
      {
        inputs: [0],
        outputs: [5],
        instructions,
        stacktrace: instructions.map((_, i) => ({ items: [{ filename: `f${i}`, lineno: i, name: null, context: null }] })),
      },
    ],
    operators: [
      { name: 'a', overload: '' },
      { name: 'b', overload: '' },
      { name: 'c', overload: '' },
    ],
    delegates: [],
    nonConstBufferSizes: [0n],
    nonConstBufferDevice: [],
  };
}

describe('removeInstructions', () => {
  it('re-targets jumps past removed instructions and keeps the stack traces with their instructions', () => {
    const p = plan(
      [
        { type: 'JumpFalseCall', condValueIndex: 0, destinationInstruction: 2 },
        { type: 'KernelCall', opIndex: 0, args: [1] },
        { type: 'KernelCall', opIndex: 1, args: [2] },
        { type: 'JumpFalseCall', condValueIndex: 0, destinationInstruction: 4 },
        { type: 'KernelCall', opIndex: 2, args: [3] },
      ],
      [tensor(), tensor(), tensor(), tensor(), tensor(), tensor()],
    );
    removeInstructions(p, new Set(['0:1', '0:2']));
    const c = p.chains[0];
    expect(c.instructions).toEqual([
      { type: 'JumpFalseCall', condValueIndex: 0, destinationInstruction: 1 },
      { type: 'JumpFalseCall', condValueIndex: 0, destinationInstruction: 2 },
      { type: 'KernelCall', opIndex: 2, args: [3] },
    ]);
    expect(c.stacktrace.map((f) => f.items[0].filename)).toEqual(['f0', 'f3', 'f4']);
  });
});

describe('removeDeadValues', () => {
  it('drops only unreferenced candidates and renumbers every reference, lists included', () => {
    const values: EValue[] = [
      tensor(),
      tensor(),
      tensor(),
      tensor(),
      { type: 'TensorList', items: [0, 3] },
      tensor(),
      { type: 'OptionalTensorList', items: [-1, 5] },
    ];
    const p = plan(
      [
        { type: 'KernelCall', opIndex: 0, args: [0, 4, 6, 5] },
        { type: 'MoveCall', moveFrom: 3, moveTo: 5 },
        { type: 'FreeCall', valueIndex: 3 },
      ],
      values,
    );
    const map = removeDeadValues(p, [1, 2, 3]);
    expect([...map]).toEqual([0, -1, -1, 1, 2, 3, 4]);
    expect(p.values.map((v) => v.type)).toEqual(['Tensor', 'Tensor', 'TensorList', 'Tensor', 'OptionalTensorList']);
    expect(p.values[2]).toMatchObject({ items: [0, 1] });
    expect(p.values[4]).toMatchObject({ items: [-1, 3] });
    expect(p.chains[0].instructions).toEqual([
      { type: 'KernelCall', opIndex: 0, args: [0, 2, 4, 3] },
      { type: 'MoveCall', moveFrom: 1, moveTo: 3 },
      { type: 'FreeCall', valueIndex: 1 },
    ]);
    expect([p.inputs, p.outputs, p.chains[0].inputs, p.chains[0].outputs]).toEqual([[0], [3], [0], [3]]);
  });
});

describe('removeUnusedOperators', () => {
  it('drops candidates no call uses and renumbers the calls', () => {
    const p = plan(
      [
        { type: 'KernelCall', opIndex: 2, args: [0] },
        { type: 'KernelCall', opIndex: 0, args: [0] },
      ],
      [tensor(), tensor(), tensor(), tensor(), tensor(), tensor()],
    );
    removeUnusedOperators(p, [0, 1]);
    expect(p.operators.map((o) => o.name)).toEqual(['a', 'c']);
    expect(p.chains[0].instructions.map((i) => (i.type === 'KernelCall' ? i.opIndex : -1))).toEqual([1, 0]);
  });
});
