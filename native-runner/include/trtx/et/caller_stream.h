// The caller stream an application hands the runtime for one thread's work:
// while a CallerStreamGuard is alive, the registered device allocator copies
// on it and the TensorRT delegate enqueues on it (and may skip its final
// synchronize). ExecuTorch has this as extension/cuda/caller_stream.h
// (getCallerStream, CallerStreamGuard), but the executorch 1.5.1 CPU wheel
// ships neither that header nor libexecutorch_extension_cuda.so, so the
// runner carries the same contract here, thread-local like upstream's.
//
// A CUDA stream belongs to one device: a kernel cannot be launched, nor an
// event recorded, on a stream of another device. A program whose delegates
// run on several devices therefore takes one caller stream per device, and
// each delegate and each copy uses the stream of the device its memory is
// on. A device without one falls back to the delegate's own stream and a
// synchronize, as with no caller stream at all.
#pragma once

#include <optional>

#include "trtx/runtime/device.h"

namespace trtx::et {

/// The calling thread's caller stream for `device`; nullopt when none is set.
std::optional<runtime::StreamRef> caller_stream(int device = 0);

/// True when the calling thread has a caller stream for any device.
bool any_caller_stream();

class CallerStreamGuard {
 public:
  explicit CallerStreamGuard(runtime::StreamRef stream, int device = 0);
  ~CallerStreamGuard();
  CallerStreamGuard(const CallerStreamGuard&) = delete;
  CallerStreamGuard& operator=(const CallerStreamGuard&) = delete;

 private:
  int device_;
  std::optional<runtime::StreamRef> previous_;
};

}  // namespace trtx::et
