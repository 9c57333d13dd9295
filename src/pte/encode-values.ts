// The flatbuffer encoding of values (EValue and Tensor) and the vector
// helpers every table of src/pte/encode.ts uses. Inline data vectors are
// written 16-byte aligned, as the schema's force_align demands.

import * as flatbuffers from 'flatbuffers';
import { EValue as FbEValue } from '../generated/executorch-flatbuffer/evalue.js';
import { Tensor as FbTensor } from '../generated/executorch-flatbuffer/tensor.js';
import { AllocationDetails as FbAlloc } from '../generated/executorch-flatbuffer/allocation-details.js';
import { ExtraTensorInfo as FbExtra } from '../generated/executorch-flatbuffer/extra-tensor-info.js';
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
import type * as M from './model.js';

export type B = flatbuffers.Builder;
export type Offset = flatbuffers.Offset;

/** Inline tensor and delegate data alignment (schema force_align). */
export const INLINE_ALIGNMENT = 16;

/** Whether a vector field is written: always, unless the source omitted it and it is still empty. */
export function keep(obj: M.Fidelity, name: string, length: number): boolean {
  return length > 0 || !obj.$absent?.includes(name);
}

export function offsets(b: B, items: Offset[]): Offset {
  b.startVector(4, items.length, 4);
  for (const item of [...items].reverse()) b.addOffset(item);
  return b.endVector();
}

export function int32s(b: B, items: number[]): Offset {
  b.startVector(4, items.length, 4);
  for (const item of [...items].reverse()) b.addInt32(item);
  return b.endVector();
}

export function int64s(b: B, items: bigint[]): Offset {
  b.startVector(8, items.length, 8);
  for (const item of [...items].reverse()) b.addInt64(item);
  return b.endVector();
}

/** A byte vector whose first element is aligned to `align` in the final buffer. */
export function bytes(b: B, data: Uint8Array, align = 1): Offset {
  b.startVector(1, data.length, align);
  const builder = b as unknown as { space: number; bb: flatbuffers.ByteBuffer };
  builder.space -= data.length;
  builder.bb.bytes().set(data, builder.space);
  return b.endVector();
}

export const str = (b: B, s: string | null): Offset => (s === null ? 0 : b.createString(s));

function tensor(b: B, t: M.Tensor): Offset {
  const sizes = keep(t, 'sizes', t.sizes.length) ? int32s(b, t.sizes) : 0;
  const dimOrder = keep(t, 'dim_order', t.dimOrder.length) ? bytes(b, Uint8Array.from(t.dimOrder)) : 0;
  let extra = 0;
  if (t.extraTensorInfo) {
    const e = t.extraTensorInfo;
    const fqn = str(b, e.fullyQualifiedName);
    FbExtra.startExtraTensorInfo(b);
    FbExtra.addMutableDataSegmentsIdx(b, e.mutableDataSegmentsIdx);
    if (fqn) FbExtra.addFullyQualifiedName(b, fqn);
    FbExtra.addLocation(b, e.location);
    FbExtra.addDeviceType(b, e.deviceType);
    FbExtra.addDeviceIndex(b, e.deviceIndex);
    extra = FbExtra.endExtraTensorInfo(b);
  }
  let alloc = 0;
  if (t.allocationInfo) {
    const a = t.allocationInfo;
    alloc = FbAlloc.createAllocationDetails(b, a.memoryId, a.memoryOffsetLow, a.memoryOffsetHigh);
  }
  FbTensor.startTensor(b);
  FbTensor.addScalarType(b, t.scalarType);
  FbTensor.addStorageOffset(b, t.storageOffset);
  if (sizes) FbTensor.addSizes(b, sizes);
  if (dimOrder) FbTensor.addDimOrder(b, dimOrder);
  FbTensor.addRequiresGrad(b, t.requiresGrad);
  FbTensor.addDataBufferIdx(b, t.dataBufferIdx);
  if (alloc) FbTensor.addAllocationInfo(b, alloc);
  FbTensor.addLayout(b, t.layout);
  FbTensor.addShapeDynamism(b, t.shapeDynamism);
  if (extra) FbTensor.addExtraTensorInfo(b, extra);
  return FbTensor.endTensor(b);
}

/** A one-vector table (IntList and friends) that keeps an absent vector absent. */
function listTable(
  b: B,
  v: M.Fidelity & { items: unknown[] },
  start: (b: B) => void,
  add: (b: B, o: Offset) => void,
  end: (b: B) => Offset,
  vector: () => Offset,
): Offset {
  const items = keep(v, 'items', v.items.length) ? vector() : 0;
  start(b);
  if (items) add(b, items);
  return end(b);
}

function evalueBody(b: B, v: M.EValue): [KernelTypes, Offset] {
  switch (v.type) {
    case 'None':
      return [KernelTypes.NONE, 0];
    case 'Null':
      FbNull.startNull(b);
      return [KernelTypes.Null, FbNull.endNull(b)];
    case 'Int':
      return [KernelTypes.Int, FbInt.createInt(b, v.intVal)];
    case 'Bool':
      return [KernelTypes.Bool, FbBool.createBool(b, v.boolVal)];
    case 'Double':
      return [KernelTypes.Double, FbDouble.createDouble(b, v.doubleVal)];
    case 'Tensor':
      return [KernelTypes.Tensor, tensor(b, v.tensor)];
    case 'String':
      return [KernelTypes.String, FbString.createString(b, str(b, v.stringVal))];
    case 'IntList':
      return [
        KernelTypes.IntList,
        listTable(b, v, FbIntList.startIntList, FbIntList.addItems, FbIntList.endIntList, () => int64s(b, v.items)),
      ];
    case 'DoubleList':
      return [
        KernelTypes.DoubleList,
        listTable(b, v, FbDoubleList.startDoubleList, FbDoubleList.addItems, FbDoubleList.endDoubleList, () =>
          FbDoubleList.createItemsVector(b, v.items),
        ),
      ];
    case 'BoolList':
      return [
        KernelTypes.BoolList,
        listTable(b, v, FbBoolList.startBoolList, FbBoolList.addItems, FbBoolList.endBoolList, () =>
          FbBoolList.createItemsVector(b, v.items),
        ),
      ];
    case 'TensorList':
      return [
        KernelTypes.TensorList,
        listTable(b, v, FbTensorList.startTensorList, FbTensorList.addItems, FbTensorList.endTensorList, () => int32s(b, v.items)),
      ];
    case 'OptionalTensorList':
      return [
        KernelTypes.OptionalTensorList,
        listTable(
          b,
          v,
          FbOptionalTensorList.startOptionalTensorList,
          FbOptionalTensorList.addItems,
          FbOptionalTensorList.endOptionalTensorList,
          () => int32s(b, v.items),
        ),
      ];
  }
}

export function evalue(b: B, v: M.EValue): Offset {
  const [type, body] = evalueBody(b, v);
  FbEValue.startEValue(b);
  FbEValue.addValType(b, type);
  if (body) FbEValue.addVal(b, body);
  return FbEValue.endEValue(b);
}
