// Structural soundness of the container, beyond what openPte already proves
// (the flatbuffer verifies, the header and segment table are sound): every
// index a runtime follows lands inside what it indexes, unions carry a
// member, planned tensors fit their arenas, constants fit their storage.
// Each finding is one the ExecuTorch runtime turns into InvalidProgram at
// load, or worse, a read or write outside a buffer.

import type { StructCode } from '../codes/index.js';
import { TensorDataLocation, memoryOffset, type ExecutionPlan, type Instruction, type Program, type Tensor } from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { elementSize, operatorName, planName, scalarTypeName, tensorBytes, valueLabel } from '../pte/tensor.js';
import { blobPlace, delegateLocation } from '../tensorrt/delegates.js';
import { isTrtxError } from '../util/errors.js';
import type { CheckContext } from './context.js';
import { diag, type Diagnostic } from './diagnostic.js';
import { checkRuntimeRefusals } from './runtime-refusals.js';

const HINT_REEXPORT = 're-export the program; a file with dangling indices cannot load';

const HINTS = {
  STRUCT_VALUE_INDEX: HINT_REEXPORT,
  STRUCT_LIST_ITEM_TYPE: 're-export the program; a tensor list may only name tensor values',
  STRUCT_UNION_NONE: 're-export the program; every value and instruction needs a type',
  STRUCT_MEMBER_MISSING: 're-export the program; the runtime refuses a list or call without its vector',
  STRUCT_OP_INDEX: HINT_REEXPORT,
  STRUCT_DELEGATE_INDEX: HINT_REEXPORT,
  STRUCT_JUMP_DESTINATION: HINT_REEXPORT,
  STRUCT_DELEGATE_ID: 're-export the program; a delegate needs its backend id',
  STRUCT_SCALAR_TYPE: 're-export the program; the runtime refuses unknown element types',
  STRUCT_ARENA_ID: 're-run memory planning (re-export); arena 0 is reserved and the id must name a planned arena',
  STRUCT_ARENA_EXTENT: 're-run memory planning (re-export); the tensor would be written past its arena',
  STRUCT_ARENA_DEVICE_INDEX: 're-export the program; non_const_buffer_device must name planned arenas 1..N-1',
  STRUCT_ARENA_DEVICE_REPEAT: 're-export the program; give each arena one device entry',
  STRUCT_CONSTANT_INDEX: 're-export the program; the constant tensor has no data',
  STRUCT_CONSTANT_EXTENT: 're-export the program; the constant tensor would read past its data',
  STRUCT_CONSTANT_SEGMENT: 're-export the program; constant_segment names a missing segment',
} as const satisfies Partial<Record<StructCode, string>>;

export type StructureCode = keyof typeof HINTS | 'PTE_DELEGATE_DATA';
export const STRUCTURE_CODES = [...Object.keys(HINTS), 'PTE_DELEGATE_DATA'] as StructureCode[];

const describeInstruction = (plan: ExecutionPlan, ins: Instruction): string => {
  if (ins.type === 'KernelCall') {
    const op = plan.operators[ins.opIndex];
    return op ? `KernelCall ${operatorName(op)}` : 'KernelCall';
  }
  if (ins.type === 'DelegateCall') return `DelegateCall delegate ${ins.delegateIndex}`;
  return ins.type;
};

/** Checks one method, step by step in report order; `pte` supplies constants and segments. */
function checkPlan(pte: PteFile, plan: ExecutionPlan, planIndex: number, out: Diagnostic[]): void {
  const m = planName(plan, planIndex);
  const nValues = plan.values.length;
  const err = (code: keyof typeof HINTS, location: string, message: string, delegate: number | null = null) =>
    out.push(diag(pte.reportBudget, 'error', code, location, message, HINTS[code], { method: m, delegate }));
  const inValues = (i: number) => Number.isInteger(i) && i >= 0 && i < nValues;
  const valueIndex = (i: number, location: string, what: string, delegate: number | null = null) => {
    if (!inValues(i))
      err('STRUCT_VALUE_INDEX', location, `${what} ${i} is outside values[0..${nValues - 1}] (${nValues} values)`, delegate);
  };

  plan.inputs.forEach((v, k) => valueIndex(v, `${m} > inputs[${k}]`, 'plan input'));
  plan.outputs.forEach((v, k) => valueIndex(v, `${m} > outputs[${k}]`, 'plan output'));
  checkValues(pte, plan, m, inValues, err);
  checkChains(plan, m, valueIndex, err);
  checkDelegates(pte, plan, planIndex, err, out);
  checkArenaDevices(plan, m, err);
}

