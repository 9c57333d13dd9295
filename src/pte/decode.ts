// Program bytes -> model.ts objects, through the generated readers. The bytes
// are verified first (verify.ts), so every accessor below reads inside them.

import * as flatbuffers from 'flatbuffers';
import { Program as FbProgram } from '../generated/executorch-flatbuffer/program.js';
import { ExecutionPlan as FbPlan } from '../generated/executorch-flatbuffer/execution-plan.js';
import { EValue as FbEValue } from '../generated/executorch-flatbuffer/evalue.js';
import { Tensor as FbTensor } from '../generated/executorch-flatbuffer/tensor.js';
import { Int as FbInt } from '../generated/executorch-flatbuffer/int.js';
import { Bool as FbBool } from '../generated/executorch-flatbuffer/bool.js';
import { Double as FbDouble } from '../generated/executorch-flatbuffer/double.js';
import { String as FbString } from '../generated/executorch-flatbuffer/string.js';
import { IntList as FbIntList } from '../generated/executorch-flatbuffer/int-list.js';
import { DoubleList as FbDoubleList } from '../generated/executorch-flatbuffer/double-list.js';
import { BoolList as FbBoolList } from '../generated/executorch-flatbuffer/bool-list.js';
import { TensorList as FbTensorList } from '../generated/executorch-flatbuffer/tensor-list.js';
import { OptionalTensorList as FbOptionalTensorList } from '../generated/executorch-flatbuffer/optional-tensor-list.js';
import { Null as FbNull } from '../generated/executorch-flatbuffer/null.js';
import { KernelTypes } from '../generated/executorch-flatbuffer/kernel-types.js';
import { Instruction as FbInstruction } from '../generated/executorch-flatbuffer/instruction.js';
import { InstructionArguments } from '../generated/executorch-flatbuffer/instruction-arguments.js';
import { KernelCall as FbKernelCall } from '../generated/executorch-flatbuffer/kernel-call.js';
import { DelegateCall as FbDelegateCall } from '../generated/executorch-flatbuffer/delegate-call.js';
import { MoveCall as FbMoveCall } from '../generated/executorch-flatbuffer/move-call.js';
import { JumpFalseCall as FbJumpFalseCall } from '../generated/executorch-flatbuffer/jump-false-call.js';
import { FreeCall as FbFreeCall } from '../generated/executorch-flatbuffer/free-call.js';
import { Chain as FbChain } from '../generated/executorch-flatbuffer/chain.js';
import { BackendDelegate as FbDelegate } from '../generated/executorch-flatbuffer/backend-delegate.js';
import { SubsegmentOffsets as FbSubsegmentOffsets } from '../generated/executorch-flatbuffer/subsegment-offsets.js';
import { FrameList as FbFrameList } from '../generated/executorch-flatbuffer/frame-list.js';
import type * as M from './model.js';
import { verifyProgramFlatBuffer } from './flatbuffer-verify.js';

/** The generated classes' common shape: a position in a ByteBuffer. */
interface FbTable {
  bb: flatbuffers.ByteBuffer | null;
  bb_pos: number;
}

/** Whether the table stores the field in vtable slot `slot`. */
function has(t: FbTable, slot: number): boolean {
  return t.bb!.__offset(t.bb_pos, 4 + 2 * slot) !== 0;
}

/** Records the vector fields (by schema name and slot) the table omits. */
function absent<T extends object>(obj: T, t: FbTable, fields: [string, number][]): T {
  const missing = fields.filter(([, slot]) => !has(t, slot)).map(([name]) => name);
  if (missing.length) (obj as M.Fidelity).$absent = missing;
  return obj;
}

function ints(n: number, at: (i: number) => number | null): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = at(i)!;
  return out;
}

function bigints(n: number, at: (i: number) => bigint | null): bigint[] {
  const out = new Array<bigint>(n);
  for (let i = 0; i < n; i++) out[i] = at(i)!;
  return out;
}

function list<F, T>(n: number, at: (i: number) => F | null, map: (f: F) => T): T[] {
  const out = new Array<T>(n);
  for (let i = 0; i < n; i++) out[i] = map(at(i)!);
  return out;
}

/** A ubyte vector as a view into the program bytes (no copy). */
function bytesView(t: FbTable, slot: number): Uint8Array {
  const bb = t.bb!;
  const o = bb.__offset(t.bb_pos, 4 + 2 * slot);
  if (!o) return new Uint8Array(0);
  const start = bb.__vector(t.bb_pos + o);
  return bb.bytes().subarray(start, start + bb.__vector_len(t.bb_pos + o));
}

