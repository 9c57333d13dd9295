// What the kernels trtx programs call read from their arguments. Each rule is one
// the ExecuTorch 1.5 runtime enforces at the first execute, or worse, one it
// does not enforce and then reads or writes memory it should not:
// - STRUCT_KERNEL_ARITY: the generated wrapper checks the boxed argument
//   count, ET_KERNEL_CHECK_MSG(stack.size() == N) (codegen/gen.py), and
//   refuses the call at execute (InvalidProgram);
// - STRUCT_KERNEL_ARG_TYPE: the generated kernel wrapper unboxes each
//   argument with toTensor()/toBool()/toScalar() (codegen/gen.py), which
//   ET_CHECKs the value's tag: another type aborts the process
//   (runtime/core/evalue.h);
// - STRUCT_TENSOR_NO_MEMORY: a tensor with no allocation_info, no constant
//   data and no external data gets a null data pointer at method load
//   (runtime/executor/tensor_parser_exec_aten.cpp getTensorDataPtr: memory
//   the application sets for a method input or output); any other such
//   tensor an instruction reads or writes is a null dereference or a refused
//   copy at execute;
// - STRUCT_KERNEL_RETURN: aten::copy_ has no out argument, so the wrapper
//   stores its result (self) in the return slot; a slot other than self's
//   index rebinds that value to self's tensor (a later _h2d_copy into it
//   then writes the wrong tensor, or is refused);
// - STRUCT_COPY_DEVICE: et_copy::_h2d_copy reads a CPU source into a
//   device-tagged out, _d2h_copy the reverse, and refuse anything else
//   (kernels/portable/cpu/op__device_copy.cpp, InvalidArgument);
// - STRUCT_COPY_SHAPE: the device copies resize out to self's sizes (a
//   static out of other sizes is refused, InvalidArgument) and then copy
//   self.nbytes() bytes without comparing dtypes: an out of a narrower
//   element type is overrun, a wider one left half written;
// - STRUCT_COPY_OVERLAP: aten::copy_ copies src into self with one memcpy
//   (kernels/portable/cpu/op_copy.cpp): planned ranges that partly overlap
//   are undefined behaviour (AddressSanitizer: memcpy-param-overlap);
// - STRUCT_KERNEL_DEVICE_MEMORY: every operator outside a delegate runs as a
//   host kernel (kernels/portable/cpu); only the device copies
//   (op__device_copy.cpp) hand device memory to the registered allocator.
//   Any other kernel whose tensor is planned in a device arena
//   (non_const_buffer_device) loops over a cudaMalloc pointer on the host and
//   faults on a GPU, while on a CPU stand-in the same program runs: nothing
//   in the runtime refuses it first (runtime/executor/method.cpp). A cache a
//   TensorRT delegate updates in place is left to the zero-copy rules
//   (ZC_WRITEBACK_INTO_CACHE, ZC_OTHER_READER own a host kernel over it), so
//   one fault is one finding.
// The rules follow value indices: a call whose indices dangle is left to
// structure.ts (STRUCT_VALUE_INDEX).

import {
  TensorDataLocation,
  TensorShapeDynamism,
  type EValue,
  type EValueType,
  type ExecutionPlan,
  type Instruction,
  type Tensor,
} from '../pte/model.js';
import { deviceLabel, numel, operatorName, placement, scalarTypeName, taggedDevice, tensorBytes, valueLabel } from '../pte/tensor.js';
import { itemAt, present } from '../util/present.js';
import type { ReportBudget } from '../util/report-budget.js';
import { diag, type Diagnostic } from './diagnostic.js';

export const KERNEL_ARGUMENT_HINTS = {
  STRUCT_KERNEL_ARG_TYPE: 're-export the program; the kernel wrapper aborts the process on an argument of another type',
  STRUCT_TENSOR_NO_MEMORY:
    're-run memory planning (re-export); a tensor an instruction reads or writes needs planned memory, constant data, or to be a method input or output',
  STRUCT_KERNEL_RETURN: 're-export the program; ExecuTorch writes a function\u2019s own result index (self) in its return slot',
  STRUCT_COPY_DEVICE: 're-export the program; a host-to-device copy reads a CPU tensor into a device-tagged one (and the reverse)',
  STRUCT_COPY_SHAPE: 're-export the program; a device copy needs out of the same dtype and sizes as self',
  STRUCT_COPY_OVERLAP: 're-run memory planning (re-export); a copy\u2019s source and destination must not partly overlap',
  STRUCT_KERNEL_DEVICE_MEMORY:
    'keep the tensor in a host arena and stage it with et_copy::_d2h_copy/_h2d_copy (ExecuTorch\u2019s device-copy pass does), or move the operator into the delegate',
} as const;