/** Reports a value index outside the plan's values (the delegate when a delegate call holds it). */
type ValueIndexCheck = (i: number, location: string, what: string, delegate?: number | null) => void;

/** Every value has a type, every list its items, every tensor list names tensors, every tensor is sound. */
function checkValues(pte: PteFile, plan: ExecutionPlan, m: string, inValues: (i: number) => boolean, err: Report): void {
  const nValues = plan.values.length;
  plan.values.forEach((v, i) => {
    const at = `${m} > value ${valueLabel(plan, i)}`;
    switch (v.type) {
      case 'None':
        err('STRUCT_UNION_NONE', at, `value ${i} has no type (an EValue union with no member)`);
        return;
      case 'IntList':
      case 'DoubleList':
      case 'BoolList':
        if (v.$absent?.includes('items')) err('STRUCT_MEMBER_MISSING', at, `${v.type} has no items vector`);
        return;
      case 'TensorList':
      case 'OptionalTensorList': {
        if (v.$absent?.includes('items')) err('STRUCT_MEMBER_MISSING', at, `${v.type} has no items vector`);
        const optional = v.type === 'OptionalTensorList';
        v.items.forEach((item, k) => {
          if (optional && item === -1) return; // -1 is how an optional list says "None"
          const listed = inValues(item) ? plan.values[item] : undefined;
          if (listed === undefined) {
            err('STRUCT_VALUE_INDEX', `${at} > items[${k}]`, `${v.type} item ${item} is outside values[0..${nValues - 1}]`);
          } else if (listed.type !== 'Tensor') {
            err('STRUCT_LIST_ITEM_TYPE', `${at} > items[${k}]`, `${v.type} item ${item} is a ${listed.type} value, not a Tensor`);
          }
        });
        return;
      }
      case 'Tensor':
        checkTensor(pte, plan, v.tensor, at, err);
        return;
      default:
        return;
    }
  });
}

/** Every index an instruction follows lands inside what it indexes; jumps stay inside their chain. */
function checkChains(plan: ExecutionPlan, m: string, valueIndex: ValueIndexCheck, err: Report): void {
  plan.chains.forEach((chain, c) => {
    const at = `${m} > chain ${c}`;
    chain.inputs.forEach((v, k) => valueIndex(v, `${at} > inputs[${k}]`, 'chain input'));
    chain.outputs.forEach((v, k) => valueIndex(v, `${at} > outputs[${k}]`, 'chain output'));
    const n = chain.instructions.length;
    chain.instructions.forEach((ins, k) => {
      const where = `${at} > instruction ${k} (${describeInstruction(plan, ins)})`;
      switch (ins.type) {
        case 'None':
          err(
            'STRUCT_UNION_NONE',
            `${at} > instruction ${k}`,
            `instruction ${k} has no arguments (an InstructionArguments union with no member)`,
          );
          return;
        case 'KernelCall':
          if (ins.opIndex < 0 || ins.opIndex >= plan.operators.length) {
            err(
              'STRUCT_OP_INDEX',
              where,
              `op_index ${ins.opIndex} is outside operators[0..${plan.operators.length - 1}] (${plan.operators.length} operators)`,
            );
          }
          if (ins.$absent?.includes('args')) err('STRUCT_MEMBER_MISSING', where, 'KernelCall has no args vector');
          ins.args.forEach((a, j) => valueIndex(a, `${where} > args[${j}]`, 'argument'));
          return;
        case 'DelegateCall': {
          const inRange = ins.delegateIndex >= 0 && ins.delegateIndex < plan.delegates.length;
          const d = inRange ? ins.delegateIndex : null;
          if (!inRange) {
            err(
              'STRUCT_DELEGATE_INDEX',
              where,
              `delegate_index ${ins.delegateIndex} is outside delegates[0..${plan.delegates.length - 1}] (${plan.delegates.length} delegates)`,
            );
          }
          if (ins.$absent?.includes('args')) err('STRUCT_MEMBER_MISSING', where, 'DelegateCall has no args vector', d);
          ins.args.forEach((a, j) => valueIndex(a, `${where} > args[${j}]`, 'argument', d));
          return;
        }
        case 'MoveCall':
          valueIndex(ins.moveFrom, `${where} > move_from`, 'move_from');
          valueIndex(ins.moveTo, `${where} > move_to`, 'move_to');
          return;
        case 'FreeCall':
          valueIndex(ins.valueIndex, `${where} > value_index`, 'value_index');
          return;
        case 'JumpFalseCall':
          valueIndex(ins.condValueIndex, `${where} > cond_value_index`, 'cond_value_index');
          // n itself is allowed: jumping to the end finishes the chain.
          if (ins.destinationInstruction < 0 || ins.destinationInstruction > n) {
            err(
              'STRUCT_JUMP_DESTINATION',
              `${where} > destination_instruction`,
              `destination ${ins.destinationInstruction} is outside the chain's instructions [0..${n}]`,
            );
          }
          return;
      }
    });
  });
}

