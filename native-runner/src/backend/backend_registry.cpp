#include <mutex>
#include <utility>

#include "trtx/backend/backend.h"
#include "trtx/backend/tensorrt_backend.h"

namespace trtx::backend {

namespace {
std::vector<std::pair<std::string, const BackendInterface*>>& registry() {
  static std::vector<std::pair<std::string, const BackendInterface*>> r;
  return r;
}
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

bool register_backend(const std::string& id, const BackendInterface* backend) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const auto& e : registry()) {
    if (e.first == id) return false;
  }
  registry().emplace_back(id, backend);
  return true;
}

const BackendInterface* get_backend_class(std::string_view id) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const auto& e : registry()) {
    if (e.first == id) return e.second;
  }
  return nullptr;
}

std::vector<std::string> registered_backends() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::string> ids;
  for (const auto& e : registry()) ids.push_back(e.first);
  return ids;
}

void register_builtin_backends() {
  static TensorRTBackend trt;
  static std::once_flag once;
  std::call_once(once, [] { register_backend(TensorRTBackend::kId, &trt); });
}

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
  return r;
}

}  // namespace trtx::backend
