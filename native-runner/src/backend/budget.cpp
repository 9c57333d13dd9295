#include <algorithm>

#include "trtx/backend/backend.h"

namespace trtx::backend {

BudgetResolution resolve_budget(std::optional<uint64_t> option, std::optional<uint64_t> spec, bool engine_streams,
                                uint64_t streamable_bytes) {
  BudgetResolution r;
  r.streaming = engine_streams;
  r.streamable_bytes = streamable_bytes;
  if (option.has_value()) {
    r.source = "option";
    r.requested = option;
  } else if (spec.has_value()) {
    r.source = "spec";
    r.requested = spec;
  }
  r.resident_bytes = streamable_bytes;
  if (!engine_streams) {
    if (r.requested.has_value()) {
      r.ignored = "engine was not built with weight streaming; the " + r.source + " budget of " +
                  std::to_string(*r.requested) + " bytes does not apply";
    }
    return r;
  }
  if (r.requested.has_value()) {
    r.clamped = *r.requested > streamable_bytes;
    r.effective = r.clamped ? streamable_bytes : *r.requested;
  } else {
    // TensorRT sizes an automatic budget against free device memory; the
    // reference engine has nothing competing for it and keeps every
    // streamable byte resident.
    r.effective = streamable_bytes;
  }
  r.resident_bytes = std::min(*r.effective, streamable_bytes);
  r.streamed_bytes_per_execute = streamable_bytes - r.resident_bytes;
  return r;
}

}  // namespace trtx::backend