/**
 * Every delegate names its backend and its blob is in the file; a blob
 * outside it is reported with the blob reader's own error.
 */
function checkDelegates(pte: PteFile, plan: ExecutionPlan, planIndex: number, err: Report, out: Diagnostic[]): void {
  const m = planName(plan, planIndex);
  plan.delegates.forEach((d, k) => {
    const at = delegateLocation(plan, planIndex, k, d);
    if (d.id === null || d.id === '') err('STRUCT_DELEGATE_ID', at, 'delegate has no backend id', k);
    try {
      blobPlace(pte, { planIndex, plan, delegateIndex: k, delegate: d, location: at });
    } catch (e) {
      if (!isTrtxError(e)) throw e;
      // Same code and text as the blob reader's, so run.ts folds the two into one.
      out.push(
        diag(
          pte.reportBudget,
          'error',
          e.code,
          e.location,
          e.message,
          're-export the program; the delegate points at data that is not in the file',
          {
            method: m,
            delegate: k,
          },
        ),
      );
    }
  });
}

type Report = (code: keyof typeof HINTS, location: string, message: string, delegate?: number | null) => void;

function checkTensor(pte: PteFile, plan: ExecutionPlan, t: Tensor, at: string, err: Report): void {
  if (elementSize(t.scalarType) === undefined) {
    err('STRUCT_SCALAR_TYPE', at, `scalar type ${scalarTypeName(t.scalarType)} is not an element type the runtime knows`);
    return;
  }
  const bytes = tensorBytes(t)!;
  const alloc = t.allocationInfo;
  if (alloc) {
    const id = alloc.memoryId >>> 0;
    const arenas = plan.nonConstBufferSizes.length;
    const size = id === 0 ? undefined : plan.nonConstBufferSizes[id];
    if (size === undefined) {
      err(
        'STRUCT_ARENA_ID',
        `${at} > allocation_info.memory_id`,
        id === 0
          ? 'memory_id 0 is the reserved arena'
          : `memory_id ${id} is outside the planned arenas 1..${arenas - 1} (non_const_buffer_sizes has ${arenas})`,
      );
      return;
    }
    // u64 offset + u64 bytes against an i64 size: bigint, so nothing wraps.
    const offset = memoryOffset(alloc);
    if (offset + bytes > size) {
      err(
        'STRUCT_ARENA_EXTENT',
        `${at} > allocation_info`,
        `[${offset}, ${offset + bytes}) (${bytes} bytes) runs past arena ${id} (${size} bytes)`,
      );
    }
    return;
  }
  if (t.dataBufferIdx === 0 || t.extraTensorInfo?.location === TensorDataLocation.EXTERNAL) return;
  checkConstant(pte, pte.program, t, bytes, at, err);
}

