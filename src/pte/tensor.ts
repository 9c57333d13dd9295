// Tensor facts derived from the program: element sizes, byte sizes, where a
// planned tensor lives (arena, offset, device), and value lookups that name
// the place a bad index came from.

import { TrtxError } from '../util/errors.js';
import { DeviceType, ScalarType, memoryOffset, type EValue, type ExecutionPlan, type Operator, type Tensor } from './model.js';

/** Bytes per element of each scalar type (packed sub-byte types round up). */
const ELEMENT_SIZE: Partial<Record<ScalarType, number>> = {
  [ScalarType.BYTE]: 1,
  [ScalarType.CHAR]: 1,
  [ScalarType.SHORT]: 2,
  [ScalarType.INT]: 4,
  [ScalarType.LONG]: 8,
  [ScalarType.HALF]: 2,
  [ScalarType.FLOAT]: 4,
  [ScalarType.DOUBLE]: 8,
  [ScalarType.BOOL]: 1,
  [ScalarType.QINT8]: 1,
  [ScalarType.QUINT8]: 1,
  [ScalarType.QINT32]: 4,
  [ScalarType.BFLOAT16]: 2,
  [ScalarType.QUINT4X2]: 1,
  [ScalarType.QUINT2X4]: 1,
  [ScalarType.BITS16]: 2,
  [ScalarType.FLOAT8E5M2]: 1,
  [ScalarType.FLOAT8E4M3FN]: 1,
  [ScalarType.FLOAT8E5M2FNUZ]: 1,
  [ScalarType.FLOAT8E4M3FNUZ]: 1,
  [ScalarType.UINT16]: 2,
  [ScalarType.UINT32]: 4,
  [ScalarType.UINT64]: 8,
};

export function elementSize(t: ScalarType): number | undefined {
  return ELEMENT_SIZE[t];
}

export function scalarTypeName(t: ScalarType): string {
  return ScalarType[t] ?? `scalar_type(${t})`;
}

// ExecuTorch refuses a tensor of more than kTensorDimensionLimit (16)
// dimensions (runtime/core/portable_type/tensor_impl.h), but a program may
// list one tensor with 100,000 of them and reference it a million times:
// reports ask its size once per reference. The product of such a shape is
// remembered by its sizes array, so each reference costs O(1), not O(dims).
const LONG_SHAPE = 16;
const longShapes = new WeakMap<readonly number[], { length: number; numel: bigint }>();

/** Element count; sizes are i32 on the wire, a negative one counts as 0. */
export function numel(t: Tensor): bigint {
  if (t.sizes.length <= LONG_SHAPE) return product(t.sizes);
  const known = longShapes.get(t.sizes);
  if (known && known.length === t.sizes.length) return known.numel;
  const n = product(t.sizes);
  longShapes.set(t.sizes, { length: t.sizes.length, numel: n });
  return n;
}

const product = (sizes: readonly number[]) => sizes.reduce((n, s) => n * BigInt(Math.max(0, s)), 1n);

/** Byte size of a tensor's data, or undefined for an unknown scalar type. */
export function tensorBytes(t: Tensor): bigint | undefined {
  const e = elementSize(t.scalarType);
  return e === undefined ? undefined : numel(t) * BigInt(e);
}

export interface DevicePlace {
  type: 'cpu' | 'cuda';
  index: number;
}

export const deviceLabel = (d: DevicePlace) => (d.type === 'cpu' ? 'cpu' : `cuda:${d.index}`);

/** Where an arena is allocated, per non_const_buffer_device (absent: CPU). */
export function arenaDevice(plan: ExecutionPlan, arena: number): DevicePlace {
  const entry = plan.nonConstBufferDevice.find((d) => d.bufferIdx === arena);
  if (!entry || entry.deviceType === DeviceType.CPU) return { type: 'cpu', index: 0 };
  return { type: 'cuda', index: entry.deviceIndex };
}

/** The device a tensor's tag claims (extra_tensor_info), CPU when untagged. */
export function taggedDevice(t: Tensor): DevicePlace {
  const x = t.extraTensorInfo;
  if (!x || x.deviceType === DeviceType.CPU) return { type: 'cpu', index: 0 };
  return { type: 'cuda', index: x.deviceIndex };
}

export interface Placement {
  arena: number;
  offset: bigint;
  bytes: bigint;
  device: DevicePlace;
}

/** Arena placement of a planned tensor, or null for unplanned and constant tensors. */
export function placement(plan: ExecutionPlan, t: Tensor): Placement | null {
  if (!t.allocationInfo) return null;
  return {
    arena: t.allocationInfo.memoryId,
    offset: memoryOffset(t.allocationInfo),
    bytes: tensorBytes(t) ?? 0n,
    device: arenaDevice(plan, t.allocationInfo.memoryId),
  };
}

/**
 * A tensor's fully_qualified_name, or null when it has none. An empty name is
 * none: upstream omits the field on unnamed tensors, and an empty one is not
 * a name two buffers could be told apart by (read as one, every unnamed
 * cache was "the same" and the zero-copy rewrite refused them as swapped).
 * Every reader of names goes through here.
 */
export function tensorName(t: Tensor): string | null {
  return t.extraTensorInfo?.fullyQualifiedName || null;
}

/** The value at `index`, refusing an index outside the plan's values. */
export function valueAt(plan: ExecutionPlan, index: number, where: string): EValue {
  const value = Number.isInteger(index) && index >= 0 ? plan.values[index] : undefined;
  if (value === undefined) {
    throw new TrtxError('PTE_VALUE_INDEX', where, `value index ${index} is outside values[0..${plan.values.length - 1}]`);
  }
  return value;
}

/** The tensor at `index`, or null when the value is not a tensor. */
export function tensorAt(plan: ExecutionPlan, index: number): Tensor | null {
  const v = plan.values[index];
  return v && v.type === 'Tensor' ? v.tensor : null;
}

/** A human name for value `index`: its fully qualified name or `%index`. */
export function valueLabel(plan: ExecutionPlan, index: number): string {
  const t = tensorAt(plan, index);
  const name = t && tensorName(t);
  return name ? `${name} (%${index})` : `%${index}`;
}

/** Method name for locations. */
export const planName = (plan: ExecutionPlan, i: number) => plan.name ?? `execution_plan[${i}]`;

/** An operator's full name as the runtime resolves it (`name.overload`); `unnamed` stands for a missing name. */
export const operatorName = (op: Operator, unnamed = '?') => `${op.name ?? unnamed}${op.overload ? `.${op.overload}` : ''}`;
