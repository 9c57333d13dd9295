// CUDA implementations of the device-memory interfaces. Declared here without
// cuda_runtime.h; defined in src/memory/*.cu, which are built only when the
// CUDA toolkit is found, so link against these only in a CUDA build.
#pragma once

#include <memory>

#include "trtx/memory/device_pool_api.h"
#include "trtx/memory/scratch_backend.h"

namespace trtx {
namespace memory {

// cudaDeviceGetDefaultMemPool + cudaMemPool{Get,Set}Attribute(ReleaseThreshold),
// cudaMemPoolTrimTo, cudaDeviceSynchronize, cudaGetDevice/cudaSetDevice.
std::unique_ptr<DevicePoolApi> makeCudaDevicePoolApi();

// cudaMallocAsync / cudaFreeAsync on the caller stream, cudaDeviceSynchronize.
// Clears the CUDA error of any call it reports as failed.
std::unique_ptr<Allocator> makeCudaStreamAllocator();

// cudaEventCreateWithFlags(cudaEventDisableTiming), cudaEventRecord,
// cudaStreamWaitEvent, cudaEventDestroy.
std::unique_ptr<EventFactory> makeCudaEventFactory();

}  // namespace memory
}  // namespace trtx
