#include "trtx/runtime/device.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "trtx/runtime/cuda_api.h"

namespace trtx::runtime {

namespace {
// Host-target streams and events are distinct tokens with no behaviour: the
// host does every operation immediately, so there is nothing to order.
struct HostToken {
  char unused = 0;
};

cuda::CopyKind kind_of(Placement dst, Placement src) {
  if (src == Placement::Host) {
    return dst == Placement::Host ? cuda::CopyKind::HostToHost : cuda::CopyKind::HostToDevice;
  }
  return dst == Placement::Host ? cuda::CopyKind::DeviceToHost : cuda::CopyKind::DeviceToDevice;
}

void count(CopyCounters* c, Placement dst, Placement src, size_t n) {
  if (c == nullptr) return;
  if (src == Placement::Host && dst == Placement::Device) c->h2d_bytes += n;
  if (src == Placement::Device && dst == Placement::Host) c->d2h_bytes += n;
  if (src == Placement::Device && dst == Placement::Device) c->d2d_bytes += n;
}
}  // namespace

bool cuda_built() { return cuda::runtime_api().built(); }
int cuda_device_count() { return cuda::runtime_api().device_count(); }
Result<std::string> cuda_device_name(int device) { return cuda::runtime_api().device_name(device); }

Status require_device(Target target, int device, const std::string& what) {
  if (target == Target::Host) return Status();
  const int visible = cuda::runtime_api().device_count();
  if (device >= 0 && device < visible) return Status();
  return fail(Error::DeviceUnavailable, what + " on cuda:" + std::to_string(device),
              "this machine has " + std::to_string(visible) + " visible CUDA device(s)");
}

DeviceScope::DeviceScope(Target target, int device) {
  if (target == Target::Cuda) scope_.emplace(cuda::runtime_api(), device);
}

// Runs the rest of the enclosing function with this context's device current.
#define TRTX_DEVICE_SCOPE()                    \
  DeviceScope device_scope_(target_, device_); \
  if (!device_scope_.status().ok()) return Status(device_scope_.status())

Status DeviceContext::activate() const {
  if (target_ == Target::Host) return ok_status();
  return cuda::runtime_api().set_device(device_);
}

Result<void*> DeviceContext::allocate(size_t bytes, StreamRef stream) const {
  if (target_ == Target::Host) return allocate_host(bytes);
  DeviceScope scope(target_, device_);
  if (!scope.status().ok()) return Status(scope.status()).take_failure();
  TRTX_ASSIGN_OR_RETURN(void* p, cuda::runtime_api().malloc_async(bytes, stream.handle));
  Status z = cuda::runtime_api().memset_async(p, 0, bytes, stream.handle);
  if (!z.ok()) {
    (void)cuda::runtime_api().free_async(p, stream.handle);
    return z.take_failure();
  }
  return p;
}

void DeviceContext::release(void* ptr, StreamRef stream) const {
  if (ptr == nullptr) return;
  if (target_ == Target::Host) {
    release_host(ptr);
  } else {
    DeviceScope scope(target_, device_);
    (void)cuda::runtime_api().free_async(ptr, stream.handle);
  }
}

Result<void*> DeviceContext::allocate_uninitialized(size_t bytes, StreamRef stream) const {
  if (target_ == Target::Cuda) {
    DeviceScope scope(target_, device_);
    if (!scope.status().ok()) return Status(scope.status()).take_failure();
    return cuda::runtime_api().malloc_async(bytes, stream.handle);
  }
  constexpr size_t kAlign = 256;  // what cudaMalloc guarantees
  const size_t n = bytes == 0 ? 1 : bytes;
  void* p = n > SIZE_MAX - kAlign ? nullptr : std::aligned_alloc(kAlign, (n + kAlign - 1) / kAlign * kAlign);
  if (p == nullptr) {
    return fail(Error::MemoryAllocationFailed, "host",
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  return p;
}

Status DeviceContext::fill(void* ptr, uint8_t byte, size_t n, StreamRef stream) const {
  if (target_ == Target::Cuda) {
    TRTX_DEVICE_SCOPE();
    return cuda::runtime_api().memset_async(ptr, byte, n, stream.handle);
  }
  if (n != 0) std::memset(ptr, byte, n);
  return ok_status();
}

Result<void*> DeviceContext::allocate_host(size_t bytes) {
  void* p = std::calloc(bytes == 0 ? 1 : bytes, 1);
  if (p == nullptr) {
    return fail(Error::MemoryAllocationFailed, "host",
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  return p;
}

void DeviceContext::release_host(void* ptr) { std::free(ptr); }

Status DeviceContext::copy(void* dst, Placement dst_p, const void* src, Placement src_p, size_t n, StreamRef stream,
                           CopyCounters* counters) const {
  count(counters, dst_p, src_p, n);
  if (n == 0 || dst == src) return ok_status();
  if (target_ == Target::Host || (dst_p == Placement::Host && src_p == Placement::Host)) {
    std::memmove(dst, src, n);
    return ok_status();
  }
  TRTX_DEVICE_SCOPE();
  if (stream.handle == nullptr) return cuda::runtime_api().memcpy_sync(dst, src, n, kind_of(dst_p, src_p));
  return cuda::runtime_api().memcpy_async(dst, src, n, kind_of(dst_p, src_p), stream.handle);
}

Result<StreamRef> DeviceContext::create_stream(bool non_blocking) const {
  if (target_ == Target::Host) return StreamRef{new (std::nothrow) HostToken()};
  DeviceScope scope(target_, device_);
  if (!scope.status().ok()) return Status(scope.status()).take_failure();
  TRTX_ASSIGN_OR_RETURN(void* s, cuda::runtime_api().stream_create(non_blocking));
  return StreamRef{s};
}

void DeviceContext::destroy_stream(StreamRef s) const {
  if (target_ == Target::Host) {
    delete static_cast<HostToken*>(s.handle);
  } else {
    DeviceScope scope(target_, device_);
    cuda::runtime_api().stream_destroy(s.handle);
  }
}

Status DeviceContext::synchronize(StreamRef s) const {
  if (target_ == Target::Host) return ok_status();
  TRTX_DEVICE_SCOPE();
  return cuda::runtime_api().stream_synchronize(s.handle);
}

Result<EventRef> DeviceContext::create_event() const {
  if (target_ == Target::Host) return EventRef{new (std::nothrow) HostToken()};
  DeviceScope scope(target_, device_);
  if (!scope.status().ok()) return Status(scope.status()).take_failure();
  TRTX_ASSIGN_OR_RETURN(void* e, cuda::runtime_api().event_create());
  return EventRef{e};
}

void DeviceContext::destroy_event(EventRef e) const {
  if (target_ == Target::Host) {
    delete static_cast<HostToken*>(e.handle);
  } else {
    DeviceScope scope(target_, device_);
    cuda::runtime_api().event_destroy(e.handle);
  }
}

Status DeviceContext::record(EventRef e, StreamRef s) const {
  if (target_ == Target::Host) return ok_status();
  TRTX_DEVICE_SCOPE();
  return cuda::runtime_api().event_record(e.handle, s.handle);
}

Status DeviceContext::wait(StreamRef s, EventRef e) const {
  if (target_ == Target::Host) return ok_status();
  TRTX_DEVICE_SCOPE();
  return cuda::runtime_api().stream_wait_event(s.handle, e.handle);
}

Status DeviceContext::event_synchronize(EventRef e) const {
  if (target_ == Target::Host) return ok_status();
  TRTX_DEVICE_SCOPE();
  return cuda::runtime_api().event_synchronize(e.handle);
}

Result<void*> DeviceContext::allocate_mapped_flag() const {
  constexpr size_t kFlagBytes = 16;
  if (target_ == Target::Host) return allocate_host(kFlagBytes);
  DeviceScope scope(target_, device_);
  if (!scope.status().ok()) return Status(scope.status()).take_failure();
  TRTX_ASSIGN_OR_RETURN(void* p, cuda::runtime_api().host_alloc_mapped(kFlagBytes));
  std::memset(p, 0, kFlagBytes);
  return p;
}

void DeviceContext::release_mapped_flag(void* p) const {
  if (target_ == Target::Host) {
    release_host(p);
  } else {
    cuda::runtime_api().host_free(p);
  }
}

}  // namespace trtx::runtime
