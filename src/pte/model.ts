// The decoded ExecuTorch program: plain typed objects, one per schema table,
// with the schema's field names in camelCase. Everything trtx reads, checks
// or rewrites goes through these types; only decode.ts and encode.ts touch
// FlatBuffers.
//
// Fidelity rules (so that decode -> encode is a faithful round trip):
// - 64-bit schema fields are `bigint`, 32-bit and smaller are `number`.
// - A vector field the source file did not contain at all is listed in the
//   owning object's `$absent`; the encoder omits such a field while it is
//   still empty. New objects have no `$absent` and write empty vectors.
// - A string or table field the source did not contain is `null`.
// - Inline data (`Buffer.storage`, `BackendDelegateInlineData.data`) are
//   views into the decoded bytes, not copies.

import { ScalarType } from '../generated/executorch-flatbuffer/scalar-type.js';
import { DeviceType } from '../generated/executorch-flatbuffer/device-type.js';
import { DataLocation } from '../generated/executorch-flatbuffer/data-location.js';
import { TensorShapeDynamism } from '../generated/executorch-flatbuffer/tensor-shape-dynamism.js';
import { TensorDataLocation } from '../generated/executorch-flatbuffer/tensor-data-location.js';

export { ScalarType, DeviceType, DataLocation, TensorShapeDynamism, TensorDataLocation };

/** Names of vector fields absent from the source table (see file comment). */
export interface Fidelity {
  $absent?: string[];
}

export interface ContainerMetadata {
  encodedInpStr: string | null;
  encodedOutStr: string | null;
}

export interface AllocationDetails {
  memoryId: number;
  memoryOffsetLow: number;
  memoryOffsetHigh: number;
}

export interface ExtraTensorInfo {
  mutableDataSegmentsIdx: bigint;
  fullyQualifiedName: string | null;
  location: TensorDataLocation;
  deviceType: DeviceType;
  deviceIndex: number;
}

export interface Tensor extends Fidelity {
  scalarType: ScalarType;
  storageOffset: number;
  sizes: number[];
  dimOrder: number[];
  requiresGrad: boolean;
  dataBufferIdx: number;
  allocationInfo: AllocationDetails | null;
  layout: number;
  shapeDynamism: TensorShapeDynamism;
  extraTensorInfo: ExtraTensorInfo | null;
}

/** `EValue.val`: the KernelTypes union. `None` is a value with no member. */
export type EValue =
  | { type: 'None' }
  | { type: 'Null' }
  | { type: 'Int'; intVal: bigint }
  | { type: 'Bool'; boolVal: boolean }
  | { type: 'Double'; doubleVal: number }
  | { type: 'Tensor'; tensor: Tensor }
  | { type: 'String'; stringVal: string | null }
  | ({ type: 'IntList'; items: bigint[] } & Fidelity)
  | ({ type: 'DoubleList'; items: number[] } & Fidelity)
  | ({ type: 'BoolList'; items: boolean[] } & Fidelity)
  | ({ type: 'TensorList'; items: number[] } & Fidelity)
  | ({ type: 'OptionalTensorList'; items: number[] } & Fidelity);

export type EValueType = EValue['type'];

export interface Operator {
  name: string | null;
  overload: string | null;
}

/** `Instruction.instr_args`: the InstructionArguments union. */
export type Instruction =
  | { type: 'None' }
  | ({ type: 'KernelCall'; opIndex: number; args: number[] } & Fidelity)
  | ({ type: 'DelegateCall'; delegateIndex: number; args: number[] } & Fidelity)
  | { type: 'MoveCall'; moveFrom: number; moveTo: number }
  | { type: 'JumpFalseCall'; condValueIndex: number; destinationInstruction: number }
  | { type: 'FreeCall'; valueIndex: number };

export type InstructionType = Instruction['type'];

export interface Frame {
  filename: string | null;
  lineno: number;
  name: string | null;
  context: string | null;
}

export interface FrameList extends Fidelity {
  items: Frame[];
}

export interface BackendDelegateDataReference {
  location: DataLocation;
  index: number;
}

export interface CompileSpec extends Fidelity {
  key: string | null;
  value: Uint8Array;
}

export interface BackendDelegate extends Fidelity {
  id: string | null;
  processed: BackendDelegateDataReference | null;
  compileSpecs: CompileSpec[];
}

export interface Chain extends Fidelity {
  inputs: number[];
  outputs: number[];
  instructions: Instruction[];
  stacktrace: FrameList[];
}

export interface NonConstBufferDevice {
  bufferIdx: number;
  deviceType: DeviceType;
  deviceIndex: number;
}

export interface ExecutionPlan extends Fidelity {
  name: string | null;
  containerMetaType: ContainerMetadata | null;
  values: EValue[];
  inputs: number[];
  outputs: number[];
  chains: Chain[];
  operators: Operator[];
  delegates: BackendDelegate[];
  nonConstBufferSizes: bigint[];
  nonConstBufferDevice: NonConstBufferDevice[];
}

export interface Buffer extends Fidelity {
  storage: Uint8Array;
}

export interface BackendDelegateInlineData extends Fidelity {
  data: Uint8Array;
}

export interface DataSegment {
  offset: bigint;
  size: bigint;
}

export interface SubsegmentOffsets extends Fidelity {
  segmentIndex: number;
  offsets: bigint[];
}

export interface NamedData {
  key: string | null;
  segmentIndex: number;
}

export interface Program extends Fidelity {
  version: number;
  executionPlan: ExecutionPlan[];
  constantBuffer: Buffer[];
  backendDelegateData: BackendDelegateInlineData[];
  segments: DataSegment[];
  constantSegment: SubsegmentOffsets | null;
  mutableDataSegments: SubsegmentOffsets[];
  namedData: NamedData[];
}

/** The 64-bit planned offset of a tensor, from its two 32-bit halves. */
export function memoryOffset(a: AllocationDetails): bigint {
  return (BigInt(a.memoryOffsetHigh >>> 0) << 32n) | BigInt(a.memoryOffsetLow >>> 0);
}

/** Splits a 64-bit planned offset into the schema's two halves. */
export function splitMemoryOffset(offset: bigint): { memoryOffsetLow: number; memoryOffsetHigh: number } {
  return {
    memoryOffsetLow: Number(offset & 0xffffffffn),
    memoryOffsetHigh: Number((offset >> 32n) & 0xffffffffn),
  };
}
