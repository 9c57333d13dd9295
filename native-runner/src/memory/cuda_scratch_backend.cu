#include <cuda_runtime_api.h>

#include <memory>

#include "cuda_status.h"
#include "trtx/memory/cuda_backends.h"

namespace trtx {
namespace memory {
namespace {

using cuda_detail::DeviceScope;
using cuda_detail::fromCuda;

cudaStream_t asStream(StreamHandle stream) { return static_cast<cudaStream_t>(stream); }
cudaEvent_t asEvent(EventHandle event) { return static_cast<cudaEvent_t>(event); }

// Every call runs with `device` current: the NULL stream means the current
// device's default stream, and events are created on the current device.
class CudaStreamAllocator final : public Allocator {
 public:
  Result<void*> allocate(int device, std::size_t bytes, StreamHandle stream) override {
    DeviceScope scope(device);
    if (!scope.status().ok()) return scope.status().failure();
    void* pointer = nullptr;
    Status status = fromCuda(cudaMallocAsync(&pointer, bytes, asStream(stream)), "cudaMallocAsync");
    if (!status.ok()) return status.take_failure();
    return pointer;
  }

  Status free(int device, void* pointer, StreamHandle stream) override {
    DeviceScope scope(device);
    if (!scope.status().ok()) return scope.status();
    return fromCuda(cudaFreeAsync(pointer, asStream(stream)), "cudaFreeAsync");
  }

  Status synchronizeDevice(int device) override {
    DeviceScope scope(device);
    if (!scope.status().ok()) return scope.status();
    return fromCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
};

class CudaEventFactory final : public EventFactory {
 public:
  Result<EventHandle> create(int device) override {
    DeviceScope scope(device);
    if (!scope.status().ok()) return scope.status().failure();
    cudaEvent_t event = nullptr;
    Status status = fromCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    if (!status.ok()) return status.take_failure();
    return static_cast<EventHandle>(event);
  }

  Status record(int device, EventHandle event, StreamHandle stream) override {
    DeviceScope scope(device);
    if (!scope.status().ok()) return scope.status();
    return fromCuda(cudaEventRecord(asEvent(event), asStream(stream)), "cudaEventRecord");
  }

  Status wait(int device, StreamHandle stream, EventHandle event) override {
    DeviceScope scope(device);
    if (!scope.status().ok()) return scope.status();
    return fromCuda(cudaStreamWaitEvent(asStream(stream), asEvent(event), 0), "cudaStreamWaitEvent");
  }

  void destroy(int device, EventHandle event) override {
    DeviceScope scope(device);
    (void)fromCuda(cudaEventDestroy(asEvent(event)), "cudaEventDestroy");
  }
};

}  // namespace

std::unique_ptr<Allocator> makeCudaStreamAllocator() { return std::make_unique<CudaStreamAllocator>(); }
std::unique_ptr<EventFactory> makeCudaEventFactory() { return std::make_unique<CudaEventFactory>(); }

}  // namespace memory
}  // namespace trtx
