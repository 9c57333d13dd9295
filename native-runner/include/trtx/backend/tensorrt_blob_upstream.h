// What Torch-TensorRT's own C++ blob parser reads from a metadata document
// (pytorch/TensorRT cpp/src/torch_tensorrt/executorch/TensorRTBlobHeader.cpp,
// parse_metadata_json), and the refusal of a blob it would read differently
// from this runner's strict parser. The TypeScript twin is
// src/tensorrt/upstream-reading.ts and src/tensorrt/upstream-agreement.ts;
// the shared vectors hold both to the same codes:
//   TRT_NAME_ESCAPED           a name, alias side, kind or key holds a JSON
//                              escape other than \" \\ \/, which upstream
//                              reads as the escape's letters;
//   TRT_BLOB_KEY_ORDER         aliased_io (non-empty) or device_id (not 0)
//                              written before io_bindings, where upstream
//                              does not look;
//   TRT_BLOB_UPSTREAM_MISREAD  any other difference, or a document upstream
//                              cannot read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trtx/backend/tensorrt_blob.h"
#include "trtx/runtime/result.h"

namespace trtx::backend {

struct UpstreamEntry {
  std::string name;  // as upstream reads it; empty when absent
  bool is_input = false;
  bool kept = false;          // a non-empty name: in the input or output list
  bool lossy_escape = false;  // a key or the name held an escape upstream misreads
};

struct UpstreamAlias {
  std::string output;
  std::string input;
  std::string kind;
  bool lossy_escape = false;
};

struct UpstreamReading {
  bool ok = false;
  std::string reason;  // why upstream cannot read it, when !ok
  std::vector<UpstreamEntry> entries;
  bool aliases_found = false;  // "aliased_io" key text after the io_bindings array
  std::vector<UpstreamAlias> alias_entries;
  int device_id = 0;
  bool device_id_found = false;
  bool hardware_compatible = false;
};

/// Replays upstream's walk over the metadata bytes.
UpstreamReading read_like_upstream(std::string_view json);

/// Fails with the first difference between `blob` (this parser's reading of
/// `json`) and upstream's reading of the same bytes.
Status check_upstream_agreement(const TrtBlob& blob, std::string_view json, const std::string& where);

}  // namespace trtx::backend
