// One activation scratch buffer per device backing every engine on it
// (pytorch/TensorRT#4600, SharedScratchPool.h), with reclamation after demand
// falls (NVIDIA/TensorRT-LLM#19051, WorkspaceShrinkPolicy); both are in
// docs/runtime-contracts.md. Pure policy: every device effect is a call of
// the cuda::Api it is given (the CUDA runtime, its host stand-in, or a fake
// in the tests), made with the lease's device current (cuda::DeviceScope):
// cudaMallocAsync / cudaFreeAsync on the caller stream, cudaDeviceSynchronize,
// and one event per device (cudaEventCreateWithFlags(DisableTiming),
// cudaEventRecord, cudaStreamWaitEvent, cudaEventDestroy).
//
// Protocol for each delegate execute, on the thread that runs it:
//   auto lease = pool.acquire(device, needBytes, stream);   // after binding shapes
//   if (!lease.ok()) -> fail the execute (an earlier, smaller buffer is intact)
//   context->setDeviceMemoryV2(lease.value().pointer, lease.value().capacity);
//   enqueue on `stream` (whether or not it succeeded:)
//   pool.handOff(lease.value(), stream);
// The lease is valid on `stream` only, until handOff. The next acquire on the
// device, from any stream, waits on the event handOff recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "trtx/memory/memory_error.h"
#include "trtx/runtime/cuda_api.h"
#include "trtx/runtime/result.h"

namespace trtx {
namespace memory {

using StreamHandle = void*;  // cudaStream_t; nullptr is the legal NULL stream
using EventHandle = void*;   // cudaEvent_t

struct SharedScratchOptions {
  // Reclamation on top of the shared pool. false: grow-only, as upstream's pool.
  bool reclaim = true;
  // Executes per device before the floor is frozen at the capacity then. Count
  // delegate executes: the runner should pass the number of delegate calls on
  // the device in one program execute, so the floor covers the largest engine
  // and steady-state programs never shrink and regrow within a step.
  std::uint64_t warmupExecutes = 1;
  // Consecutive underfilled executes that trigger a shrink (3, as
  // WorkspaceShrinkPolicy in NVIDIA/TensorRT-LLM#19051).
  std::uint32_t shrinkAfter = 3;
};

struct ScratchLease {
  int device = -1;
  void* pointer = nullptr;   // nullptr only when capacity is 0
  std::size_t bytes = 0;     // what was asked for
  std::size_t capacity = 0;  // what the buffer holds (>= bytes)
  std::uint64_t executeIndex = 0;
  std::uint64_t ticket = 0;  // matches handOff to this acquire
};

enum class CapacityReason { kGrow, kShrink, kGrowFailed, kShrinkFailed };
const char* toString(CapacityReason reason);

// One change (or refused change) of a device's capacity, for the JSON report.
struct CapacityEvent {
  int device = -1;
  std::uint64_t executeIndex = 0;
  std::size_t from = 0;
  std::size_t to = 0;  // == from for the *Failed reasons
  CapacityReason reason = CapacityReason::kGrow;
  std::string detail;  // the failure message, or a non-fatal note
};

struct ScratchDeviceStats {
  int device = -1;
  std::size_t capacity = 0;
  std::size_t peakCapacity = 0;
  bool floorFrozen = false;
  std::size_t floor = 0;
  std::uint64_t executes = 0;
  std::uint32_t underfilledRun = 0;
};

// Thread-safe; one lease per device at a time (a second acquire before the
// first is handed off is kBusy: concurrent same-device executes would need a
// buffer per stream).
class SharedScratchPool {
 public:
  // `api` must outlive the pool.
  explicit SharedScratchPool(cuda::Api& api, SharedScratchOptions options = SharedScratchOptions());
  // Calls shutdown() if the owner did not.
  ~SharedScratchPool();

  SharedScratchPool(const SharedScratchPool&) = delete;
  SharedScratchPool& operator=(const SharedScratchPool&) = delete;

  Result<ScratchLease> acquire(int device, std::size_t bytes, StreamHandle stream);
  // Records the hand-off event on `stream` after the enqueue. Call it even if
  // the enqueue failed: recording after nothing is harmless, skipping it would
  // leave the device busy.
  Status handOff(const ScratchLease& lease, StreamHandle stream);

  // Drains every device and frees every buffer and event. Later acquires start
  // from nothing. Call before the warm pool's last release so that the trim
  // can return this memory to the driver.
  Status shutdown();

  std::size_t capacity(int device) const;
  ScratchDeviceStats stats(int device) const;
  std::vector<CapacityEvent> capacityEvents() const;
  // {"mode":"shared","reclaim":..,"warmup_executes":..,"devices":[..],"capacity_events":[..]}
  std::string reportJson() const;

 private:
  struct DeviceState {
    void* buffer = nullptr;
    std::size_t capacity = 0;
    std::size_t peakCapacity = 0;
    EventHandle event = nullptr;
    bool eventRecorded = false;
    bool leased = false;
    std::uint64_t leaseTicket = 0;
    std::uint64_t executes = 0;
    bool floorFrozen = false;
    std::size_t floor = 0;
    std::uint32_t underfilledRun = 0;
    std::size_t windowMax = 0;
  };

  Status replaceLocked(int device, DeviceState& state, std::size_t newBytes, StreamHandle stream,
                       std::uint64_t executeIndex, CapacityReason reason);
  void resetWindow(DeviceState& state);

  // The device calls, each with `device` current (cuda::DeviceScope).
  Result<void*> allocate(int device, std::size_t bytes, StreamHandle stream);
  Status free(int device, void* pointer, StreamHandle stream);
  // Host waits for all work on the device.
  Status synchronize(int device);
  Result<EventHandle> createEvent(int device);
  Status record(int device, EventHandle event, StreamHandle stream);
  // The stream's next work starts after the event.
  Status wait(int device, StreamHandle stream, EventHandle event);
  void destroyEvent(int device, EventHandle event);

  cuda::Api& api_;
  const SharedScratchOptions options_;
  mutable std::mutex mutex_;
  std::map<int, DeviceState> devices_;
  std::vector<CapacityEvent> capacityEvents_;
  std::uint64_t nextTicket_ = 1;
};

}  // namespace memory
}  // namespace trtx
