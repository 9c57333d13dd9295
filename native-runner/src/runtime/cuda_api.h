// Thin CUDA runtime wrappers (internal). A CPU-only build links stubs that
// report NotSupported; nothing outside DeviceContext calls these directly
// except the CUDA engine executor.
#pragma once

#include <cstddef>
#include <string>

#include "trtx/runtime/result.h"

namespace trtx::cuda {

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice, HostToHost };

bool built();
int device_count();
Result<std::string> device_name(int device);
Status set_device(int device);
/// The calling thread's current device (cudaGetDevice).
Result<int> get_device();
Result<void*> malloc_async(size_t bytes, void* stream);
void free_async(void* p, void* stream);
Status memset_async(void* p, int value, size_t bytes, void* stream);
Status memcpy_sync(void* dst, const void* src, size_t n, CopyKind kind);
Status memcpy_async(void* dst, const void* src, size_t n, CopyKind kind, void* stream);
Result<void*> stream_create(bool non_blocking);
void stream_destroy(void* s);
Status stream_synchronize(void* s);
Result<void*> event_create();
void event_destroy(void* e);
Status event_record(void* e, void* s);
Status stream_wait_event(void* s, void* e);
Status event_synchronize(void* e);
Result<void*> host_alloc_mapped(size_t bytes);
void host_free(void* p);
/// Error of the last kernel launch (cudaGetLastError), as a Status.
Status last_launch_error(const char* what);

}  // namespace trtx::cuda
