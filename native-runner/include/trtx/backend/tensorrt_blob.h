// The TensorRT delegate blob (docs/file-format.md) and its hardened parser.
// Every refusal has its own code; the TypeScript codec (src/tensorrt/blob.ts)
// and the shared vectors (test/vectors/tensorrt-blob.json) use the same names
// and the same order, so a blob with several faults reports the same one:
//   header:   TRT_BLOB_TRUNCATED, TRT_BLOB_MAGIC, TRT_BLOB_METADATA_IN_HEADER,
//             TRT_BLOB_ENGINE_ALIGN, TRT_BLOB_METADATA_EXTENT,
//             TRT_BLOB_ENGINE_EXTENT, TRT_BLOB_OVERLAP (the metadata must end
//             at or before the engine offset, as upstream requires)
//   metadata: TRT_BLOB_METADATA_JSON for the whole document (strict JSON,
//             then field types), then per io_bindings entry NAME_EMPTY,
//             NAME_NUL, DUPLICATE; then TRT_ALIAS_IN_TR01; then per
//             aliased_io entry MISSING_SIDE, KIND, UNKNOWN_BINDING (output
//             side first), DIRECTION, DUPLICATE_OUTPUT, DUPLICATE_INPUT;
//             then agreement with Torch-TensorRT's own parser
//             (tensorrt_blob_upstream.h): TRT_NAME_ESCAPED,
//             TRT_BLOB_KEY_ORDER, TRT_BLOB_UPSTREAM_MISREAD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trtx/runtime/result.h"

namespace trtx::backend {

constexpr size_t kTrtBlobHeaderSize = 32;
constexpr uint32_t kTrtEngineAlignment = 16;

struct TrtBlobHeader {
  bool aliased_magic = false;  // TR02
  uint32_t metadata_offset = 0;
  uint32_t metadata_size = 0;
  uint32_t engine_offset = 0;
  uint64_t engine_size = 0;
};

struct TrtBinding {
  std::string name;
  bool is_input = false;
  bool has_dtype = false;
  std::string dtype;
  bool has_shape = false;      // a non-empty shape was recorded
  std::vector<int64_t> shape;  // -1 marks a dynamic extent
};

struct TrtAlias {
  std::string output;
  std::string input;
  std::string kind;           // kv_cache_update | user
  size_t output_binding = 0;  // index into TrtBlob::bindings
  size_t input_binding = 0;
};

struct TrtBlob {
  TrtBlobHeader header;
  std::vector<TrtBinding> bindings;  // io_bindings in document order
  std::vector<size_t> inputs;        // binding indices of inputs, in order
  std::vector<size_t> outputs;       // binding indices of outputs, in order
  std::vector<TrtAlias> aliased_io;
  bool hardware_compatible = false;
  int64_t device_id = 0;

  /// For an output binding index: the input binding it aliases, or -1.
  long aliased_input_of(size_t output_binding) const;

  /// aliased_input_of per binding, filled by the parser (a lookup per output
  /// of each execute, so no scan of aliased_io per output).
  std::vector<long> alias_input_by_binding;
};

/// Parses the 32-byte header of a blob of `blob_size` bytes and checks every
/// extent against it. `where` prefixes failure locations.
Result<TrtBlobHeader> parse_trt_blob_header(const uint8_t* header, size_t header_bytes, uint64_t blob_size,
                                            const std::string& where);

/// Parses the metadata JSON that `header` points at.
Result<TrtBlob> parse_trt_metadata(const TrtBlobHeader& header, std::string_view json, const std::string& where);

/// Both, over a blob held in memory.
Result<TrtBlob> parse_trt_blob(const uint8_t* data, size_t size, const std::string& where);

}  // namespace trtx::backend