function tensor(t: FbTensor): M.Tensor {
  const alloc = t.allocationInfo();
  const extra = t.extraTensorInfo();
  return absent<M.Tensor>(
    {
      scalarType: t.scalarType(),
      storageOffset: t.storageOffset(),
      sizes: ints(t.sizesLength(), (i) => t.sizes(i)),
      dimOrder: ints(t.dimOrderLength(), (i) => t.dimOrder(i)),
      requiresGrad: t.requiresGrad(),
      dataBufferIdx: t.dataBufferIdx(),
      allocationInfo: alloc && {
        memoryId: alloc.memoryId(),
        memoryOffsetLow: alloc.memoryOffsetLow(),
        memoryOffsetHigh: alloc.memoryOffsetHigh(),
      },
      layout: t.layout(),
      shapeDynamism: t.shapeDynamism(),
      extraTensorInfo: extra && {
        mutableDataSegmentsIdx: extra.mutableDataSegmentsIdx(),
        fullyQualifiedName: extra.fullyQualifiedName(),
        location: extra.location(),
        deviceType: extra.deviceType(),
        deviceIndex: extra.deviceIndex(),
      },
    },
    t,
    [
      ['sizes', 2],
      ['dim_order', 3],
    ],
  );
}

function evalue(v: FbEValue): M.EValue {
  switch (v.valType()) {
    case KernelTypes.NONE:
      return { type: 'None' };
    case KernelTypes.Null:
      v.val(new FbNull());
      return { type: 'Null' };
    case KernelTypes.Int:
      return { type: 'Int', intVal: (v.val(new FbInt()) as FbInt).intVal() };
    case KernelTypes.Bool:
      return { type: 'Bool', boolVal: (v.val(new FbBool()) as FbBool).boolVal() };
    case KernelTypes.Double:
      return { type: 'Double', doubleVal: (v.val(new FbDouble()) as FbDouble).doubleVal() };
    case KernelTypes.Tensor:
      return { type: 'Tensor', tensor: tensor(v.val(new FbTensor()) as FbTensor) };
    case KernelTypes.String:
      return { type: 'String', stringVal: (v.val(new FbString()) as FbString).stringVal() };
    case KernelTypes.IntList: {
      const l = v.val(new FbIntList()) as FbIntList;
      return absent({ type: 'IntList' as const, items: bigints(l.itemsLength(), (i) => l.items(i)) }, l, [['items', 0]]);
    }
    case KernelTypes.DoubleList: {
      const l = v.val(new FbDoubleList()) as FbDoubleList;
      return absent({ type: 'DoubleList' as const, items: ints(l.itemsLength(), (i) => l.items(i)) }, l, [['items', 0]]);
    }
    case KernelTypes.BoolList: {
      const l = v.val(new FbBoolList()) as FbBoolList;
      return absent(
        {
          type: 'BoolList' as const,
          items: list(
            l.itemsLength(),
            (i) => l.items(i),
            (b) => b,
          ),
        },
        l,
        [['items', 0]],
      );
    }
    case KernelTypes.TensorList: {
      const l = v.val(new FbTensorList()) as FbTensorList;
      return absent({ type: 'TensorList' as const, items: ints(l.itemsLength(), (i) => l.items(i)) }, l, [['items', 0]]);
    }
    case KernelTypes.OptionalTensorList: {
      const l = v.val(new FbOptionalTensorList()) as FbOptionalTensorList;
      return absent({ type: 'OptionalTensorList' as const, items: ints(l.itemsLength(), (i) => l.items(i)) }, l, [['items', 0]]);
    }
  }
  // verify.ts refuses unknown union tags before decoding starts.
  throw new Error(`unreachable: KernelTypes ${v.valType()}`);
}

function instruction(ins: FbInstruction): M.Instruction {
  switch (ins.instrArgsType()) {
    case InstructionArguments.NONE:
      return { type: 'None' };
    case InstructionArguments.KernelCall: {
      const k = ins.instrArgs(new FbKernelCall()) as FbKernelCall;
      return absent({ type: 'KernelCall' as const, opIndex: k.opIndex(), args: ints(k.argsLength(), (i) => k.args(i)) }, k, [['args', 1]]);
    }
    case InstructionArguments.DelegateCall: {
      const d = ins.instrArgs(new FbDelegateCall()) as FbDelegateCall;
      return absent({ type: 'DelegateCall' as const, delegateIndex: d.delegateIndex(), args: ints(d.argsLength(), (i) => d.args(i)) }, d, [
        ['args', 1],
      ]);
    }
    case InstructionArguments.MoveCall: {
      const m = ins.instrArgs(new FbMoveCall()) as FbMoveCall;
      return { type: 'MoveCall', moveFrom: m.moveFrom(), moveTo: m.moveTo() };
    }
    case InstructionArguments.JumpFalseCall: {
      const j = ins.instrArgs(new FbJumpFalseCall()) as FbJumpFalseCall;
      return { type: 'JumpFalseCall', condValueIndex: j.condValueIndex(), destinationInstruction: j.destinationInstruction() };
    }
    case InstructionArguments.FreeCall: {
      const f = ins.instrArgs(new FbFreeCall()) as FbFreeCall;
      return { type: 'FreeCall', valueIndex: f.valueIndex() };
    }
  }
  throw new Error(`unreachable: InstructionArguments ${ins.instrArgsType()}`);
}

function frameList(fl: FbFrameList): M.FrameList {
  return absent(
    {
      items: list(
        fl.itemsLength(),
        (i) => fl.items(i),
        (fr) => ({
          filename: fr.filename(),
          lineno: fr.lineno(),
          name: fr.name(),
          context: fr.context(),
        }),
      ),
    },
    fl,
    [['items', 0]],
  );
}

