// The caller stream an application hands the runtime for one thread's work:
// while a CallerStreamGuard is alive, the registered device allocator copies
// on it and the TensorRT delegate enqueues on it (and may skip its final
// synchronize). ExecuTorch has this as extension/cuda/caller_stream.h
// (getCallerStream, CallerStreamGuard), but the executorch 1.5.1 CPU wheel
// ships neither that header nor libexecutorch_extension_cuda.so, so the
// runner carries the same contract here, thread-local like upstream's.
#pragma once

#include <optional>

#include "trtx/runtime/device.h"

namespace trtx::et {

/// The calling thread's caller stream; nullopt when none is set.
std::optional<runtime::StreamRef> caller_stream();

class CallerStreamGuard {
 public:
  explicit CallerStreamGuard(runtime::StreamRef stream);
  ~CallerStreamGuard();
  CallerStreamGuard(const CallerStreamGuard&) = delete;
  CallerStreamGuard& operator=(const CallerStreamGuard&) = delete;

 private:
  std::optional<runtime::StreamRef> previous_;
};

}  // namespace trtx::et
