// Every structural diagnostic, each tripped by one change to a sound program
// (a TensorRT engine between host copies, plus one constant tensor), encoded
// to bytes and decoded again before it is checked.
import { describe, expect, it } from 'vitest';
import { checkStructure, STRUCTURE_CODES } from '../src/checks/structure.js';
import { runChecks } from '../src/checks/run.js';
import { DataLocation, DeviceType, ScalarType, splitMemoryOffset } from '../src/pte/model.js';
import { pteOf } from './helpers/memory-pte.js';
import { programEdit as ix, trtSingleWithConstant as base, type ProgramEdit as Ix } from './helpers/program-edit.js';

const check = (edit?: (x: Ix) => void) => checkStructure({ pte: pteOf(base(), edit && ((p, b) => edit(ix(p, b)))) });
const codes = (edit?: (x: Ix) => void) => check(edit).map((d) => d.code);

/** Index of the first instruction of `type` in chain 0. */
const instr = (x: Ix, type: string) => x.plan.chains[0].instructions.findIndex((i) => i.type === type);

interface Case {
  code: string;
  what: string;
  edit: (x: Ix) => void;
  /** A piece of the location the finding must carry. */
  at: string;
}

const cases: Case[] = [
  { code: 'STRUCT_VALUE_INDEX', what: 'plan input', at: 'forward > inputs[0]', edit: (x) => (x.plan.inputs[0] = 999) },
  { code: 'STRUCT_VALUE_INDEX', what: 'plan output', at: 'forward > outputs[0]', edit: (x) => (x.plan.outputs[0] = -1) },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'chain input',
    at: 'forward > chain 0 > inputs[0]',
    edit: (x) => x.plan.chains[0].inputs.push(x.plan.values.length),
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'chain output',
    at: 'forward > chain 0 > outputs[0]',
    edit: (x) => x.plan.chains[0].outputs.push(x.plan.values.length + 5),
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'kernel argument',
    at: 'instruction 0 (KernelCall et_copy::_h2d_copy.out) > args[1]',
    edit: (x) => {
      const k = x.plan.chains[0].instructions[0];
      if (k.type === 'KernelCall') k.args[1] = 1000;
    },
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'delegate argument',
    at: '(DelegateCall delegate 0) > args[0]',
    edit: (x) => {
      const d = x.plan.chains[0].instructions[instr(x, 'DelegateCall')];
      if (d.type === 'DelegateCall') d.args[0] = 777;
    },
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'move_from',
    at: '(MoveCall) > move_from',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'MoveCall', moveFrom: 500, moveTo: 0 }),
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'move_to',
    at: '(MoveCall) > move_to',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'MoveCall', moveFrom: 0, moveTo: -3 }),
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'free value',
    at: '(FreeCall) > value_index',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'FreeCall', valueIndex: 600 }),
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'jump condition',
    at: '(JumpFalseCall) > cond_value_index',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'JumpFalseCall', condValueIndex: 601, destinationInstruction: 0 }),
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'tensor list item',
    at: '> items[1]',
    edit: (x) => x.plan.values.push({ type: 'TensorList', items: [x.index('x'), 4242] }),
  },
  {
    code: 'STRUCT_VALUE_INDEX',
    what: 'optional tensor list item',
    at: '> items[0]',
    edit: (x) => x.plan.values.push({ type: 'OptionalTensorList', items: [-2, -1] }),
  },
  {
    code: 'STRUCT_LIST_ITEM_TYPE',
    what: 'tensor list naming an Int',
    at: '> items[0]',
    edit: (x) => {
      x.plan.values.push({ type: 'Int', intVal: 3n });
      x.plan.values.push({ type: 'TensorList', items: [x.plan.values.length - 1] });
    },
  },
  { code: 'STRUCT_UNION_NONE', what: 'value with no member', at: 'forward > value %', edit: (x) => x.plan.values.push({ type: 'None' }) },
  {
    code: 'STRUCT_UNION_NONE',
    what: 'instruction with no member',
    at: 'forward > chain 0 > instruction 3',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'None' }),
  },
  {
    code: 'STRUCT_MEMBER_MISSING',
    what: 'list without items',
    at: 'forward > value %',
    edit: (x) => x.plan.values.push({ type: 'IntList', items: [], $absent: ['items'] }),
  },
  {
    code: 'STRUCT_MEMBER_MISSING',
    what: 'kernel call without args',
    at: 'forward > chain 0 > instruction 3',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'KernelCall', opIndex: 0, args: [], $absent: ['args'] }),
  },
  {
    code: 'STRUCT_MEMBER_MISSING',
    what: 'delegate call without args',
    at: '(DelegateCall delegate 0)',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'DelegateCall', delegateIndex: 0, args: [], $absent: ['args'] }),
  },
  {
    code: 'STRUCT_OP_INDEX',
    what: 'op_index',
    at: 'forward > chain 0 > instruction 0',
    edit: (x) => {
      const k = x.plan.chains[0].instructions[0];
      if (k.type === 'KernelCall') k.opIndex = 9;
    },
  },
  {
    code: 'STRUCT_DELEGATE_INDEX',
    what: 'delegate_index',
    at: '(DelegateCall delegate 3)',
    edit: (x) => {
      const d = x.plan.chains[0].instructions[instr(x, 'DelegateCall')];
      if (d.type === 'DelegateCall') d.delegateIndex = 3;
    },
  },
  {
    code: 'STRUCT_JUMP_DESTINATION',
    what: 'jump past the end',
    at: '(JumpFalseCall) > destination_instruction',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'JumpFalseCall', condValueIndex: 0, destinationInstruction: 5 }),
  },
  {
    code: 'STRUCT_JUMP_DESTINATION',
    what: 'negative jump',
    at: '(JumpFalseCall) > destination_instruction',
    edit: (x) => x.plan.chains[0].instructions.push({ type: 'JumpFalseCall', condValueIndex: 0, destinationInstruction: -1 }),
  },
  {
    code: 'STRUCT_DELEGATE_ID',
    what: 'delegate without id',
    at: 'forward > delegate 0 (no id)',
    edit: (x) => (x.plan.delegates[0].id = null),
  },
  {
    code: 'STRUCT_SCALAR_TYPE',
    what: 'unknown scalar type',
    at: 'forward > value %',
    edit: (x) => (x.tensor('y').scalarType = 99 as ScalarType),
  },
  {
    code: 'STRUCT_ARENA_ID',
    what: 'arena 0',
    at: '> allocation_info.memory_id',
    edit: (x) => (x.tensor('y').allocationInfo!.memoryId = 0),
  },
  {
    code: 'STRUCT_ARENA_ID',
    what: 'arena past the list',
    at: '> allocation_info.memory_id',
    edit: (x) => (x.tensor('y').allocationInfo!.memoryId = 3),
  },
  {
    code: 'STRUCT_ARENA_EXTENT',
    what: 'tensor one byte past its arena',
    at: 'forward > value %',
    edit: (x) => {
      const t = x.tensor('y');
      Object.assign(t.allocationInfo!, splitMemoryOffset(x.plan.nonConstBufferSizes[1] - 64n + 1n));
    },
  },
  {
    code: 'STRUCT_ARENA_EXTENT',
    what: 'offset 4 GiB, only its high half set (64-bit offsets)',
    at: 'forward > value %',
    edit: (x) => Object.assign(x.tensor('y').allocationInfo!, { memoryOffsetLow: 0, memoryOffsetHigh: 1 }),
  },
  {
    code: 'STRUCT_ARENA_EXTENT',
    what: 'offset 2^64-1 (no wrap)',
    at: 'forward > value %',
    edit: (x) => Object.assign(x.tensor('y').allocationInfo!, { memoryOffsetLow: 0xffffffff, memoryOffsetHigh: 0xffffffff }),
  },
  {
    code: 'STRUCT_ARENA_DEVICE_INDEX',
    what: 'device for arena 0',
    at: 'forward > non_const_buffer_device[1]',
    edit: (x) => x.plan.nonConstBufferDevice.push({ bufferIdx: 0, deviceType: DeviceType.CUDA, deviceIndex: 0 }),
  },
  {
    code: 'STRUCT_ARENA_DEVICE_INDEX',
    what: 'device for a missing arena',
    at: 'forward > non_const_buffer_device[1]',
    edit: (x) => x.plan.nonConstBufferDevice.push({ bufferIdx: 3, deviceType: DeviceType.CUDA, deviceIndex: 0 }),
  },
  {
    code: 'STRUCT_ARENA_DEVICE_REPEAT',
    what: 'two devices for one arena',
    at: 'forward > non_const_buffer_device[1]',
    edit: (x) => x.plan.nonConstBufferDevice.push({ bufferIdx: 2, deviceType: DeviceType.CUDA, deviceIndex: 1 }),
  },
  {
    code: 'STRUCT_CONSTANT_INDEX',
    what: 'constant past constant_segment.offsets',
    at: '> data_buffer_idx',
    edit: (x) => (x.tensor('w').dataBufferIdx = 2),
  },
  {
    code: 'STRUCT_CONSTANT_EXTENT',
    what: 'constant past the constant segment',
    at: '> data_buffer_idx',
    edit: (x) => (x.tensor('w').sizes = [5]),
  },
  {
    code: 'STRUCT_CONSTANT_INDEX',
    what: 'constant past constant_buffer (inline constants)',
    at: '> data_buffer_idx',
    edit: (x) => {
      x.program.constantSegment = null;
      x.program.constantBuffer = [{ storage: new Uint8Array(0) }];
    },
  },
  {
    code: 'STRUCT_CONSTANT_EXTENT',
    what: 'constant longer than its inline buffer',
    at: '> data_buffer_idx',
    edit: (x) => {
      x.program.constantSegment = null;
      x.program.constantBuffer = [{ storage: new Uint8Array(0) }, { storage: new Uint8Array(12) }];
    },
  },
  {
    code: 'STRUCT_CONSTANT_SEGMENT',
    what: 'constant segment index',
    at: 'program > constant_segment.segment_index',
    edit: (x) => (x.program.constantSegment!.segmentIndex = 9),
  },
  {
    code: 'PTE_DELEGATE_DATA',
    what: 'segment reference',
    at: 'forward > delegate 0 (TensorRTBackend) > processed',
    edit: (x) => (x.plan.delegates[0].processed!.index = 9),
  },
  {
    code: 'PTE_DELEGATE_DATA',
    what: 'inline reference',
    at: 'forward > delegate 0 (TensorRTBackend) > processed',
    edit: (x) => (x.plan.delegates[0].processed = { location: DataLocation.INLINE, index: 4 }),
  },
];