function chain(c: FbChain): M.Chain {
  return absent<M.Chain>(
    {
      inputs: ints(c.inputsLength(), (i) => c.inputs(i)),
      outputs: ints(c.outputsLength(), (i) => c.outputs(i)),
      instructions: list(c.instructionsLength(), (i) => c.instructions(i), instruction),
      stacktrace: list(c.stacktraceLength(), (i) => c.stacktrace(i), frameList),
    },
    c,
    [
      ['inputs', 0],
      ['outputs', 1],
      ['instructions', 2],
      ['stacktrace', 3],
    ],
  );
}

function delegate(d: FbDelegate): M.BackendDelegate {
  const p = d.processed();
  return absent<M.BackendDelegate>(
    {
      id: d.id(),
      processed: p && { location: p.location(), index: p.index() },
      compileSpecs: list(
        d.compileSpecsLength(),
        (i) => d.compileSpecs(i),
        (cs) => absent<M.CompileSpec>({ key: cs.key(), value: bytesView(cs as unknown as FbTable, 1) }, cs, [['value', 1]]),
      ),
    },
    d,
    [['compile_specs', 2]],
  );
}

function plan(p: FbPlan): M.ExecutionPlan {
  const meta = p.containerMetaType();
  return absent<M.ExecutionPlan>(
    {
      name: p.name(),
      containerMetaType: meta && { encodedInpStr: meta.encodedInpStr(), encodedOutStr: meta.encodedOutStr() },
      values: list(p.valuesLength(), (i) => p.values(i), evalue),
      inputs: ints(p.inputsLength(), (i) => p.inputs(i)),
      outputs: ints(p.outputsLength(), (i) => p.outputs(i)),
      chains: list(p.chainsLength(), (i) => p.chains(i), chain),
      operators: list(
        p.operatorsLength(),
        (i) => p.operators(i),
        (o) => ({ name: o.name(), overload: o.overload() }),
      ),
      delegates: list(p.delegatesLength(), (i) => p.delegates(i), delegate),
      nonConstBufferSizes: bigints(p.nonConstBufferSizesLength(), (i) => p.nonConstBufferSizes(i)),
      nonConstBufferDevice: list(
        p.nonConstBufferDeviceLength(),
        (i) => p.nonConstBufferDevice(i),
        (d) => ({
          bufferIdx: d.bufferIdx(),
          deviceType: d.deviceType(),
          deviceIndex: d.deviceIndex(),
        }),
      ),
    },
    p,
    [
      ['values', 2],
      ['inputs', 3],
      ['outputs', 4],
      ['chains', 5],
      ['operators', 6],
      ['delegates', 7],
      ['non_const_buffer_sizes', 8],
      ['non_const_buffer_device', 9],
    ],
  );
}

function subsegments(s: FbSubsegmentOffsets): M.SubsegmentOffsets {
  return absent<M.SubsegmentOffsets>({ segmentIndex: s.segmentIndex(), offsets: bigints(s.offsetsLength(), (i) => s.offsets(i)) }, s, [
    ['offsets', 1],
  ]);
}

/**
 * Decodes program bytes (the flatbuffer from file offset 0, headers
 * included). Throws TrtxError PTE_FLATBUFFER with the path of the first
 * malformed field.
 */
export function decodeProgram(bytes: Uint8Array, rootOffset?: number): M.Program {
  const root = rootOffset ?? new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  verifyProgramFlatBuffer(bytes, root);
  const bb = new flatbuffers.ByteBuffer(bytes);
  const p = FbProgram.getRootAsProgram(bb);
  const constantSegment = p.constantSegment();
  return absent<M.Program>(
    {
      version: p.version(),
      executionPlan: list(p.executionPlanLength(), (i) => p.executionPlan(i), plan),
      constantBuffer: list(
        p.constantBufferLength(),
        (i) => p.constantBuffer(i),
        (b) => absent<M.Buffer>({ storage: bytesView(b as unknown as FbTable, 0) }, b, [['storage', 0]]),
      ),
      backendDelegateData: list(
        p.backendDelegateDataLength(),
        (i) => p.backendDelegateData(i),
        (d) => absent<M.BackendDelegateInlineData>({ data: bytesView(d as unknown as FbTable, 0) }, d, [['data', 0]]),
      ),
      segments: list(
        p.segmentsLength(),
        (i) => p.segments(i),
        (s) => ({ offset: s.offset(), size: s.size() }),
      ),
      constantSegment: constantSegment && subsegments(constantSegment),
      mutableDataSegments: list(p.mutableDataSegmentsLength(), (i) => p.mutableDataSegments(i), subsegments),
      namedData: list(
        p.namedDataLength(),
        (i) => p.namedData(i),
        (n) => ({ key: n.key(), segmentIndex: n.segmentIndex() }),
      ),
    },
    p,
    [
      ['execution_plan', 1],
      ['constant_buffer', 2],
      ['backend_delegate_data', 3],
      ['segments', 4],
      ['mutable_data_segments', 6],
      ['named_data', 7],
    ],
  );
}
