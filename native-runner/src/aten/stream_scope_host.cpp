// enter_stream for a libtorch without CUDA (stream_scope.h): the host target
// only.
#include "stream_scope.h"

namespace trtx::aten_kernels {

Result<std::unique_ptr<StreamScope>> enter_stream(const runtime::DeviceContext& device, runtime::StreamRef,
                                                  const std::string& at) {
  if (device.target() != runtime::Target::Cuda) return std::unique_ptr<StreamScope>();
  return fail(Error::DeviceUnavailable, at,
              "the runner's libtorch has no CUDA: ATen's kernels run on the host only (build the runner against a "
              "CUDA libtorch, TRTX_LIBTORCH_DIR)");
}

}  // namespace trtx::aten_kernels
