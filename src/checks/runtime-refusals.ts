// Shapes the ExecuTorch 1.5 runtime refuses (or fails on at the first
// execute) that the container checks in structure.ts do not cover: tensor
// metadata parseTensor rejects, device tags the device registry has no
// allocator for, planned memory at a misaligned address, initial state past its
// segment, operators whose name the runtime cannot hold, kernel calls whose
// argument count the generated kernel wrapper rejects (kernel-arguments.ts). Each rule cites the
// upstream source it follows; docs/reliability.md tabulates what the runtime
// does per shape. Where trtx refuses what the runtime would load (misaligned
// offsets, unused constant offsets),
// the message says so.

import type { StructCode } from '../codes/index.js';
import {
  DeviceType,
  TensorDataLocation,
  TensorShapeDynamism,
  memoryOffset,
  type ExecutionPlan,
  type Program,
  type Tensor,
} from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { elementSize, operatorName, planName, tensorBytes, valueLabel } from '../pte/tensor.js';
import { diag, type Diagnostic } from './diagnostic.js';
import { KERNEL_ARITY_HINT, checkKernelArguments } from './kernel-arguments.js';
import { checkRuntimeProgram } from './runtime-program.js';
import type { TrtDelegate } from './context.js';
import { inPlaceBuffers } from './zero-copy-scan.js';

const HINTS = {
  STRUCT_TENSOR_SIZE: 're-export the program; the runtime refuses a negative dimension or a tensor whose byte size overflows',
  STRUCT_TENSOR_RANK: 're-export the program; the runtime holds at most 16 dimensions',
  STRUCT_DIM_ORDER: 're-export the program; dim_order must list each dimension once',
  STRUCT_STORAGE_OFFSET: 're-export the program; the runtime supports storage_offset 0 only',
  STRUCT_SHAPE_DYNAMISM: 're-export with bounded dynamic shapes; the runtime refuses DYNAMIC_UNBOUND tensors',
  STRUCT_DEVICE_TYPE: 're-export the program; the runtime knows CPU (0) and CUDA (1) only',
  STRUCT_ARENA_ALIGNMENT:
    're-run memory planning (re-export); a tensor\u2019s offset must be a multiple of its element size (ExecuTorch\u2019s planner aligns every tensor to 16 bytes)',
  STRUCT_ARENA_SIZE: 're-run memory planning (re-export); an arena size cannot be negative',
  STRUCT_MUTABLE_DATA: 're-export the program; the initial state of a planned tensor must lie inside mutable_data_segments[0]',
  STRUCT_CONSTANT_OFFSET: 're-export the program; every constant offset must lie inside the constant segment',
  STRUCT_OPERATOR_NAME: 're-export the program; the runtime resolves kernels by names shorter than 100 bytes',
  STRUCT_KERNEL_ARITY: KERNEL_ARITY_HINT,
} as const satisfies Partial<Record<StructCode, string>>;

export type RuntimeRefusalCode = keyof typeof HINTS;
export const RUNTIME_REFUSAL_CODES = Object.keys(HINTS) as RuntimeRefusalCode[];

/** runtime/core/exec_aten/util/tensor_dimension_limit.h kTensorDimensionLimit. */
const MAX_RANK = 16;
/** runtime/executor/method.cpp resolve_operator: kTempBufferSizeForName. */
const OPERATOR_NAME_BUFFER = 100;
const KNOWN_DEVICES = new Set<number>([DeviceType.CPU, DeviceType.CUDA]);

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

type Report = (code: RuntimeRefusalCode, location: string, message: string) => void;

