// Codes of the file formats trtx reads: the .pte container, the TensorRT
// delegate blob, its compile specs and the trtx reference engine. Each list
// maps a code to what it means; docs/codes.md is generated from them
// (scripts/gen-codes.ts) and test/codes.test.ts proves every code trtx can
// emit is in one of the lists in src/codes/.

/** The .pte container: header, FlatBuffer, segments (src/pte/). */
export const PTE_CODES = {
  PTE_NOT_A_PROGRAM: 'the file is not an ExecuTorch program (empty, too short, or another format at bytes 4..7)',
  PTE_IDENTIFIER: 'the file identifier names a program format version trtx does not read (it reads ET12)',
  PTE_TRUNCATED:
    'the file is shorter than its header or segment table says (an incomplete copy or download): the message gives the size it should have and the size it has',
  PTE_EXTENDED_HEADER: 'the extended header (eh00) is malformed or of an unknown version',
  PTE_PROGRAM_SIZE:
    'the extended header claims a program size no program can have: smaller than the headers, larger than a FlatBuffer, or past the end where its other fields contradict it (a file merely cut short is PTE_TRUNCATED)',
  PTE_ROOT_OFFSET: 'the root table offset lies outside the program bytes',
  PTE_SEGMENT_BASE:
    'segments exist but the segment base offset is missing, inside the program, or past any file (a file merely cut short is PTE_TRUNCATED)',
  PTE_SEGMENT_DATA_SIZE:
    'the extended header claims segment data without a segment base, or more than any file holds (a file merely cut short is PTE_TRUNCATED)',
  PTE_SEGMENT_EXTENT:
    'a segment runs past the end of the file, where the header\u2019s segment data size says the file is whole (a file merely cut short is PTE_TRUNCATED)',
  PTE_SEGMENT_ORDER: 'segments overlap or are out of order',
  PTE_FLATBUFFER:
    'the program FlatBuffer fails verification (an offset, vtable, vector or string outside the buffer, misaligned, or an unknown union member)',
  PTE_DECODE_BUDGET:
    'the program\u2019s offsets reach the same data so often that decoding would exceed twice its size (stricter than ExecuTorch)',
  PTE_RANGE: 'a read of the file was asked for a range outside it',
  PTE_VALUE_INDEX: 'a value index lies outside the method\u2019s values',
  PTE_DELEGATE_DATA: 'a delegate\u2019s processed data reference names inline data or a segment that does not exist',
  PTE_REWRITE_INTERRUPTED: 'an in-place rewrite of this file was interrupted and its journal cannot finish it',
  PTE_REWRITE_IN_PROGRESS: 'an in-place rewrite is writing this file right now',
} as const;

/** The TensorRT delegate blob codec (src/tensorrt/blob*.ts), shared with the runner and the test vectors. */
export const TRT_BLOB_CODES = {
  TRT_BLOB_TRUNCATED: 'the blob is shorter than its header or the sizes the header declares',
  TRT_BLOB_MAGIC: 'the blob does not start with TR01 or TR02',
  TRT_BLOB_METADATA_IN_HEADER: 'the metadata offset points inside the 32-byte header',
  TRT_BLOB_METADATA_EXTENT: 'the metadata runs past the end of the blob',
  TRT_BLOB_ENGINE_EXTENT: 'the engine runs past the end of the blob',
  TRT_BLOB_OVERLAP: 'the metadata and the engine overlap',
  TRT_BLOB_ENGINE_ALIGN: 'the engine offset is not 16-byte aligned',
  TRT_BLOB_METADATA_JSON: 'the metadata is not strict JSON of the expected shape',
  TRT_BINDING_NAME_EMPTY: 'an io binding has an empty name',
  TRT_BINDING_NAME_NUL: 'an io binding name contains a NUL character',
  TRT_BINDING_DUPLICATE: 'two io bindings share a name',
  TRT_ALIAS_MISSING_SIDE: 'an aliased_io entry lacks its output or its input',
  TRT_ALIAS_UNKNOWN_BINDING: 'an aliased_io entry names a binding the engine does not have',
  TRT_ALIAS_DIRECTION: 'an aliased_io entry names an input as its output side or an output as its input side',
  TRT_ALIAS_DUPLICATE_OUTPUT: 'two aliased_io entries share an output',
  TRT_ALIAS_DUPLICATE_INPUT: 'two aliased_io entries share an input',
  TRT_ALIAS_KIND: 'an aliased_io entry has a kind other than kv_cache_update or user',
  TRT_ALIAS_IN_TR01: 'a TR01 blob carries aliased_io, which only TR02 may',
  TRT_NAME_ESCAPED: 'a name with an escape that Torch-TensorRT\u2019s metadata parser would read differently',
  TRT_BLOB_KEY_ORDER: 'metadata keys in an order Torch-TensorRT\u2019s parser would read differently',
  TRT_BLOB_UPSTREAM_MISREAD: 'metadata Torch-TensorRT\u2019s parser would read differently from trtx',
} as const;

