#include "trtx/et/caller_stream.h"

#include <vector>

namespace trtx::et {

namespace {
// Indexed by device; devices are small non-negative numbers (a program's
// device_index is a signed byte).
thread_local std::vector<std::optional<runtime::StreamRef>> t_caller_streams;
}  // namespace

std::optional<runtime::StreamRef> caller_stream(int device) {
  if (device < 0 || static_cast<size_t>(device) >= t_caller_streams.size()) return std::nullopt;
  return t_caller_streams[static_cast<size_t>(device)];
}

bool any_caller_stream() {
  for (const auto& s : t_caller_streams) {
    if (s.has_value()) return true;
  }
  return false;
}

CallerStreamGuard::CallerStreamGuard(runtime::StreamRef stream, int device)
    : device_(device < 0 ? 0 : device), previous_(caller_stream(device_)) {
  if (static_cast<size_t>(device_) >= t_caller_streams.size())
    t_caller_streams.resize(static_cast<size_t>(device_) + 1);
  t_caller_streams[static_cast<size_t>(device_)] = stream;
}

CallerStreamGuard::~CallerStreamGuard() { t_caller_streams[static_cast<size_t>(device_)] = previous_; }

}  // namespace trtx::et
