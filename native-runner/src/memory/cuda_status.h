// Shared by the CUDA implementations (.cu only): turn a cudaError_t into a
// Status and clear it so it is not reported again at an unrelated launch.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "trtx/memory/memory_error.h"
#include "trtx/runtime/result.h"

namespace trtx {
namespace memory {
namespace cuda_detail {

inline Status fromCuda(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return ok_status();
  (void)cudaGetLastError();
  const Error code = error == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::CudaError;
  return fail(code, call, std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")");
}

// Makes `device` current for a scope and puts the caller's device back; calls
// nothing when it already is current.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    status_ = fromCuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (status_.ok() && previous_ != device) {
      status_ = fromCuda(cudaSetDevice(device), "cudaSetDevice");
      switched_ = status_.ok();
    }
  }
  ~DeviceScope() {
    if (switched_) (void)fromCuda(cudaSetDevice(previous_), "cudaSetDevice");
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  const Status& status() const { return status_; }

 private:
  int previous_ = 0;
  bool switched_ = false;
  Status status_;
};

}  // namespace cuda_detail
}  // namespace memory
}  // namespace trtx
