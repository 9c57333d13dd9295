#include "trtx/runtime/device.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "trtx/runtime/cuda_api.h"

namespace trtx::runtime {

namespace {
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

namespace {
// The CUDA runtime of a target: the process's on Target::Cuda, its host
// stand-in (host memory, immediate streams and events) on Target::Host.
cuda::Api& api_of(Target target) { return target == Target::Host ? cuda::host_api() : cuda::runtime_api(); }
}  // namespace

// Runs the rest of the enclosing function with this context's device current.
#define TRTX_DEVICE_SCOPE(api)                   \
  cuda::DeviceScope device_scope_(api, device_); \
  if (!device_scope_.status().ok()) return device_scope_.status().failure()

Status DeviceContext::activate() const { return api_of(target_).set_device(device_); }

Result<void*> DeviceContext::allocate(size_t bytes, StreamRef stream) const {
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  TRTX_ASSIGN_OR_RETURN(void* p, api.malloc_async(bytes, stream.handle));
  if (target_ == Target::Host) return p;  // the host stand-in's memory is zeroed
  Status z = api.memset_async(p, 0, bytes, stream.handle);
  if (!z.ok()) {
    (void)api.free_async(p, stream.handle);
    return z.take_failure();
  }
  return p;
}

void DeviceContext::release(void* ptr, StreamRef stream) const {
  if (ptr == nullptr) return;
  cuda::Api& api = api_of(target_);
  cuda::DeviceScope scope(api, device_);
  (void)api.free_async(ptr, stream.handle);
}

Result<void*> DeviceContext::allocate_uninitialized(size_t bytes, StreamRef stream) const {
  if (target_ == Target::Cuda) {
    TRTX_DEVICE_SCOPE(cuda::runtime_api());
    return cuda::runtime_api().malloc_async(bytes, stream.handle);
  }
  // Not cleared, as cudaMallocAsync hands memory out (the host stand-in's
  // malloc_async zeroes), and aligned as cudaMalloc guarantees.
  constexpr size_t kAlign = 256;
  const size_t n = bytes == 0 ? 1 : bytes;
  void* p = n > SIZE_MAX - kAlign ? nullptr : std::aligned_alloc(kAlign, (n + kAlign - 1) / kAlign * kAlign);
  if (p == nullptr) {
    return fail(Error::MemoryAllocationFailed, "host",
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  return p;
}

Status DeviceContext::fill(void* ptr, uint8_t byte, size_t n, StreamRef stream) const {
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  return api.memset_async(ptr, byte, n, stream.handle);
}

Result<void*> DeviceContext::allocate_host(size_t bytes) { return cuda::host_api().malloc_async(bytes, nullptr); }

void DeviceContext::release_host(void* ptr) { (void)cuda::host_api().free_async(ptr, nullptr); }

Status DeviceContext::copy(void* dst, Placement dst_p, const void* src, Placement src_p, size_t n, StreamRef stream,
                           CopyCounters* counters) const {
  count(counters, dst_p, src_p, n);
  if (n == 0 || dst == src) return ok_status();
  if (dst_p == Placement::Host && src_p == Placement::Host) {
    std::memmove(dst, src, n);
    return ok_status();
  }
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  if (stream.handle == nullptr) return api.memcpy_sync(dst, src, n, kind_of(dst_p, src_p));
  return api.memcpy_async(dst, src, n, kind_of(dst_p, src_p), stream.handle);
}

Result<StreamRef> DeviceContext::create_stream(bool non_blocking) const {
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  TRTX_ASSIGN_OR_RETURN(void* s, api.stream_create(non_blocking));
  return StreamRef{s};
}

void DeviceContext::destroy_stream(StreamRef s) const {
  cuda::Api& api = api_of(target_);
  cuda::DeviceScope scope(api, device_);
  api.stream_destroy(s.handle);
}

Status DeviceContext::synchronize(StreamRef s) const {
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  return api.stream_synchronize(s.handle);
}

Result<EventRef> DeviceContext::create_event() const {
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  TRTX_ASSIGN_OR_RETURN(void* e, api.event_create());
  return EventRef{e};
}

void DeviceContext::destroy_event(EventRef e) const {
  cuda::Api& api = api_of(target_);
  cuda::DeviceScope scope(api, device_);
  api.event_destroy(e.handle);
}

Status DeviceContext::record(EventRef e, StreamRef s) const {
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  return api.event_record(e.handle, s.handle);
}

Status DeviceContext::wait(StreamRef s, EventRef e) const {
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  return api.stream_wait_event(s.handle, e.handle);
}

Status DeviceContext::event_synchronize(EventRef e) const {
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  return api.event_synchronize(e.handle);
}

Result<void*> DeviceContext::allocate_mapped_flag() const {
  constexpr size_t kFlagBytes = 16;
  cuda::Api& api = api_of(target_);
  TRTX_DEVICE_SCOPE(api);
  TRTX_ASSIGN_OR_RETURN(void* p, api.host_alloc_mapped(kFlagBytes));
  std::memset(p, 0, kFlagBytes);
  return p;
}

void DeviceContext::release_mapped_flag(void* p) const { api_of(target_).host_free(p); }

#undef TRTX_DEVICE_SCOPE

}  // namespace trtx::runtime
