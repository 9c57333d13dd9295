// Codes of `trtx check` findings (diagnostics). A finding may also carry a
// code of the format lists (formats.ts) when reading a delegate's blob or
// compile specs fails; those are reported the same way.

/** Structure: indices, types and memory plans the ExecuTorch runtime would refuse at load (src/checks/structure.ts, runtime-refusals.ts). */
export const STRUCT_CODES = {
  STRUCT_VALUE_INDEX: 'an index names a value that does not exist',
  STRUCT_LIST_ITEM_TYPE: 'a tensor list names a value that is not a tensor',
  STRUCT_UNION_NONE: 'a value or instruction has no type',
  STRUCT_MEMBER_MISSING: 'a list or a call lacks the vector the runtime requires',
  STRUCT_OP_INDEX: 'a kernel call names an operator that does not exist',
  STRUCT_DELEGATE_INDEX: 'a delegate call names a delegate that does not exist',
  STRUCT_JUMP_DESTINATION: 'a jump names an instruction that does not exist',
  STRUCT_DELEGATE_ID: 'a delegate has no backend id',
  STRUCT_SCALAR_TYPE: 'a tensor has an element type the runtime does not know',
  STRUCT_ARENA_ID: 'a planned tensor names arena 0 (reserved) or an arena that is not planned',
  STRUCT_ARENA_EXTENT: 'a planned tensor runs past the end of its arena',
  STRUCT_ARENA_DEVICE_INDEX: 'non_const_buffer_device names an arena outside 1..N-1',
  STRUCT_ARENA_DEVICE_REPEAT: 'non_const_buffer_device gives one arena two entries',
  STRUCT_CONSTANT_INDEX: 'a constant tensor names constant data that does not exist',
  STRUCT_CONSTANT_EXTENT: 'a constant tensor reads past the end of its data',
  STRUCT_CONSTANT_SEGMENT: 'constant_segment names a segment that does not exist',
  STRUCT_TENSOR_SIZE: 'a tensor has a negative dimension or a byte size that overflows',
  STRUCT_TENSOR_RANK: 'a tensor has more than 16 dimensions',
  STRUCT_DIM_ORDER: 'a tensor\u2019s dim_order does not list each dimension once',
  STRUCT_STORAGE_OFFSET: 'a tensor has a storage_offset other than 0',
  STRUCT_SHAPE_DYNAMISM: 'a tensor is DYNAMIC_UNBOUND, which the runtime refuses',
  STRUCT_DEVICE_TYPE: 'a tensor or arena names a device type other than CPU or CUDA',
  STRUCT_ARENA_ALIGNMENT: 'a planned tensor\u2019s offset in its arena is not a multiple of its element size',
  STRUCT_ARENA_SIZE: 'an arena size is negative',
  STRUCT_MUTABLE_DATA: 'a planned tensor\u2019s initial state lies outside mutable_data_segments[0]',
  STRUCT_CONSTANT_OFFSET: 'a constant offset lies outside the constant segment',
  STRUCT_OPERATOR_NAME: 'an operator name is 100 bytes or longer, which the runtime cannot resolve',
  STRUCT_KERNEL_ARITY: 'a kernel call has another number of arguments than its kernel takes',
  STRUCT_PROGRAM_VERSION: 'the program\u2019s schema version is newer than the runtime reads (0 in ExecuTorch 1.5.1)',
  STRUCT_CONSTANT_BUFFER: 'no constant segment: the deprecated constant_buffer path, which ExecuTorch 1.5.1 is built without',
  STRUCT_NO_METHODS: 'the program has no execution plan',
  STRUCT_NO_CHAINS: 'a method has no chain of instructions',
  STRUCT_KERNEL_ARG_TYPE: 'a kernel argument has another type than the kernel unboxes (the runtime aborts)',
  STRUCT_TENSOR_NO_MEMORY: 'a tensor an instruction uses is neither planned, constant, nor a method input or output',
  STRUCT_KERNEL_RETURN: 'aten::copy_\u2019s return slot is not its self, which the kernel wrapper overwrites',
  STRUCT_COPY_DEVICE: 'a device copy\u2019s source or destination is on the wrong side (by tag or by arena)',
  STRUCT_COPY_SHAPE: 'a device copy\u2019s out has another dtype, or sizes it cannot be resized to',
  STRUCT_COPY_OVERLAP: 'aten::copy_\u2019s source and destination partly overlap in one arena',
  STRUCT_KERNEL_DEVICE_MEMORY: 'a host kernel (any KernelCall but the device copies) reads or writes a tensor planned in a device arena',
} as const;

