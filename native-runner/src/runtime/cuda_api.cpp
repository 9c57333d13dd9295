// CUDA runtime wrappers, compiled only when the build has CUDA.
#include "trtx/runtime/cuda_api.h"

#include <cuda_runtime.h>

#include <string>

namespace trtx::cuda {

namespace {
Failure cuda_failure(cudaError_t err, const char* what) {
  // Clear a sticky-free error so later calls are not blamed for this one.
  (void)cudaGetLastError();
  return fail(Error::CudaError, what, std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err));
}

cudaMemcpyKind to_kind(CopyKind k) {
  switch (k) {
    case CopyKind::HostToDevice:
      return cudaMemcpyHostToDevice;
    case CopyKind::DeviceToHost:
      return cudaMemcpyDeviceToHost;
    case CopyKind::DeviceToDevice:
      return cudaMemcpyDeviceToDevice;
    case CopyKind::HostToHost:
      return cudaMemcpyHostToHost;
  }
  return cudaMemcpyDefault;
}

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }
// The real CUDA runtime, one object per process (runtime_api()).
class CudaRuntimeApi final : public Api {
 public:
  bool built() const override { return true; }

  int device_count() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }

  Result<std::string> device_name(int device) override {
    cudaDeviceProp prop{};
    cudaError_t err = cudaGetDeviceProperties(&prop, device);
    if (err != cudaSuccess) return cuda_failure(err, "cudaGetDeviceProperties");
    return std::string(prop.name);
  }

  Result<int> get_device() override {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return cuda_failure(err, "cudaGetDevice");
    return device;
  }

  Status set_device(int device) override { return checked(cudaSetDevice(device), "cudaSetDevice"); }
  Status device_synchronize() override { return checked(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

  Result<void*> malloc_async(size_t bytes, void* stream) override {
    void* p = nullptr;
    cudaError_t err = cudaMallocAsync(&p, bytes == 0 ? 1 : bytes, as_stream(stream));
    if (err != cudaSuccess) {
      Failure f = cuda_failure(err, "cudaMallocAsync");
      f.code = Error::MemoryAllocationFailed;
      f.message = "cannot allocate " + std::to_string(bytes) + " bytes of device memory (" + f.message + ")";
      return f;
    }
    return p;
  }

  Status free_async(void* p, void* stream) override {
    if (p == nullptr) return ok_status();
    return checked(cudaFreeAsync(p, as_stream(stream)), "cudaFreeAsync");
  }

  Status memset_async(void* p, int value, size_t bytes, void* stream) override {
    if (bytes == 0) return ok_status();
    return checked(cudaMemsetAsync(p, value, bytes, as_stream(stream)), "cudaMemsetAsync");
  }

  Status memcpy_sync(void* dst, const void* src, size_t n, CopyKind kind) override {
    if (n == 0) return ok_status();
    return checked(cudaMemcpy(dst, src, n, to_kind(kind)), "cudaMemcpy");
  }

  Status memcpy_async(void* dst, const void* src, size_t n, CopyKind kind, void* stream) override {
    if (n == 0) return ok_status();
    return checked(cudaMemcpyAsync(dst, src, n, to_kind(kind), as_stream(stream)), "cudaMemcpyAsync");
  }

  Result<void*> stream_create(bool non_blocking) override {
    cudaStream_t s = nullptr;
    cudaError_t err = cudaStreamCreateWithFlags(&s, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault);
    if (err != cudaSuccess) return cuda_failure(err, "cudaStreamCreateWithFlags");
    return static_cast<void*>(s);
  }

  void stream_destroy(void* s) override {
    if (s != nullptr && cudaStreamDestroy(as_stream(s)) != cudaSuccess) (void)cudaGetLastError();
  }

  Status stream_synchronize(void* s) override {
    return checked(cudaStreamSynchronize(as_stream(s)), "cudaStreamSynchronize");
  }

  Result<void*> event_create() override {
    cudaEvent_t e = nullptr;
    cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (err != cudaSuccess) return cuda_failure(err, "cudaEventCreateWithFlags");
    return static_cast<void*>(e);
  }

  void event_destroy(void* e) override {
    if (e != nullptr && cudaEventDestroy(as_event(e)) != cudaSuccess) (void)cudaGetLastError();
  }

  Status event_record(void* e, void* s) override {
    return checked(cudaEventRecord(as_event(e), as_stream(s)), "cudaEventRecord");
  }

  Status stream_wait_event(void* s, void* e) override {
    return checked(cudaStreamWaitEvent(as_stream(s), as_event(e), 0), "cudaStreamWaitEvent");
  }

  Status event_synchronize(void* e) override {
    return checked(cudaEventSynchronize(as_event(e)), "cudaEventSynchronize");
  }

  Result<void*> host_alloc_mapped(size_t bytes) override {
    void* p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocMapped);
    if (err != cudaSuccess) return cuda_failure(err, "cudaHostAlloc");
    return p;
  }

  void host_free(void* p) override {
    if (p != nullptr && cudaFreeHost(p) != cudaSuccess) (void)cudaGetLastError();
  }

  Result<uint64_t> pool_release_threshold(int device) override {
    TRTX_ASSIGN_OR_RETURN(cudaMemPool_t pool, default_pool(device));
    uint64_t value = 0;  // the attribute's type, cuuint64_t, is uint64_t (cuda.h)
    cudaError_t err = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value);
    if (err != cudaSuccess) return cuda_failure(err, "cudaMemPoolGetAttribute(ReleaseThreshold)");
    return value;
  }

  Status set_pool_release_threshold(int device, uint64_t bytes) override {
    TRTX_ASSIGN_OR_RETURN(cudaMemPool_t pool, default_pool(device));
    uint64_t value = bytes;
    return checked(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value),
                   "cudaMemPoolSetAttribute(ReleaseThreshold)");
  }

  Status pool_trim_to(int device, size_t min_bytes_to_keep) override {
    TRTX_ASSIGN_OR_RETURN(cudaMemPool_t pool, default_pool(device));
    return checked(cudaMemPoolTrimTo(pool, min_bytes_to_keep), "cudaMemPoolTrimTo");
  }

  Status last_launch_error(const char* what) override { return checked(cudaGetLastError(), what); }
  void clear_last_error() override { (void)cudaGetLastError(); }

 private:
  static Status checked(cudaError_t err, const char* what) {
    if (err != cudaSuccess) return cuda_failure(err, what);
    return ok_status();
  }
  static Result<cudaMemPool_t> default_pool(int device) {
    cudaMemPool_t pool = nullptr;
    cudaError_t err = cudaDeviceGetDefaultMemPool(&pool, device);
    if (err != cudaSuccess) return cuda_failure(err, "cudaDeviceGetDefaultMemPool");
    return pool;
  }
};
}  // namespace

Api& runtime_api() {
  static CudaRuntimeApi api;
  return api;
}

}  // namespace trtx::cuda
