// CPU-only build: the CUDA executor is never created, these only refuse.
#include "standin_cuda.h"

namespace trtx::engine::cuda_kernels {

namespace {
Failure no_cuda() {
  return fail(Error::DeviceUnavailable, "reference-cuda", "this trtx-runner was built without CUDA");
}
}  // namespace

Status affine(const AffinePlan&, void*) { return no_cuda(); }
Status kv_write(const KvWritePlan&, void*, void*) { return no_cuda(); }
Status attend(const AttendPlan&, float*, void*) { return no_cuda(); }
Status ring_shift(const RingShiftPlan&, void*) { return no_cuda(); }

}  // namespace trtx::engine::cuda_kernels