function checkConstant(pte: PteFile, program: Program, t: Tensor, bytes: bigint, at: string, err: Report): void {
  const idx = t.dataBufferIdx >>> 0;
  const cs = program.constantSegment;
  if (cs && cs.offsets.length > 0) {
    const offset = cs.offsets[idx];
    if (offset === undefined) {
      err(
        'STRUCT_CONSTANT_INDEX',
        `${at} > data_buffer_idx`,
        `data_buffer_idx ${idx} is outside constant_segment.offsets (${cs.offsets.length} entries)`,
      );
      return;
    }
    const seg = pte.segments[cs.segmentIndex];
    if (!seg) return; // reported once per program
    if (offset + bytes > BigInt(seg.size)) {
      err(
        'STRUCT_CONSTANT_EXTENT',
        `${at} > data_buffer_idx`,
        `constant data [${offset}, ${offset + bytes}) runs past the constant segment (${seg.size} bytes)`,
      );
    }
    return;
  }
  const buffers = program.constantBuffer;
  const buffer = buffers[idx];
  if (buffer === undefined) {
    err(
      'STRUCT_CONSTANT_INDEX',
      `${at} > data_buffer_idx`,
      `data_buffer_idx ${idx} is outside constant_buffer (${buffers.length} entries)`,
    );
    return;
  }
  if (BigInt(buffer.storage.length) < bytes) {
    err(
      'STRUCT_CONSTANT_EXTENT',
      `${at} > data_buffer_idx`,
      `constant_buffer[${idx}] holds ${buffer.storage.length} bytes; the tensor needs ${bytes}`,
    );
  }
}

function checkArenaDevices(plan: ExecutionPlan, m: string, err: Report): void {
  const arenas = plan.nonConstBufferSizes.length;
  const seen = new Map<number, number>();
  plan.nonConstBufferDevice.forEach((d, k) => {
    const at = `${m} > non_const_buffer_device[${k}]`;
    if (d.bufferIdx <= 0 || d.bufferIdx >= arenas) {
      err(
        'STRUCT_ARENA_DEVICE_INDEX',
        at,
        d.bufferIdx === 0
          ? 'buffer_idx 0 is the reserved arena, it has no device'
          : `buffer_idx ${d.bufferIdx} is outside the planned arenas 1..${arenas - 1}`,
      );
      return;
    }
    const prev = seen.get(d.bufferIdx);
    if (prev !== undefined) {
      err('STRUCT_ARENA_DEVICE_REPEAT', at, `arena ${d.bufferIdx} already has a device in non_const_buffer_device[${prev}]`);
      return;
    }
    seen.set(d.bufferIdx, k);
  });
}

/** Program-level findings and every method's. */
export function checkStructure(ctx: Pick<CheckContext, 'pte'>): Diagnostic[] {
  const { pte } = ctx;
  const out: Diagnostic[] = [];
  const cs = pte.program.constantSegment;
  if (cs && cs.offsets.length > 0 && !pte.segments[cs.segmentIndex]) {
    out.push(
      diag(
        pte.reportBudget,
        'error',
        'STRUCT_CONSTANT_SEGMENT',
        'program > constant_segment.segment_index',
        `segment_index ${cs.segmentIndex} is outside segments (${pte.segments.length})`,
        HINTS.STRUCT_CONSTANT_SEGMENT,
      ),
    );
  }
  pte.program.executionPlan.forEach((plan, i) => checkPlan(pte, plan, i, out));
  return out;
}

/**
 * Findings after which the dataflow checks (TensorRT arity, zero-copy) and
 * the passes cannot run: they follow value, operator and delegate indices
 * and read a copy's arguments by position.
 */
export const INDEX_CODES: ReadonlySet<string> = new Set([
  'STRUCT_VALUE_INDEX',
  'STRUCT_LIST_ITEM_TYPE',
  'STRUCT_UNION_NONE',
  'STRUCT_MEMBER_MISSING',
  'STRUCT_OP_INDEX',
  'STRUCT_DELEGATE_INDEX',
  'STRUCT_JUMP_DESTINATION',
  'STRUCT_ARENA_ID',
  'STRUCT_KERNEL_ARITY',
  'STRUCT_OPERATOR_NAME',
]);

/** Every structural finding: the container's indices and extents, then what the runtime refuses at load or first execute. */
export function checkProgramStructure(ctx: Pick<CheckContext, 'pte'> & Partial<Pick<CheckContext, 'trt'>>): Diagnostic[] {
  return [...checkStructure(ctx), ...checkRuntimeRefusals(ctx.pte, ctx.trt)];
}