/** TensorRT delegate calls against their engines' bindings (src/checks/tensorrt.ts). */
export const TRT_CHECK_CODES = {
  TRT_ARITY: 'a TensorRT call passes neither inputs + outputs (staged) nor inputs + outputs - aliased (zero-copy) arguments',
  TRT_ARG_NOT_TENSOR: 'a TensorRT call passes a non-tensor value to a binding',
  TRT_ARG_DTYPE: 'a TensorRT argument\u2019s element type differs from its binding\u2019s',
  TRT_ARG_SHAPE: 'a TensorRT argument\u2019s shape differs from its binding\u2019s',
  TRT_BINDING_DTYPE_UNKNOWN: 'a binding dtype trtx does not know, so the argument was not compared (a warning)',
  TRT_DEVICE_MISMATCH: 'a TensorRT argument lives on another device than the delegate\u2019s target_device',
  TRT_DEVICE_ID_MISMATCH: 'the blob\u2019s device_id (where Torch-TensorRT runs the engine) is not the device target_device names',
  TRT_BUDGET_MULTI_ENGINE: 'several engines each hold their own weight-streaming budget, and together may not fit (a warning)',
  TRT_REFERENCE_PROGRAM_ARITY:
    'a reference engine\u2019s program (version 2) takes another number of inputs or returns another number of outputs than the blob\u2019s bindings',
  TRT_REFERENCE_EXTERNAL_WEIGHT:
    'a version-3 reference engine\u2019s external weight has no key, is not in the program\u2019s named data, or its named data is another size than the tensor',
  TRT_SHARED_SEGMENT:
    'many TensorRT delegates name one blob (a segment or an inline entry): it is read once, but the runtime loads its engine once per delegate (a warning)',
  TRT_METADATA_FILE_LIMIT:
    'the TensorRT metadata of one file, every distinct blob counted once, passes the per-file limit (64 MiB): the blob past it is refused unread',
  TRT_REFERENCE_PROGRAM_DELEGATED:
    'a reference engine\u2019s program (version 2 or 3) is itself delegated: the runtime runs an engine\u2019s partition on kernels only and refuses it at load',
  TRT_BUDGET_STREAMS_NOTHING:
    'a delegate\u2019s weight-streaming budget is at least its engine\u2019s streamable weights: every weight stays resident and nothing streams (a warning)',
} as const;

/** The zero-copy KV rules (src/checks/zero-copy.ts, docs/zero-copy-kv.md). */
export const ZC_CHECK_CODES = {
  ZC_PARTIAL_ELISION: 'a delegate elides some of its aliased outputs but not all',
  ZC_USER_ALIAS: 'a delegate with elided outputs also has a user alias, which cannot be elided',
  ZC_NOT_ALIASED: 'an elided output is not aliased by the blob\u2019s aliased_io',
  ZC_STAGED_CACHE: 'an elided output\u2019s input is fed a staging copy, so the update is thrown away',
  ZC_NOT_A_BUFFER: 'an elided output\u2019s input is fed something other than a mutable buffer',
  ZC_LEFTOVER_STAGING: 'a zero-copy buffer still has a staging copy',
  ZC_OTHER_READER: 'something other than its engine reads a zero-copy buffer',
  ZC_CACHE_OFF_DEVICE: 'a zero-copy buffer is not planned in a CUDA arena on the delegate\u2019s device',
  ZC_CACHE_OVERLAP: 'a zero-copy buffer shares its region with another tensor',
  ZC_HOST_PLANNED: 'a method with zero-copy caches is planned in host arenas only',
  ZC_ALIASED_INPUT_HOST: 'an aliased input lives in host memory, which the runtime refuses for an in-place write',
  ZC_WRITEBACK_INTO_CACHE: 'a write-back targets a zero-copy buffer',
  ZC_NO_OUTPUTS_LEFT: 'a stamped delegate has no output left',
  ZC_SPEC_COUNT: 'a stamped delegate\u2019s zero_copy_kv does not match the buffers it updates',
  ZC_SWAPPED_CACHE: 'an engine is fed another engine\u2019s cache',
  ZC_SHARED_CACHE_UNDECLARED: 'a cache shared by engines or methods without a shared_kv_cache record',
  ZC_SHARED_CACHE_STALE: 'shared_kv_cache names a cache that is not shared',
  ZC_SHARED_CACHE_SPLIT: 'methods sharing a cache hold it on different devices, or zero-copy in one only',
  ZC_UNSTAMPED_DIRECT: 'a buffer is fed straight to an engine that is not stamped zero_copy_kv',
  ZC_UPDATE_MISSING: 'a mutable buffer is never updated: its new value is computed and thrown away',
  ZC_UPDATE_TWICE: 'a mutable buffer is updated twice in one execution',
  ZC_WRITEBACK_CROSSED: 'a staged aliased output is written back into another buffer than its own',
  ZC_NOT_ZERO_COPY: 'with --zero-copy-kv: a kv_cache_update alias is still staged',
  ZC_NO_KV_CACHE: 'with --zero-copy-kv: no engine declares a kv_cache_update alias (a warning)',
} as const;

/** What the runtime that executes the program needs (src/checks/runtime-hazards.ts, `check --runtime`). */
export const RT_CODES = {
  RT_DEVICE_STATE_UNINITIALIZED: 'device arenas are not cleared: the application initialises device-resident buffers',
  RT_DEVICE_INITIAL_STATE: 'initial state cannot be loaded into a device arena',
  RT_SHARED_DEVICE_ARENA: 'Module does not share device arenas between methods',
  RT_NEEDS_ZERO_COPY_TRT: 'a zero-copy call needs the zero-copy Torch-TensorRT runtime',
} as const;

/** The check run itself. */
export const CHECK_CODES = {
  CHECK_SKIPPED: 'a group of checks did not run because structural errors leave its indices dangling (info)',
  CHECK_RUNTIME_UNKNOWN: '--runtime names a runtime trtx does not know',
  CHECK_RUNTIME_CONFLICT: '--runtime names two runtimes of one axis',
} as const;
