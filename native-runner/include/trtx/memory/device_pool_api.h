// The handful of CUDA calls the warm pool makes, behind an interface so that the
// bookkeeping (which devices were raised, what to restore, which device is
// current while syncing and trimming) runs on the CPU against a fake.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trtx/memory/memory_error.h"
#include "trtx/runtime/result.h"

namespace trtx {
namespace memory {

class DevicePoolApi {
 public:
  virtual ~DevicePoolApi() = default;

  // The calling thread's current device (cudaGetDevice / cudaSetDevice).
  virtual Status getCurrentDevice(int* device) = 0;
  virtual Status setCurrentDevice(int device) = 0;

  // cudaMemPoolAttrReleaseThreshold of the device's default pool.
  virtual Status getReleaseThreshold(int device, std::uint64_t* bytes) = 0;
  virtual Status setReleaseThreshold(int device, std::uint64_t bytes) = 0;

  // cudaDeviceSynchronize: acts on the CURRENT device, which is why the warm
  // pool switches devices before calling it.
  virtual Status synchronizeCurrentDevice() = 0;

  // cudaMemPoolTrimTo on the device's default pool.
  virtual Status trimTo(int device, std::size_t minBytesToKeep) = 0;

  // cudaGetLastError: drops a non-sticky error so that it is not reported later
  // against an unrelated kernel launch.
  virtual void clearLastError() = 0;
};

}  // namespace memory
}  // namespace trtx