/** STRUCT_KERNEL_ARITY's hint; the code is declared with the runtime refusals (runtime-refusals.ts). */
export const KERNEL_ARITY_HINT = 're-export the program; the kernel wrapper refuses a call with another number of arguments';

export type KernelArgumentCode = keyof typeof KERNEL_ARGUMENT_HINTS;
export const KERNEL_ARGUMENT_CODES = Object.keys(KERNEL_ARGUMENT_HINTS) as KernelArgumentCode[];

type Kind = 'Tensor' | 'Bool' | 'Scalar';

/**
 * How the generated wrapper unboxes each of the schema's arguments (out
 * included); the last boxed slot is the return value, which an out variant
 * leaves alone and a function without out arguments overwrites with its
 * result (codegen/gen.py: `*stack[N] = EValue(result_)`). The boxed
 * count the wrapper checks is therefore args.length + 1. Schemas:
 * kernels/portable/et_copy_ops.yaml, kernels/portable/functions.yaml.
 */
const SIGNATURES: Record<string, { args: Kind[]; returnsSelf: boolean }> = {
  'et_copy::_h2d_copy.out': { args: ['Tensor', 'Tensor'], returnsSelf: false }, // (self, *, out) -> out
  'et_copy::_d2h_copy.out': { args: ['Tensor', 'Tensor'], returnsSelf: false },
  'aten::copy_': { args: ['Tensor', 'Tensor', 'Bool'], returnsSelf: true }, // (self, src, non_blocking) -> self
  'aten::add.out': { args: ['Tensor', 'Tensor', 'Scalar', 'Tensor'], returnsSelf: false }, // (self, other, *, alpha, out) -> out
};

/** runtime/core/evalue.h: toScalar() takes Int, Double or Bool. */
const ACCEPTS: Record<Kind, readonly EValueType[]> = { Tensor: ['Tensor'], Bool: ['Bool'], Scalar: ['Int', 'Double', 'Bool'] };
const UNBOX: Record<Kind, string> = { Tensor: 'toTensor()', Bool: 'toBool()', Scalar: 'toScalar()' };

type Report = (code: KernelArgumentCode | 'STRUCT_KERNEL_ARITY', location: string, message: string) => void;

const onDevice = (t: Tensor) => taggedDevice(t).type !== 'cpu';
const sameSizes = (a: Tensor, b: Tensor) => a.sizes.length === b.sizes.length && a.sizes.every((s, i) => s === b.sizes[i]);

function checkDeviceCopy(plan: ExecutionPlan, op: string, self: number, out: number, at: string, err: Report): void {
  const [s, o] = [plan.values[self], plan.values[out]] as [EValue, EValue];
  if (s.type !== 'Tensor' || o.type !== 'Tensor') return;
  const h2d = op === 'et_copy::_h2d_copy.out';
  const name = h2d ? '_h2d_copy' : '_d2h_copy';
  if (onDevice(s.tensor) === h2d) {
    err(
      'STRUCT_COPY_DEVICE',
      at,
      `${name} reads self ${valueLabel(plan, self)}, tagged ${onDevice(s.tensor) ? 'CUDA' : 'CPU'}; it must be ${h2d ? 'on the CPU' : 'on a device'} (InvalidArgument at execute)`,
    );
  }
  if (onDevice(o.tensor) !== h2d) {
    err(
      'STRUCT_COPY_DEVICE',
      at,
      `${name} writes out ${valueLabel(plan, out)}, tagged ${onDevice(o.tensor) ? 'CUDA' : 'CPU'}; it must be ${h2d ? 'on a device' : 'on the CPU'} (InvalidArgument at execute)`,
    );
  }
  // The device side's memory is its arena's (tensor_parser_exec_aten.cpp
  // getMemPlannedPtr): a CUDA tag in a host arena hands the device allocator
  // host memory as device memory (cudaMemcpy in the wrong direction; the
  // runner's allocator refuses the copy).
  const [deviceIndex, deviceSide] = h2d ? [out, o.tensor] : [self, s.tensor];
  const where = placement(plan, deviceSide);
  if (onDevice(deviceSide) && where && where.device.type === 'cpu') {
    err(
      'STRUCT_COPY_DEVICE',
      at,
      `${name} ${h2d ? 'writes out' : 'reads self'} ${valueLabel(plan, deviceIndex)}, tagged CUDA but planned in host arena ${where.arena}: the device allocator would be handed host memory as device memory (refused at execute)`,
    );
  }
  if (s.tensor.scalarType !== o.tensor.scalarType) {
    err(
      'STRUCT_COPY_SHAPE',
      at,
      `${name} copies self.nbytes() of ${scalarTypeName(s.tensor.scalarType)} ${valueLabel(plan, self)} into ${scalarTypeName(o.tensor.scalarType)} ${valueLabel(plan, out)}: the kernel compares no dtypes and would overrun or half-fill out`,
    );
  } else if (o.tensor.shapeDynamism === TensorShapeDynamism.STATIC && !sameSizes(s.tensor, o.tensor)) {
    err(
      'STRUCT_COPY_SHAPE',
      at,
      `${name} resizes out ${valueLabel(plan, out)} [${o.tensor.sizes.join(', ')}] to self's sizes [${s.tensor.sizes.join(', ')}]; a static tensor cannot be resized (InvalidArgument at execute)`,
    );
  } else if ((tensorBytes(s.tensor) ?? 0n) > (tensorBytes(o.tensor) ?? 0n)) {
    err(
      'STRUCT_COPY_SHAPE',
      at,
      `${name} copies ${tensorBytes(s.tensor)} bytes into out ${valueLabel(plan, out)}, planned for ${tensorBytes(o.tensor)} (InvalidArgument at execute)`,
    );
  }
}

