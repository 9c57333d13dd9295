#include "device_choice.h"

namespace trtx::cli {

Result<runtime::DeviceContext> choose_device(DeviceChoice choice, Report& report) {
  bool cuda = false;
  if (choice == DeviceChoice::Cuda) {
    if (!runtime::cuda_built()) {
      return fail(Error::DeviceUnavailable, "--device cuda", "this trtx-runner was built without CUDA");
    }
    if (runtime::cuda_device_count() == 0) {
      return fail(Error::DeviceUnavailable, "--device cuda", "no CUDA device is visible");
    }
    cuda = true;
  } else if (choice == DeviceChoice::Auto) {
    cuda = runtime::cuda_built() && runtime::cuda_device_count() > 0;
  }
  runtime::DeviceContext device(cuda ? runtime::Target::Cuda : runtime::Target::Host, 0);
  if (!cuda) return device;
  report.device_kind = "cuda";
  report.device_index = 0;
  auto name = runtime::cuda_device_name(0);
  report.device_name = name.ok() ? name.get() : "unknown CUDA device";
  TRTX_CHECK_OK(device.activate());
  return device;
}

}  // namespace trtx::cli
