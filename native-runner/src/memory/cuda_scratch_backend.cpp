// The shared scratch's Allocator and EventFactory over the runner's CUDA
// wrapper (trtx/runtime/cuda_api.h). Plain C++: in a build without CUDA the
// wrapper's stub refuses each call with DeviceUnavailable.
#include <memory>

#include "trtx/memory/cuda_backends.h"

namespace trtx {
namespace memory {
namespace {

// Makes `device` current for a scope and puts the caller's device back; calls
// nothing when it already is current. Every call below runs under one: the
// NULL stream means the current device's default stream, and events are
// created on the current device.
class DeviceScope {
 public:
  DeviceScope(cuda::Api& api, int device) : api_(api) {
    Result<int> current = api_.get_device();
    if (!current.ok()) {
      status_ = current.take_failure();
      return;
    }
    previous_ = current.get();
    if (previous_ != device) {
      status_ = api_.set_device(device);
      switched_ = status_.ok();
    }
  }
  ~DeviceScope() {
    if (switched_) (void)api_.set_device(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  const Status& status() const { return status_; }

 private:
  cuda::Api& api_;
  int previous_ = 0;
  bool switched_ = false;
  Status status_;
};

class CudaStreamAllocator final : public Allocator {
 public:
  explicit CudaStreamAllocator(cuda::Api& api) : api_(api) {}

  Result<void*> allocate(int device, std::size_t bytes, StreamHandle stream) override {
    DeviceScope scope(api_, device);
    if (!scope.status().ok()) return scope.status().failure();
    return api_.malloc_async(bytes, stream);
  }

  Status free(int device, void* pointer, StreamHandle stream) override {
    DeviceScope scope(api_, device);
    if (!scope.status().ok()) return scope.status();
    return api_.free_async(pointer, stream);
  }

  Status synchronizeDevice(int device) override {
    DeviceScope scope(api_, device);
    if (!scope.status().ok()) return scope.status();
    return api_.device_synchronize();
  }

 private:
  cuda::Api& api_;
};

class CudaEventFactory final : public EventFactory {
 public:
  explicit CudaEventFactory(cuda::Api& api) : api_(api) {}

  Result<EventHandle> create(int device) override {
    DeviceScope scope(api_, device);
    if (!scope.status().ok()) return scope.status().failure();
    return api_.event_create();
  }

  Status record(int device, EventHandle event, StreamHandle stream) override {
    DeviceScope scope(api_, device);
    if (!scope.status().ok()) return scope.status();
    return api_.event_record(event, stream);
  }

  Status wait(int device, StreamHandle stream, EventHandle event) override {
    DeviceScope scope(api_, device);
    if (!scope.status().ok()) return scope.status();
    return api_.stream_wait_event(stream, event);
  }

  void destroy(int device, EventHandle event) override {
    DeviceScope scope(api_, device);
    api_.event_destroy(event);
  }

 private:
  cuda::Api& api_;
};

}  // namespace

std::unique_ptr<Allocator> makeCudaStreamAllocator(cuda::Api& api) {
  return std::make_unique<CudaStreamAllocator>(api);
}
std::unique_ptr<EventFactory> makeCudaEventFactory(cuda::Api& api) { return std::make_unique<CudaEventFactory>(api); }

}  // namespace memory
}  // namespace trtx
