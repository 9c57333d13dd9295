// The runner's one wrapper of the CUDA runtime: every CUDA call outside a
// kernel goes through cuda::Api. The process's instance is runtime_api():
// the real calls in a CUDA build (src/runtime/cuda_api.cpp), a stub that
// refuses with DeviceUnavailable otherwise (cuda_api_stub.cpp). host_api()
// is the same interface on host memory, for Target::Host (DeviceContext and
// the shared scratch of a run on the CPU; cuda_api_host.cpp). Code that must be tested without a GPU takes an Api&
// (the warm pool, the shared scratch pool) and the tests pass a fake
// (tests/memory/fake_cuda_api.h). Handles are void* so that no header needs
// cuda_runtime.h (a cudaStream_t / cudaEvent_t is a pointer); the NULL stream
// is legal. A failed call clears the CUDA error it reports (cudaGetLastError)
// so that it is not blamed on a later, unrelated call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "trtx/runtime/result.h"

namespace trtx::cuda {

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice, HostToHost };

class Api {
 public:
  virtual ~Api() = default;

  /// Whether this is a CUDA build (the stub says no and refuses every call).
  virtual bool built() const = 0;
  /// Visible devices; 0 when none or when the count fails.
  virtual int device_count() = 0;
  virtual Result<std::string> device_name(int device) = 0;

  /// The calling thread's current device (cudaGetDevice / cudaSetDevice).
  virtual Result<int> get_device() = 0;
  virtual Status set_device(int device) = 0;
  /// cudaDeviceSynchronize: acts on the CURRENT device.
  virtual Status device_synchronize() = 0;

  /// Stream-ordered allocation (cudaMallocAsync; 0 bytes allocate 1). Any
  /// failure is MemoryAllocationFailed.
  virtual Result<void*> malloc_async(size_t bytes, void* stream) = 0;
  /// cudaFreeAsync; null is a no-op.
  virtual Status free_async(void* p, void* stream) = 0;
  virtual Status memset_async(void* p, int value, size_t bytes, void* stream) = 0;
  virtual Status memcpy_sync(void* dst, const void* src, size_t n, CopyKind kind) = 0;
  virtual Status memcpy_async(void* dst, const void* src, size_t n, CopyKind kind, void* stream) = 0;

  virtual Result<void*> stream_create(bool non_blocking) = 0;
  virtual void stream_destroy(void* s) = 0;
  virtual Status stream_synchronize(void* s) = 0;
  /// cudaEventCreateWithFlags(cudaEventDisableTiming) on the current device.
  virtual Result<void*> event_create() = 0;
  virtual void event_destroy(void* e) = 0;
  virtual Status event_record(void* e, void* s) = 0;
  /// cudaStreamWaitEvent(s, e): the stream's next work starts after e.
  virtual Status stream_wait_event(void* s, void* e) = 0;
  virtual Status event_synchronize(void* e) = 0;

  /// Pinned host memory mapped into the device (cudaHostAlloc Mapped).
  virtual Result<void*> host_alloc_mapped(size_t bytes) = 0;
  virtual void host_free(void* p) = 0;

  /// cudaMemPoolAttrReleaseThreshold of the device's default memory pool.
  virtual Result<uint64_t> pool_release_threshold(int device) = 0;
  virtual Status set_pool_release_threshold(int device, uint64_t bytes) = 0;
  /// cudaMemPoolTrimTo on the device's default pool.
  virtual Status pool_trim_to(int device, size_t min_bytes_to_keep) = 0;

  /// Error of the last kernel launch (cudaGetLastError), as a Status.
  virtual Status last_launch_error(const char* what) = 0;
  /// cudaGetLastError, dropped: a non-sticky error is not reported later
  /// against an unrelated launch.
  virtual void clear_last_error() = 0;
};

/// The process's CUDA runtime: the real one in a CUDA build, else the stub.
Api& runtime_api();

/// The CUDA runtime's stand-in on the host, in every build: memory is
/// zeroed host memory, streams and events are tokens, every operation is
/// immediate (so synchronizing is a no-op), any device index is accepted;
/// the pool calls refuse with NotSupported (the host has no device pool).
Api& host_api();

/// Makes `device` the calling thread's current device (of `api`) for a scope
/// and puts the caller's device back at its end; no call when it already is
/// current. CUDA binds allocations from the NULL stream, kernel launches,
/// stream and event creation to the current device, so every operation for a
/// device other than the caller's runs inside one (as PyTorch's CUDAGuard).
class DeviceScope {
 public:
  DeviceScope(Api& api, int device) : api_(api), status_(enter(device)) {}
  ~DeviceScope() {
    if (switched_) (void)api_.set_device(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  /// Why the device could not be made current (ok otherwise).
  const Status& status() const { return status_; }

 private:
  // Initialises status_ (declared last, so previous_ and switched_ are set).
  Status enter(int device) {
    Result<int> current = api_.get_device();
    if (!current.ok()) return current.take_failure();
    previous_ = current.get();
    if (previous_ == device) return ok_status();
    Status set = api_.set_device(device);
    switched_ = set.ok();
    return set;
  }

  Api& api_;
  int previous_ = -1;
  bool switched_ = false;
  Status status_;
};

}  // namespace trtx::cuda
