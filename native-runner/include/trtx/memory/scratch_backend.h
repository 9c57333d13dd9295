// What the shared scratch policy needs from the device, as two interfaces: the
// CPU tests give it fakes that log every call, the runner gives it the CUDA
// implementations from cuda_backends.h. Handles are opaque so that no header
// of this unit needs cuda_runtime.h (a cudaStream_t / cudaEvent_t is a pointer).
#pragma once

#include <cstddef>

#include "trtx/memory/memory_error.h"
#include "trtx/runtime/result.h"

namespace trtx {
namespace memory {

using StreamHandle = void*;  // cudaStream_t; nullptr is the legal NULL stream
using EventHandle = void*;   // cudaEvent_t

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Stream-ordered allocation on the caller stream (cudaMallocAsync). Never
  // called with bytes == 0.
  virtual Result<void*> allocate(int device, std::size_t bytes, StreamHandle stream) = 0;
  // Stream-ordered free (cudaFreeAsync). The policy only calls it once no
  // enqueue can still read the buffer.
  virtual Status free(int device, void* pointer, StreamHandle stream) = 0;
  // Host waits for all work on the device (cudaDeviceSynchronize under a device
  // switch that restores the caller's current device).
  virtual Status synchronizeDevice(int device) = 0;
};

class EventFactory {
 public:
  virtual ~EventFactory() = default;
  virtual Result<EventHandle> create(int device) = 0;
  // cudaEventRecord(event, stream): marks the end of an enqueue.
  virtual Status record(int device, EventHandle event, StreamHandle stream) = 0;
  // cudaStreamWaitEvent(stream, event): the next enqueue starts after it.
  virtual Status wait(int device, StreamHandle stream, EventHandle event) = 0;
  virtual void destroy(int device, EventHandle event) = 0;
};

}  // namespace memory
}  // namespace trtx