/** TensorRT compile specs (src/tensorrt/compile-specs.ts, shared-kv-cache.ts). */
export const SPEC_CODES = {
  SPEC_BUDGET_INVALID: 'weight_streaming_budget is not a byte count Torch-TensorRT reads, or a requested budget is outside [0, 2^63)',
  SPEC_BUDGET_DUPLICATE: 'a delegate carries weight_streaming_budget more than once, which Torch-TensorRT refuses at load',
  SPEC_BUDGET_FORM: 'weight_streaming_budget is read, but not in the plain decimal form trtx writes (a warning)',
  SPEC_DUPLICATE_KEY: 'a compile spec key repeats; ExecuTorch reads the first (a warning)',
  SPEC_TARGET_DEVICE_INVALID: 'target_device is not a device ExecuTorch can read, or a requested device index is out of range',
  SPEC_TARGET_DEVICE_FORM: 'target_device is read, but not as written: another spelling of cuda:N, or the host (a warning)',
  SPEC_ZERO_COPY_KV_INVALID: 'zero_copy_kv is not a JSON list of aliased output names, or repeats with another value',
  SPEC_SHARED_KV_CACHE_INVALID: 'shared_kv_cache is not a JSON list of buffer names',
  JSON_UNENCODABLE: 'a value cannot be written as the strict JSON a spec or the metadata needs',
} as const;

/** The trtx reference engine (schemas/reference_engine.fbs, src/tensorrt/standin-engine.ts). */
export const REF_ENGINE_CODES = {
  REF_ENGINE_TRUNCATED: 'the engine is shorter than a FlatBuffer header',
  REF_ENGINE_IDENTIFIER: 'the engine\u2019s identifier is not TRXE (a TensorRT plan, say)',
  REF_ENGINE_MALFORMED: 'the engine FlatBuffer fails verification',
  REF_ENGINE_VERSION: 'the engine format version is not one this reader knows',
  REF_ENGINE_OP: 'an engine step has no op',
  REF_ENGINE_BINDING: 'an engine step names a binding that does not exist or does not fit its role',
  REF_ENGINE_VALUE: 'a value given to the engine writer does not fit its field',
  REF_ENGINE_PROGRAM:
    'a version-2 engine\u2019s program is missing, is not an ExecuTorch program trtx can decode, or lacks its method forward (or a version-1 engine carries one)',
} as const;

/** The reference outputs file `trtx export` records eager PyTorch's outputs in (schemas/reference-outputs.schema.json, src/reference/). */
export const REFERENCE_CODES = {
  REFERENCE_MISSING: 'the reference outputs file does not exist or cannot be read',
  REFERENCE_JSON: 'the reference outputs file is not JSON',
  REFERENCE_SCHEMA: 'the reference outputs file does not match its schema (trtx.reference/1)',
  REFERENCE_DATA: 'a recorded tensor\u2019s data is not base64 of exactly numel \u00d7 itemsize bytes',
  REFERENCE_PROGRAM: 'the reference outputs do not fit the program: a method it lacks, or another number of inputs or outputs',
} as const;

/** The runner\u2019s tensor files (TRXT, `trtx-runner run --inputs/--outputs`, src/runner/tensor-file.ts). */
export const TENSOR_FILE_CODES = {
  TENSOR_FILE_TRUNCATED: 'a tensor file ends before the record its header or sizes promise',
  TENSOR_FILE_MAGIC: 'a tensor file does not start with TRXT, or is of a version trtx does not read',
  TENSOR_FILE_VALUE:
    'a tensor file record has an unknown kind or dtype, sizes that disagree with its bytes, or limits past trtx\u2019s bounds',
} as const;