function checkTensor(pte: PteFile, plan: ExecutionPlan, t: Tensor, at: string, err: Report): void {
  const rank = t.sizes.length;
  const negative = t.sizes.findIndex((s) => s < 0);
  // runtime/executor/tensor_parser_portable.cpp parseTensor: each refusal below, in its order.
  if (t.storageOffset !== 0)
    err(
      'STRUCT_STORAGE_OFFSET',
      `${at} > storage_offset`,
      `storage_offset ${t.storageOffset}: the runtime supports 0 only (NotSupported at method load)`,
    );
  if (t.shapeDynamism === TensorShapeDynamism.DYNAMIC_UNBOUND)
    err(
      'STRUCT_SHAPE_DYNAMISM',
      `${at} > shape_dynamism`,
      'DYNAMIC_UNBOUND: the runtime refuses fully dynamic shapes (NotSupported at method load)',
    );
  if (rank > MAX_RANK)
    err('STRUCT_TENSOR_RANK', `${at} > sizes`, `${rank} dimensions; the runtime holds at most ${MAX_RANK} (InvalidProgram at method load)`);
  if (t.dimOrder.length !== rank) {
    err(
      'STRUCT_DIM_ORDER',
      `${at} > dim_order`,
      `dim_order has ${t.dimOrder.length} entries for a tensor of rank ${rank} (InvalidProgram at method load)`,
    );
  } else if (new Set(t.dimOrder).size !== rank || t.dimOrder.some((d) => d >= rank)) {
    err(
      'STRUCT_DIM_ORDER',
      `${at} > dim_order`,
      `dim_order [${t.dimOrder.join(', ')}] is not a permutation of 0..${rank - 1} (the runtime's dim_order_to_stride fails at method load)`,
    );
  }
  if (negative >= 0)
    err('STRUCT_TENSOR_SIZE', `${at} > sizes[${negative}]`, `size ${t.sizes[negative]} is negative (InvalidProgram at method load)`);
  const bytes = tensorBytes(t);
  // runtime/executor/program_validation.cpp validate_tensor: numel * element size must fit size_t.
  if (bytes !== undefined && bytes >= 1n << 63n)
    err('STRUCT_TENSOR_SIZE', `${at} > sizes`, `${bytes} bytes overflows the runtime's size arithmetic (InvalidProgram)`);

  const extra = t.extraTensorInfo;
  if (extra && !KNOWN_DEVICES.has(extra.deviceType)) {
    err(
      'STRUCT_DEVICE_TYPE',
      `${at} > extra_tensor_info.device_type`,
      `device_type ${extra.deviceType} is neither CPU (0) nor CUDA (1): the runtime has no allocator for it and its device copies fail at execute (NotFound)`,
    );
  }

  const alloc = t.allocationInfo;
  if (!alloc || alloc.memoryId === 0 || alloc.memoryId >= plan.nonConstBufferSizes.length) return; // structure.ts reports the arena id
  const offset = memoryOffset(alloc);
  const elem = elementSize(t.scalarType);
  if (elem !== undefined && offset % BigInt(elem) !== 0n) {
    err(
      'STRUCT_ARENA_ALIGNMENT',
      `${at} > allocation_info`,
      `offset ${offset} in arena ${alloc.memoryId} is not a multiple of the ${elem}-byte element: kernels would read it misaligned (the runtime loads it; trtx refuses, stricter)`,
    );
  }
  // A device-tagged tensor planned in a host arena is not refused here: the
  // runtime loads it, and ExecuTorch 1.5 itself plans that way when methods
  // share memory (the real corpus's llama-shared). What fails is device code
  // writing it in place: ZC_ALIASED_INPUT_HOST (zero-copy.ts).
  if (t.dataBufferIdx !== 0 && extra?.location !== TensorDataLocation.EXTERNAL) checkInitialState(pte, pte.program, t, at, err);
}

/** runtime/executor/program.cpp load_mutable_subsegment_into, as tensor_parser_exec_aten.cpp calls it (segments index 0). */
function checkInitialState(pte: PteFile, program: Program, t: Tensor, at: string, err: Report): void {
  const where = `${at} > data_buffer_idx`;
  const mds = program.mutableDataSegments[0];
  const idx = t.dataBufferIdx >>> 0;
  if (!mds)
    return err('STRUCT_MUTABLE_DATA', where, `initial state ${idx} but the program has no mutable_data_segments (NotFound at method load)`);
  const offset = mds.offsets[idx];
  if (offset === undefined)
    return err(
      'STRUCT_MUTABLE_DATA',
      where,
      `initial state ${idx} is outside mutable_data_segments[0].offsets (${mds.offsets.length} entries)`,
    );
  const seg = pte.segments[mds.segmentIndex];
  if (!seg || pte.segmentBase === 0)
    return err('STRUCT_MUTABLE_DATA', where, `mutable_data_segments[0] names segment ${mds.segmentIndex}, which the file does not have`);
  const bytes = tensorBytes(t) ?? 0n;
  if (offset + bytes > BigInt(seg.size)) {
    err(
      'STRUCT_MUTABLE_DATA',
      where,
      `initial state [${offset}, ${offset + bytes}) runs past its segment (${seg.size} bytes) (InvalidArgument at method load)`,
    );
  }
}

