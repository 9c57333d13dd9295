// The CUDA runtime's stand-in on the host (cuda::host_api()), in every build:
// what a run on the CPU uses where a run on a GPU uses the CUDA runtime.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "trtx/runtime/cuda_api.h"

namespace trtx::cuda {

namespace {
// Streams and events are distinct tokens with no behaviour: the host does
// every operation immediately, so there is nothing to order.
struct HostToken {
  char unused = 0;
};

thread_local int current_device = 0;

Failure no_pool(const char* what) {
  return fail(Error::NotSupported, what, "the host stand-in has no device memory pool");
}

Result<void*> host_memory(size_t bytes) {
  void* p = std::calloc(bytes == 0 ? 1 : bytes, 1);
  if (p == nullptr) {
    return fail(Error::MemoryAllocationFailed, "host",
                "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  return p;
}

Result<void*> token(const char* what) {
  void* t = new (std::nothrow) HostToken();
  if (t == nullptr) return fail(Error::MemoryAllocationFailed, "host", std::string("cannot create a ") + what);
  return t;
}

class HostApi final : public Api {
 public:
  bool built() const override { return false; }
  int device_count() override { return 0; }
  Result<std::string> device_name(int) override { return std::string("host"); }
  Result<int> get_device() override { return current_device; }
  Status set_device(int device) override {
    current_device = device;
    return ok_status();
  }
  Status device_synchronize() override { return ok_status(); }
  Result<void*> malloc_async(size_t bytes, void*) override { return host_memory(bytes); }
  Status free_async(void* p, void*) override {
    std::free(p);
    return ok_status();
  }
  Status memset_async(void* p, int value, size_t bytes, void*) override {
    if (bytes != 0) std::memset(p, value, bytes);
    return ok_status();
  }
  Status memcpy_sync(void* dst, const void* src, size_t n, CopyKind) override {
    if (n != 0 && dst != src) std::memmove(dst, src, n);
    return ok_status();
  }
  Status memcpy_async(void* dst, const void* src, size_t n, CopyKind kind, void*) override {
    return memcpy_sync(dst, src, n, kind);
  }
  Result<void*> stream_create(bool) override { return token("stream"); }
  void stream_destroy(void* s) override { delete static_cast<HostToken*>(s); }
  Status stream_synchronize(void*) override { return ok_status(); }
  Result<void*> event_create() override { return token("event"); }
  void event_destroy(void* e) override { delete static_cast<HostToken*>(e); }
  Status event_record(void*, void*) override { return ok_status(); }
  Status stream_wait_event(void*, void*) override { return ok_status(); }
  Status event_synchronize(void*) override { return ok_status(); }
  Result<void*> host_alloc_mapped(size_t bytes) override { return host_memory(bytes); }
  void host_free(void* p) override { std::free(p); }
  Result<uint64_t> pool_release_threshold(int) override { return no_pool("cudaMemPoolGetAttribute"); }
  Status set_pool_release_threshold(int, uint64_t) override { return no_pool("cudaMemPoolSetAttribute"); }
  Status pool_trim_to(int, size_t) override { return no_pool("cudaMemPoolTrimTo"); }
  Status last_launch_error(const char*) override { return ok_status(); }
  void clear_last_error() override {}
};
}  // namespace

Api& host_api() {
  static HostApi api;
  return api;
}

}  // namespace trtx::cuda
