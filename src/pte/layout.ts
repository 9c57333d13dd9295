// The wire layout of every ET12 table, field by field in vtable order, for
// the verifier. The generated TypeScript readers trust their input (they read
// whatever an offset points at), so a hostile file is checked against this
// layout first. test/pte-layout.test.ts proves it matches schemas/program.fbs.

export type Scalar = 'bool' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64';

export type FieldKind =
  | { k: 'scalar'; t: Scalar; enum?: string }
  | { k: 'string' }
  | { k: 'table'; table: string }
  | { k: 'vector'; of: Scalar }
  | { k: 'vectorOfStrings' }
  | { k: 'vectorOfTables'; table: string }
  /** A union occupies two slots: the type tag (u8) then the value offset. */
  | { k: 'union'; union: string };

export interface FieldLayout {
  name: string;
  kind: FieldKind;
}

export const SCALAR_SIZE: Record<Scalar, number> = {
  bool: 1, i8: 1, u8: 1, i16: 2, u16: 2, i32: 4, u32: 4, i64: 8, u64: 8, f32: 4, f64: 8,
};

const s = (t: Scalar): FieldKind => ({ k: 'scalar', t });
const e = (t: Scalar, name: string): FieldKind => ({ k: 'scalar', t, enum: name });
const str: FieldKind = { k: 'string' };
const tbl = (table: string): FieldKind => ({ k: 'table', table });
const vec = (of: Scalar): FieldKind => ({ k: 'vector', of });
const vtbl = (table: string): FieldKind => ({ k: 'vectorOfTables', table });
const f = (name: string, kind: FieldKind): FieldLayout => ({ name, kind });

/** Union members by type tag; tag 0 is NONE. */
export const UNIONS: Record<string, string[]> = {
  KernelTypes: ['NONE', 'Null', 'Int', 'Bool', 'Double', 'Tensor', 'String', 'IntList', 'DoubleList', 'BoolList', 'TensorList', 'OptionalTensorList'],
  InstructionArguments: ['NONE', 'KernelCall', 'DelegateCall', 'MoveCall', 'JumpFalseCall', 'FreeCall'],
};

export const TABLES: Record<string, FieldLayout[]> = {
  ContainerMetadata: [f('encoded_inp_str', str), f('encoded_out_str', str)],
  Null: [],
  AllocationDetails: [f('memory_id', s('u32')), f('memory_offset_low', s('u32')), f('memory_offset_high', s('u32'))],
  ExtraTensorInfo: [
    f('mutable_data_segments_idx', s('u64')),
    f('fully_qualified_name', str),
    f('location', e('i8', 'TensorDataLocation')),
    f('device_type', e('i8', 'DeviceType')),
    f('device_index', s('i8')),
  ],
  Tensor: [
    f('scalar_type', e('i8', 'ScalarType')),
    f('storage_offset', s('i32')),
    f('sizes', vec('i32')),
    f('dim_order', vec('u8')),
    f('requires_grad', s('bool')),
    f('data_buffer_idx', s('u32')),
    f('allocation_info', tbl('AllocationDetails')),
    f('layout', s('i8')),
    f('shape_dynamism', e('i8', 'TensorShapeDynamism')),
    f('extra_tensor_info', tbl('ExtraTensorInfo')),
  ],
  Int: [f('int_val', s('i64'))],
  Bool: [f('bool_val', s('bool'))],
  Double: [f('double_val', s('f64'))],
  String: [f('string_val', str)],
  IntList: [f('items', vec('i64'))],
  DoubleList: [f('items', vec('f64'))],
  BoolList: [f('items', vec('bool'))],
  TensorList: [f('items', vec('i32'))],
  OptionalTensorList: [f('items', vec('i32'))],
  EValue: [f('val', { k: 'union', union: 'KernelTypes' })],
  Operator: [f('name', str), f('overload', str)],
  KernelCall: [f('op_index', s('i32')), f('args', vec('i32'))],
  DelegateCall: [f('delegate_index', s('i32')), f('args', vec('i32'))],
  MoveCall: [f('move_from', s('i32')), f('move_to', s('i32'))],
  JumpFalseCall: [f('cond_value_index', s('i32')), f('destination_instruction', s('i32'))],
  FreeCall: [f('value_index', s('i32'))],
  Instruction: [f('instr_args', { k: 'union', union: 'InstructionArguments' })],
  Frame: [f('filename', str), f('lineno', s('i32')), f('name', str), f('context', str)],
  FrameList: [f('items', vtbl('Frame'))],
  BackendDelegateDataReference: [f('location', e('i8', 'DataLocation')), f('index', s('u32'))],
  CompileSpec: [f('key', str), f('value', vec('u8'))],
  BackendDelegate: [f('id', str), f('processed', tbl('BackendDelegateDataReference')), f('compile_specs', vtbl('CompileSpec'))],
  Chain: [f('inputs', vec('i32')), f('outputs', vec('i32')), f('instructions', vtbl('Instruction')), f('stacktrace', vtbl('FrameList'))],
  ExecutionPlan: [
    f('name', str),
    f('container_meta_type', tbl('ContainerMetadata')),
    f('values', vtbl('EValue')),
    f('inputs', vec('i32')),
    f('outputs', vec('i32')),
    f('chains', vtbl('Chain')),
    f('operators', vtbl('Operator')),
    f('delegates', vtbl('BackendDelegate')),
    f('non_const_buffer_sizes', vec('i64')),
    f('non_const_buffer_device', vtbl('NonConstBufferDevice')),
  ],
  NonConstBufferDevice: [f('buffer_idx', s('i32')), f('device_type', e('i8', 'DeviceType')), f('device_index', s('i8'))],
  Buffer: [f('storage', vec('u8'))],
  BackendDelegateInlineData: [f('data', vec('u8'))],
  DataSegment: [f('offset', s('u64')), f('size', s('u64'))],
  SubsegmentOffsets: [f('segment_index', s('u32')), f('offsets', vec('u64'))],
  NamedData: [f('key', str), f('segment_index', s('u32'))],
  Program: [
    f('version', s('u32')),
    f('execution_plan', vtbl('ExecutionPlan')),
    f('constant_buffer', vtbl('Buffer')),
    f('backend_delegate_data', vtbl('BackendDelegateInlineData')),
    f('segments', vtbl('DataSegment')),
    f('constant_segment', tbl('SubsegmentOffsets')),
    f('mutable_data_segments', vtbl('SubsegmentOffsets')),
    f('named_data', vtbl('NamedData')),
  ],
};

/** vtable slots a field occupies (a union takes two). */
export function slotCount(field: FieldLayout): number {
  return field.kind.k === 'union' ? 2 : 1;
}