describe('structure checks', () => {
  it('find nothing in the sound program', () => {
    expect(check()).toEqual([]);
  });

  it.each(cases)('$code: $what', ({ code, edit, at }) => {
    const found = check(edit).filter((d) => d.code === code);
    expect(found.length).toBeGreaterThan(0);
    expect(
      found.some((d) => d.location.includes(at)),
      found.map((d) => d.location).join('\n'),
    ).toBe(true);
    for (const d of found) {
      expect(d.severity).toBe('error');
      expect(d.method === 'forward' || d.location.startsWith('program')).toBe(true);
      expect(d.hint.length).toBeGreaterThan(10);
      expect(d.message).not.toMatch(/\n/);
    }
  });

  it('covers every code it declares', () => {
    expect(new Set(cases.map((c) => c.code))).toEqual(new Set(STRUCTURE_CODES));
  });

  it('accepts the edges: a tensor ending exactly at its arena end, a jump to the end of the chain, an optional list hole', () => {
    const found = codes((x) => {
      const y = x.tensor('y');
      Object.assign(y.allocationInfo!, splitMemoryOffset(x.plan.nonConstBufferSizes[1] - 64n));
      const n = x.plan.chains[0].instructions.length;
      x.plan.values.push({ type: 'Bool', boolVal: true });
      x.plan.chains[0].instructions.push({
        type: 'JumpFalseCall',
        condValueIndex: x.plan.values.length - 1,
        destinationInstruction: n + 1,
      });
      x.plan.values.push({ type: 'OptionalTensorList', items: [-1, x.index('x')] });
    });
    expect(found).toEqual([]);
  });

  it('names the delegate an argument of an out-of-range call belongs to', () => {
    const d = check((x) => {
      const call = x.plan.chains[0].instructions[instr(x, 'DelegateCall')];
      if (call.type === 'DelegateCall') call.args[1] = 12345;
    }).find((f) => f.code === 'STRUCT_VALUE_INDEX')!;
    expect(d.delegate).toBe(0);
  });

  it('reports a dangling TensorRT blob reference once, not once per road to it', async () => {
    const pte = pteOf(base(), (p) => (p.executionPlan[0].delegates[0].processed!.index = 9));
    const { diagnostics } = await runChecks(pte);
    expect(diagnostics.filter((d) => d.code === 'PTE_DELEGATE_DATA')).toHaveLength(1);
  });

  it('does not double-count a planned tensor in a huge arena (bigint sizes)', () => {
    const found = codes((x) => {
      x.plan.nonConstBufferSizes[2] = 1n << 40n;
      Object.assign(x.tensor('trt:output0').allocationInfo!, splitMemoryOffset((1n << 40n) - 64n));
    });
    expect(found).toEqual([]);
  });
});