function checkCopyOverlap(plan: ExecutionPlan, dst: number, src: number, at: string, err: Report): void {
  const [d, s] = [plan.values[dst], plan.values[src]] as [EValue, EValue];
  if (d.type !== 'Tensor' || s.type !== 'Tensor') return;
  const [pd, ps] = [placement(plan, d.tensor), placement(plan, s.tensor)];
  if (!pd || !ps || pd.arena !== ps.arena || pd.bytes === 0n || ps.bytes === 0n) return;
  // The same start is a copy onto itself, which memcpy's callers in the
  // sanitizers and the kernel both let through; a partial overlap is not.
  const overlaps = pd.offset < ps.offset + ps.bytes && ps.offset < pd.offset + pd.bytes;
  if (overlaps && pd.offset !== ps.offset) {
    err(
      'STRUCT_COPY_OVERLAP',
      at,
      `aten::copy_ copies ${valueLabel(plan, src)} [${ps.offset}, ${ps.offset + ps.bytes}) into ${valueLabel(plan, dst)} [${pd.offset}, ${pd.offset + pd.bytes}) of arena ${pd.arena}: the ranges partly overlap and the kernel's memcpy is undefined behaviour on them`,
    );
  }
}

/** Tensors of one call's arguments that nothing gives memory (see STRUCT_TENSOR_NO_MEMORY), each reported once per method (`seen`). */
function checkArgumentMemory(
  plan: ExecutionPlan,
  ins: Instruction & { args: number[] },
  io: Set<number>,
  seen: Set<number>,
  at: string,
  err: Report,
): void {
  for (const a of ins.args) {
    const v = plan.values[a];
    if (seen.has(a) || io.has(a) || v?.type !== 'Tensor') continue;
    const t = v.tensor;
    if (t.allocationInfo || t.dataBufferIdx !== 0 || t.extraTensorInfo?.location === TensorDataLocation.EXTERNAL || numel(t) === 0n)
      continue;
    seen.add(a);
    err(
      'STRUCT_TENSOR_NO_MEMORY',
      `${at} > ${valueLabel(plan, a)}`,
      `${valueLabel(plan, a)} is neither planned (no allocation_info) nor constant nor a method input or output: the runtime gives it no memory (a null data pointer) and the ${ins.type} reads or writes it`,
    );
  }
}

const DEVICE_COPIES = new Set(['et_copy::_h2d_copy.out', 'et_copy::_d2h_copy.out']);

