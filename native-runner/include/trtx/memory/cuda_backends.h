// The shared scratch's device backends over the runner's CUDA wrapper
// (trtx/runtime/cuda_api.h): pass cuda::runtime_api(), or a fake in tests.
// The warm pool takes the wrapper itself (warm_pool.h).
#pragma once

#include <memory>

#include "trtx/memory/scratch_backend.h"
#include "trtx/runtime/cuda_api.h"

namespace trtx {
namespace memory {

// cudaMallocAsync / cudaFreeAsync on the caller stream, cudaDeviceSynchronize,
// each with the device made current for the call. `api` must outlive it.
std::unique_ptr<Allocator> makeCudaStreamAllocator(cuda::Api& api);

// cudaEventCreateWithFlags(cudaEventDisableTiming), cudaEventRecord,
// cudaStreamWaitEvent, cudaEventDestroy, each on the event's device.
std::unique_ptr<EventFactory> makeCudaEventFactory(cuda::Api& api);

}  // namespace memory
}  // namespace trtx
