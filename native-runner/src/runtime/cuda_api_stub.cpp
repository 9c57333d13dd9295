// CPU-only build: the CUDA runtime exists and refuses every call.
#include "trtx/runtime/cuda_api.h"

namespace trtx::cuda {

namespace {
Failure no_cuda(const char* what) {
  return fail(Error::DeviceUnavailable, what, "this trtx-runner was built without CUDA");
}

class NoCudaApi final : public Api {
 public:
  bool built() const override { return false; }
  int device_count() override { return 0; }
  Result<std::string> device_name(int) override { return no_cuda("cuda_device_name"); }
  Result<int> get_device() override { return no_cuda("cudaGetDevice"); }
  Status set_device(int) override { return no_cuda("cudaSetDevice"); }
  Status device_synchronize() override { return no_cuda("cudaDeviceSynchronize"); }
  Result<void*> malloc_async(size_t, void*) override { return no_cuda("cudaMallocAsync"); }
  Status free_async(void*, void*) override { return ok_status(); }
  Status memset_async(void*, int, size_t, void*) override { return no_cuda("cudaMemsetAsync"); }
  Status memcpy_sync(void*, const void*, size_t, CopyKind) override { return no_cuda("cudaMemcpy"); }
  Status memcpy_async(void*, const void*, size_t, CopyKind, void*) override { return no_cuda("cudaMemcpyAsync"); }
  Result<void*> stream_create(bool) override { return no_cuda("cudaStreamCreate"); }
  void stream_destroy(void*) override {}
  Status stream_synchronize(void*) override { return no_cuda("cudaStreamSynchronize"); }
  Result<void*> event_create() override { return no_cuda("cudaEventCreate"); }
  void event_destroy(void*) override {}
  Status event_record(void*, void*) override { return no_cuda("cudaEventRecord"); }
  Status stream_wait_event(void*, void*) override { return no_cuda("cudaStreamWaitEvent"); }
  Status event_synchronize(void*) override { return no_cuda("cudaEventSynchronize"); }
  Result<void*> host_alloc_mapped(size_t) override { return no_cuda("cudaHostAlloc"); }
  void host_free(void*) override {}
  Result<uint64_t> pool_release_threshold(int) override { return no_cuda("cudaMemPoolGetAttribute"); }
  Status set_pool_release_threshold(int, uint64_t) override { return no_cuda("cudaMemPoolSetAttribute"); }
  Status pool_trim_to(int, size_t) override { return no_cuda("cudaMemPoolTrimTo"); }
  Status last_launch_error(const char*) override { return ok_status(); }
  void clear_last_error() override {}
};
}  // namespace

Api& runtime_api() {
  static NoCudaApi api;
  return api;
}

}  // namespace trtx::cuda
