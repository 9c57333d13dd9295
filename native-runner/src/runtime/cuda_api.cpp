// CUDA runtime wrappers, compiled only when the build has CUDA.
#include "cuda_api.h"

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
}  // namespace

bool built() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

Result<std::string> device_name(int device) {
  cudaDeviceProp prop{};
  cudaError_t err = cudaGetDeviceProperties(&prop, device);
  if (err != cudaSuccess) return cuda_failure(err, "cudaGetDeviceProperties");
  return std::string(prop.name);
}

Status set_device(int device) {
  cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess) return cuda_failure(err, "cudaSetDevice");
  return ok_status();
}

Result<int> get_device() {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return cuda_failure(err, "cudaGetDevice");
  return device;
}

Result<void*> malloc_async(size_t bytes, void* stream) {
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

void free_async(void* p, void* stream) {
  if (p != nullptr && cudaFreeAsync(p, as_stream(stream)) != cudaSuccess) (void)cudaGetLastError();
}

Status memset_async(void* p, int value, size_t bytes, void* stream) {
  if (bytes == 0) return ok_status();
  cudaError_t err = cudaMemsetAsync(p, value, bytes, as_stream(stream));
  if (err != cudaSuccess) return cuda_failure(err, "cudaMemsetAsync");
  return ok_status();
}

Status memcpy_sync(void* dst, const void* src, size_t n, CopyKind kind) {
  if (n == 0) return ok_status();
  cudaError_t err = cudaMemcpy(dst, src, n, to_kind(kind));
  if (err != cudaSuccess) return cuda_failure(err, "cudaMemcpy");
  return ok_status();
}

Status memcpy_async(void* dst, const void* src, size_t n, CopyKind kind, void* stream) {
  if (n == 0) return ok_status();
  cudaError_t err = cudaMemcpyAsync(dst, src, n, to_kind(kind), as_stream(stream));
  if (err != cudaSuccess) return cuda_failure(err, "cudaMemcpyAsync");
  return ok_status();
}

Result<void*> stream_create(bool non_blocking) {
  cudaStream_t s = nullptr;
  cudaError_t err = cudaStreamCreateWithFlags(&s, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault);
  if (err != cudaSuccess) return cuda_failure(err, "cudaStreamCreateWithFlags");
  return static_cast<void*>(s);
}

void stream_destroy(void* s) {
  if (s != nullptr && cudaStreamDestroy(as_stream(s)) != cudaSuccess) (void)cudaGetLastError();
}

Status stream_synchronize(void* s) {
  cudaError_t err = cudaStreamSynchronize(as_stream(s));
  if (err != cudaSuccess) return cuda_failure(err, "cudaStreamSynchronize");
  return ok_status();
}

Result<void*> event_create() {
  cudaEvent_t e = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (err != cudaSuccess) return cuda_failure(err, "cudaEventCreateWithFlags");
  return static_cast<void*>(e);
}

void event_destroy(void* e) {
  if (e != nullptr && cudaEventDestroy(as_event(e)) != cudaSuccess) (void)cudaGetLastError();
}

Status event_record(void* e, void* s) {
  cudaError_t err = cudaEventRecord(as_event(e), as_stream(s));
  if (err != cudaSuccess) return cuda_failure(err, "cudaEventRecord");
  return ok_status();
}

Status stream_wait_event(void* s, void* e) {
  cudaError_t err = cudaStreamWaitEvent(as_stream(s), as_event(e), 0);
  if (err != cudaSuccess) return cuda_failure(err, "cudaStreamWaitEvent");
  return ok_status();
}

Status event_synchronize(void* e) {
  cudaError_t err = cudaEventSynchronize(as_event(e));
  if (err != cudaSuccess) return cuda_failure(err, "cudaEventSynchronize");
  return ok_status();
}

Result<void*> host_alloc_mapped(size_t bytes) {
  void* p = nullptr;
  cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocMapped);
  if (err != cudaSuccess) return cuda_failure(err, "cudaHostAlloc");
  return p;
}

void host_free(void* p) {
  if (p != nullptr && cudaFreeHost(p) != cudaSuccess) (void)cudaGetLastError();
}

Status last_launch_error(const char* what) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return cuda_failure(err, what);
  return ok_status();
}

}  // namespace trtx::cuda
