// enter_stream with libtorch's CUDA half (stream_scope.h): the delegate's
// cudaStream_t becomes ATen's current stream (c10::cuda::getStreamFromExternal)
// for the run, and its device the current device.
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "stream_scope.h"

namespace trtx::aten_kernels {

namespace {

class CudaScope final : public StreamScope {
 public:
  CudaScope(cudaStream_t s, int device)
      : guard_(c10::cuda::getStreamFromExternal(s, static_cast<c10::DeviceIndex>(device))) {}

 private:
  c10::cuda::CUDAStreamGuard guard_;
};

}  // namespace

Result<std::unique_ptr<StreamScope>> enter_stream(const runtime::DeviceContext& device, runtime::StreamRef stream,
                                                  const std::string& at) {
  if (device.target() != runtime::Target::Cuda) return std::unique_ptr<StreamScope>();
  try {
    if (stream.handle == nullptr) {
      // The legacy default stream, as the delegate's own copies use it.
      return std::unique_ptr<StreamScope>(std::make_unique<CudaScope>(nullptr, device.device_index()));
    }
    return std::unique_ptr<StreamScope>(
        std::make_unique<CudaScope>(static_cast<cudaStream_t>(stream.handle), device.device_index()));
  } catch (const std::exception& e) {
    return fail(Error::CudaError, at, std::string("ATen could not take the engine's stream: ") + e.what());
  }
}

}  // namespace trtx::aten_kernels
