// A runner built without libtorch (no TRTX_LIBTORCH_DIR): version-2/3
// engines run on ExecuTorch's CPU kernels only (aten_program.h).
#include "trtx/aten/aten_program.h"

namespace trtx::aten_kernels {

bool built() { return false; }
bool cuda_built() { return false; }
const char* kernel_set(runtime::Target) { return "none"; }

Result<std::unique_ptr<Program>> load(const uint8_t*, size_t, const std::string&, const runtime::DeviceContext&,
                                      const ConstantResolver&, bool, const std::string& at) {
  return fail(Error::NotSupported, at, "this trtx-runner was built without libtorch: ATen's kernels are not here");
}

}  // namespace trtx::aten_kernels
