// Where device work happens. A program's CUDA arenas are real device memory
// when the runner executes on a GPU (Target::Cuda) and host memory standing
// in for it otherwise (Target::Host): the placement of every tensor stays the
// program's (Placement::Device for a tensor planned in a CUDA arena), so the
// copies, their direction checks and their byte counts are the same on both
// targets and only the memory behind them differs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "trtx/runtime/cuda_api.h"
#include "trtx/runtime/result.h"

namespace trtx::runtime {

enum class Target : uint8_t { Host, Cuda };

/// Where a tensor's bytes live as the program planned them.
enum class Placement : uint8_t { Host, Device };

/// A CUDA stream or event as an opaque handle (null: none / legacy stream).
struct StreamRef {
  void* handle = nullptr;
};
struct EventRef {
  void* handle = nullptr;
};

/// Host<->device traffic, counted by whoever issues a copy.
struct CopyCounters {
  uint64_t h2d_bytes = 0;
  uint64_t d2h_bytes = 0;
  uint64_t d2d_bytes = 0;
  void reset() { *this = CopyCounters(); }
};

/// True when this build has the CUDA executors.
bool cuda_built();

/// Number of visible CUDA devices (0 in a CPU-only build or without a GPU).
int cuda_device_count();

/// Ok on Target::Host or when cuda:`device` is visible; else DeviceUnavailable
/// naming `what` ("the program plans memory") and the devices there are: a
/// program planned for more GPUs than the machine has is the environment's
/// limit, said before any CUDA call would answer "invalid device ordinal".
Status require_device(Target target, int device, const std::string& what);

/// Device name as the driver reports it.
Result<std::string> cuda_device_name(int device);

/// Makes `device` the calling thread's current CUDA device for a scope and
/// puts the caller's device back at its end (nothing on Target::Host, and no
/// call when it already is current). CUDA binds allocations from the null
/// stream, kernel launches, stream and event creation to the current device,
/// so every operation for a device other than the caller's runs inside one
/// (as Torch-TensorRT's runtime switches to the engine's device before an
/// enqueue: core/runtime/execute_engine.cpp, and as PyTorch's CUDAGuard does).
class DeviceScope {
 public:
  /// On Target::Cuda, cuda::DeviceScope over the process's CUDA runtime.
  DeviceScope(Target target, int device);
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  /// Why the device could not be made current (ok otherwise).
  const Status& status() const { return scope_ ? scope_->status() : ok_; }

 private:
  std::optional<cuda::DeviceScope> scope_;
  Status ok_;
};

/// The device operations the runtime needs, for one target and one device.
/// On Target::Host every operation is immediate and streams/events are
/// bookkeeping only. On Target::Cuda each operation runs with its device
/// current (DeviceScope), whichever device the calling thread is on.
class DeviceContext {
 public:
  DeviceContext(Target target, int device_index) : target_(target), device_(device_index) {}

  Target target() const { return target_; }
  int device_index() const { return device_; }

  /// Selects this context's device for the calling thread (CUDA only).
  Status activate() const;

  /// Zero-initialised device memory, stream-ordered on `stream` (CUDA:
  /// cudaMallocAsync + cudaMemsetAsync). Host target: calloc.
  Result<void*> allocate(size_t bytes, StreamRef stream) const;
  void release(void* ptr, StreamRef stream) const;

  /// Memory that is not cleared, as cudaMallocAsync hands it out (host
  /// target: malloc). 256-byte aligned on both targets. Freed with release().
  Result<void*> allocate_uninitialized(size_t bytes, StreamRef stream) const;
  /// Sets `n` bytes to `byte`, stream-ordered on `stream` (cudaMemsetAsync).
  Status fill(void* ptr, uint8_t byte, size_t n, StreamRef stream) const;

  /// Zero-initialised host memory (the runner's own host buffers).
  static Result<void*> allocate_host(size_t bytes);
  static void release_host(void* ptr);

  /// Copies `n` bytes, direction from the two placements; counts the bytes.
  /// With `stream` null the copy is synchronous (cudaMemcpy); otherwise it is
  /// enqueued on `stream`, and a copy into host memory is followed by a
  /// synchronize of that stream so the host can read the result.
  Status copy(void* dst, Placement dst_p, const void* src, Placement src_p, size_t n, StreamRef stream,
              CopyCounters* counters) const;

  Result<StreamRef> create_stream(bool non_blocking) const;
  void destroy_stream(StreamRef s) const;
  Status synchronize(StreamRef s) const;

  Result<EventRef> create_event() const;
  void destroy_event(EventRef e) const;
  Status record(EventRef e, StreamRef s) const;
  /// Makes later work on `s` wait for `e` (device-side, the host does not block).
  Status wait(StreamRef s, EventRef e) const;
  /// Blocks the host until `e` completes.
  Status event_synchronize(EventRef e) const;

  /// 16 bytes of zeroed pinned host memory the device can write (a mapped
  /// host allocation), for faults a kernel raises without forcing a
  /// synchronize; the host reads them once the stream is known complete.
  Result<void*> allocate_mapped_flag() const;
  void release_mapped_flag(void* p) const;

 private:
  Target target_;
  int device_;
};

}  // namespace trtx::runtime
