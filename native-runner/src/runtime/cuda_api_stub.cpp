// CPU-only build: the CUDA entry points exist and refuse.
#include "cuda_api.h"

namespace trtx::cuda {

namespace {
Failure no_cuda(const char* what) {
  return fail(Error::DeviceUnavailable, what, "this trtx-runner was built without CUDA");
}
}  // namespace

bool built() { return false; }
int device_count() { return 0; }
Result<std::string> device_name(int) { return no_cuda("cuda_device_name"); }
Status set_device(int) { return no_cuda("cudaSetDevice"); }
Result<int> get_device() { return no_cuda("cudaGetDevice"); }
Result<void*> malloc_async(size_t, void*) { return no_cuda("cudaMallocAsync"); }
void free_async(void*, void*) {}
Status memset_async(void*, int, size_t, void*) { return no_cuda("cudaMemsetAsync"); }
Status memcpy_sync(void*, const void*, size_t, CopyKind) { return no_cuda("cudaMemcpy"); }
Status memcpy_async(void*, const void*, size_t, CopyKind, void*) { return no_cuda("cudaMemcpyAsync"); }
Result<void*> stream_create(bool) { return no_cuda("cudaStreamCreate"); }
void stream_destroy(void*) {}
Status stream_synchronize(void*) { return no_cuda("cudaStreamSynchronize"); }
Result<void*> event_create() { return no_cuda("cudaEventCreate"); }
void event_destroy(void*) {}
Status event_record(void*, void*) { return no_cuda("cudaEventRecord"); }
Status stream_wait_event(void*, void*) { return no_cuda("cudaStreamWaitEvent"); }
Status event_synchronize(void*) { return no_cuda("cudaEventSynchronize"); }
Result<void*> host_alloc_mapped(size_t) { return no_cuda("cudaHostAlloc"); }
void host_free(void*) {}
Status last_launch_error(const char*) { return ok_status(); }

}  // namespace trtx::cuda