function checkPlan(pte: PteFile, plan: ExecutionPlan, planIndex: number, out: Diagnostic[]): void {
  const m = planName(plan, planIndex);
  const err: Report = (code, location, message) =>
    out.push(diag(pte.reportBudget, 'error', code, location, message, HINTS[code], { method: m }));

  plan.values.forEach((v, i) => {
    if (v.type === 'Tensor') checkTensor(pte, plan, v.tensor, `${m} > value ${valueLabel(plan, i)}`, err);
  });
  plan.nonConstBufferSizes.forEach((size, k) => {
    // runtime/executor/method_meta.cpp memory_planned_buffer_size: InvalidProgram on a negative size.
    if (size < 0n)
      err('STRUCT_ARENA_SIZE', `${m} > non_const_buffer_sizes[${k}]`, `arena ${k} has size ${size} (InvalidProgram at method load)`);
  });
  plan.nonConstBufferDevice.forEach((d, k) => {
    // extension/module/module.cpp make_planned_memory_with_devices: no allocator for the type aborts the process (ET_CHECK_MSG).
    if (!KNOWN_DEVICES.has(d.deviceType)) {
      err(
        'STRUCT_DEVICE_TYPE',
        `${m} > non_const_buffer_device[${k}].device_type`,
        `device_type ${d.deviceType} for arena ${d.bufferIdx} is neither CPU (0) nor CUDA (1): the runtime finds no allocator and aborts at method load`,
      );
    }
  });
  plan.operators.forEach((op, k) => {
    const at = `${m} > operators[${k}]`;
    if (op.name === null) return err('STRUCT_OPERATOR_NAME', at, 'operator has no name (InvalidProgram at method load)');
    const full = operatorName(op);
    // runtime/executor/method.cpp populate_operator_name: a 100-byte buffer, Internal error when truncated.
    const n = utf8Length(full);
    if (n >= OPERATOR_NAME_BUFFER)
      err(
        'STRUCT_OPERATOR_NAME',
        at,
        `operator name is ${n} bytes; the runtime's buffer holds ${OPERATOR_NAME_BUFFER - 1} (error at method load)`,
      );
  });
  // Kernel calls (their argument counts included): kernel-arguments.ts.
}

function checkConstantOffsets(pte: PteFile, out: Diagnostic[]): void {
  const cs = pte.program.constantSegment;
  if (!cs || cs.offsets.length <= 1) return; // one entry: the runtime does not load the segment (program.cpp)
  const seg = pte.segments[cs.segmentIndex];
  if (!seg) return; // structure.ts: STRUCT_CONSTANT_SEGMENT
  cs.offsets.forEach((o, k) => {
    if (o > BigInt(seg.size)) {
      out.push(
        diag(
          pte.reportBudget,
          'error',
          'STRUCT_CONSTANT_OFFSET',
          `program > constant_segment.offsets[${k}]`,
          `offset ${o} lies past the constant segment (${seg.size} bytes) (the runtime refuses it when a tensor loads it; trtx refuses it unused too, stricter)`,
          HINTS.STRUCT_CONSTANT_OFFSET,
        ),
      );
    }
  });
}

/**
 * Program-level findings, then every method's (kernel arguments: kernel-arguments.ts; the program as a whole: runtime-program.ts).
 * `trt`: the parsed TensorRT delegates, whose in-place caches the zero-copy rules check instead.
 */
export function checkRuntimeRefusals(pte: PteFile, trt: TrtDelegate[] = []): Diagnostic[] {
  const out: Diagnostic[] = checkRuntimeProgram(pte);
  checkConstantOffsets(pte, out);
  pte.program.executionPlan.forEach((plan, i) => {
    checkPlan(pte, plan, i, out);
    checkKernelArguments(plan, planName(plan, i), out, pte.reportBudget, inPlaceBuffers(pte.program, i, { trt }));
  });
  return out;
}
