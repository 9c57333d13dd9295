#include <cuda_runtime_api.h>

#include <memory>

#include "cuda_status.h"
#include "trtx/memory/cuda_backends.h"

namespace trtx {
namespace memory {
namespace {

using cuda_detail::fromCuda;

class CudaDevicePoolApi final : public DevicePoolApi {
 public:
  Status getCurrentDevice(int* device) override { return fromCuda(cudaGetDevice(device), "cudaGetDevice"); }
  Status setCurrentDevice(int device) override { return fromCuda(cudaSetDevice(device), "cudaSetDevice"); }

  Status getReleaseThreshold(int device, std::uint64_t* bytes) override {
    cudaMemPool_t pool = nullptr;
    Status status = fromCuda(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
    if (!status.ok()) return status;
    std::uint64_t value = 0;  // the attribute's type, cuuint64_t, is uint64_t (cuda.h)
    status = fromCuda(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value),
                      "cudaMemPoolGetAttribute(ReleaseThreshold)");
    if (status.ok()) *bytes = static_cast<std::uint64_t>(value);
    return status;
  }

  Status setReleaseThreshold(int device, std::uint64_t bytes) override {
    cudaMemPool_t pool = nullptr;
    Status status = fromCuda(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
    if (!status.ok()) return status;
    std::uint64_t value = bytes;
    return fromCuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value),
                    "cudaMemPoolSetAttribute(ReleaseThreshold)");
  }

  Status synchronizeCurrentDevice() override { return fromCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

  Status trimTo(int device, std::size_t minBytesToKeep) override {
    cudaMemPool_t pool = nullptr;
    Status status = fromCuda(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
    if (!status.ok()) return status;
    return fromCuda(cudaMemPoolTrimTo(pool, minBytesToKeep), "cudaMemPoolTrimTo");
  }

  void clearLastError() override { (void)cudaGetLastError(); }
};

}  // namespace

std::unique_ptr<DevicePoolApi> makeCudaDevicePoolApi() { return std::make_unique<CudaDevicePoolApi>(); }

}  // namespace memory
}  // namespace trtx