/** A host kernel (any KernelCall but the device copies) over tensors planned in a device arena but `zeroCopy`'s, one report per call. */
function checkHostKernelMemory(
  plan: ExecutionPlan,
  full: string,
  args: number[],
  zeroCopy: ReadonlySet<number>,
  at: string,
  err: Report,
): void {
  if (DEVICE_COPIES.has(full)) return;
  const onDevice: string[] = [];
  for (const a of new Set(args)) {
    if (zeroCopy.has(a)) continue;
    const v = plan.values[a];
    const where = v?.type === 'Tensor' ? placement(plan, v.tensor) : null;
    if (where && where.device.type !== 'cpu')
      onDevice.push(`${valueLabel(plan, a)} in arena ${where.arena} on ${deviceLabel(where.device)}`);
  }
  if (onDevice.length === 0) return;
  err(
    'STRUCT_KERNEL_DEVICE_MEMORY',
    at,
    `${full} runs on the host (ExecuTorch runs every operator outside a delegate as a CPU kernel) over device memory: ${onDevice.join(', ')}; on a GPU its loop dereferences a cudaMalloc pointer and faults, on a CPU stand-in it runs`,
  );
}

/** The rules on one KernelCall of an operator trtx knows the schema of (SIGNATURES). */
function checkSignature(plan: ExecutionPlan, full: string, args: number[], at: string, err: Report): void {
  const signature = SIGNATURES[full];
  if (!signature) return;
  const arity = signature.args.length + 1;
  if (args.length !== arity) {
    err(
      'STRUCT_KERNEL_ARITY',
      at,
      `${args.length} arguments; ${full} takes ${arity} (its arguments, out, then the return value): the kernel refuses the call at execute (InvalidProgram)`,
    );
    return;
  }
  // Dangling indices are structure.ts's (STRUCT_VALUE_INDEX).
  const values = args.map((a) => (Number.isInteger(a) ? plan.values[a] : undefined));
  if (values.includes(undefined)) return;
  // The arity is checked: self, the second argument and the return slot are there.
  const arg = (i: number) => itemAt(args, i, `args of ${full}`);
  const ret = arg(signature.args.length);
  if (signature.returnsSelf && ret !== arg(0)) {
    err(
      'STRUCT_KERNEL_RETURN',
      `${at} > args[${signature.args.length}]`,
      `the return slot is ${valueLabel(plan, ret)}, not self ${valueLabel(plan, arg(0))}: the kernel wrapper stores its result there, rebinding that value to self's tensor for every later instruction`,
    );
  }
  let typed = true;
  signature.args.forEach((kind, i) => {
    const v = present(values[i], `argument ${i} of ${full}`);
    if (!ACCEPTS[kind].includes(v.type)) {
      typed = false;
      err(
        'STRUCT_KERNEL_ARG_TYPE',
        `${at} > args[${i}]`,
        `argument ${i} is ${valueLabel(plan, arg(i))}, a ${v.type} value; the kernel reads a ${kind} with ${UNBOX[kind]}, which aborts the process on another type`,
      );
    }
  });
  if (!typed) return;
  if (DEVICE_COPIES.has(full)) checkDeviceCopy(plan, full, arg(0), arg(1), at, err);
  if (full === 'aten::copy_') checkCopyOverlap(plan, arg(0), arg(1), at, err);
}

/**
 * Every call of `plan` in one walk: the memory of its tensors, and each
 * KernelCall by its operator. `zeroCopy`: buffers a TensorRT delegate
 * updates in place (zero-copy-scan.ts inPlaceBuffers), which the zero-copy
 * rules check instead.
 */
export function checkKernelArguments(
  plan: ExecutionPlan,
  m: string,
  out: Diagnostic[],
  budget: ReportBudget,
  zeroCopy: ReadonlySet<number> = new Set(),
): void {
  const err: Report = (code, location, message) =>
    out.push(
      diag(budget, 'error', code, location, message, code === 'STRUCT_KERNEL_ARITY' ? KERNEL_ARITY_HINT : KERNEL_ARGUMENT_HINTS[code], {
        method: m,
      }),
    );
  const io = new Set([...plan.inputs, ...plan.outputs]);
  const seen = new Set<number>();
  plan.chains.forEach((chain, c) =>
    chain.instructions.forEach((ins, k) => {
      if (ins.type !== 'KernelCall' && ins.type !== 'DelegateCall') return;
      const at = `${m} > chain ${c} > instruction ${k}`;
      checkArgumentMemory(plan, ins, io, seen, at, err);
      if (ins.type !== 'KernelCall') return;
      const op = plan.operators[ins.opIndex];
      const full = op?.name ? operatorName(op) : `operator ${ins.opIndex}`;
      const call = `${at} (KernelCall ${full})`;
      checkHostKernelMemory(plan, full, ins.args, zeroCopy, call, err);
      if (op?.name) checkSignature(plan, full, ins.args, call, err);
    }),
  );
}
