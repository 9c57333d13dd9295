// The stream ATen's kernels run on (internal to src/aten/): on a GPU, the
// delegate's stream (the caller's or its own) is made ATen's current stream
// for the run, as Torch-TensorRT's runtime makes the engine's stream
// PyTorch's current one (core/runtime/execute_engine.cpp); on the host
// target nothing.
#pragma once

#include <memory>

#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::aten_kernels {

class StreamScope {
 public:
  virtual ~StreamScope() = default;
};

/// Enters `stream` for `device`; null on the host target. A CUDA target in a
/// runner whose libtorch has no CUDA is refused (DeviceUnavailable).
Result<std::unique_ptr<StreamScope>> enter_stream(const runtime::DeviceContext& device, runtime::StreamRef stream,
                                                  const std::string& at);

}  // namespace trtx::aten_kernels
