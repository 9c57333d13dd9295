#include "trtx/memory/shared_scratch_pool.h"

#include <algorithm>
#include <string>

#include "json_text.h"

namespace trtx {
namespace memory {

namespace {
// Where a failure of the pool is reported: the device's scratch, as the
// runner's delegates name it.
std::string where(int device) { return "shared_scratch.device" + std::to_string(device); }
}  // namespace

const char* toString(CapacityReason reason) {
  switch (reason) {
    case CapacityReason::kGrow:
      return "grow";
    case CapacityReason::kShrink:
      return "shrink";
    case CapacityReason::kGrowFailed:
      return "grow_failed";
    case CapacityReason::kShrinkFailed:
      return "shrink_failed";
  }
  return "unknown";
}

SharedScratchPool::SharedScratchPool(cuda::Api& api, SharedScratchOptions options) : api_(api), options_(options) {}

SharedScratchPool::~SharedScratchPool() { (void)shutdown(); }

void SharedScratchPool::resetWindow(DeviceState& state) {
  state.underfilledRun = 0;
  state.windowMax = 0;
}

Result<ScratchLease> SharedScratchPool::acquire(int device, std::size_t bytes, StreamHandle stream) {
  if (device < 0) {
    return fail(Error::InvalidArgument, "shared_scratch",
                "scratch acquire on negative device " + std::to_string(device));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceState& s = devices_[device];
  if (s.leased) {
    return fail(
        Error::InvalidState, where(device),
        "shared scratch of device " + std::to_string(device) + " is still leased: handOff the previous lease first");
  }
  const std::uint64_t index = s.executes++;
  if (options_.reclaim && !s.floorFrozen && index >= options_.warmupExecutes) {
    s.floorFrozen = true;
    s.floor = s.capacity;
  }

  if (s.event == nullptr) {
    Result<EventHandle> created = createEvent(device);
    if (!created.ok()) {
      resetWindow(s);
      return created.take_failure();
    }
    s.event = created.get();
  }

  // Hand-off: the previous enqueue, on whatever stream, finishes before this
  // one starts. Always waited on, never skipped by comparing stream handles:
  // handles are recycled, may be destroyed, and the NULL stream is legal.
  if (s.eventRecorded) {
    Status waited = wait(device, stream, s.event);
    if (!waited.ok()) {
      Status drained = synchronize(device);
      if (!drained.ok()) {
        resetWindow(s);
        return fail(drained.error(), where(device),
                    "scratch hand-off wait failed (" + describe(waited.failure()) +
                        ") and the device could not be drained: " + describe(drained.failure()));
      }
    }
  }

  if (bytes > s.capacity) {
    resetWindow(s);
    Status grown = replaceLocked(device, s, bytes, stream, index, CapacityReason::kGrow);
    if (!grown.ok()) return grown.take_failure();
  } else if (bytes == s.capacity) {
    resetWindow(s);
  } else if (options_.reclaim && s.floorFrozen) {
    ++s.underfilledRun;
    s.windowMax = std::max(s.windowMax, bytes);
    if (s.underfilledRun >= options_.shrinkAfter) {
      const std::size_t target = std::max(s.floor, s.windowMax);
      resetWindow(s);
      // A refused shrink is recorded and otherwise harmless: the larger
      // buffer still serves this execute.
      if (target < s.capacity) (void)replaceLocked(device, s, target, stream, index, CapacityReason::kShrink);
    }
  }

  s.leased = true;
  s.leaseTicket = nextTicket_++;
  ScratchLease lease;
  lease.device = device;
  lease.pointer = s.buffer;
  lease.bytes = bytes;
  lease.capacity = s.capacity;
  lease.executeIndex = index;
  lease.ticket = s.leaseTicket;
  return lease;
}

Status SharedScratchPool::replaceLocked(int device, DeviceState& s, std::size_t newBytes, StreamHandle stream,
                                        std::uint64_t executeIndex, CapacityReason reason) {
  const CapacityReason failedReason =
      reason == CapacityReason::kGrow ? CapacityReason::kGrowFailed : CapacityReason::kShrinkFailed;
  auto refuse = [&](const Failure& cause, const std::string& what) -> Status {
    CapacityEvent event{device, executeIndex, s.capacity, s.capacity, failedReason, what + ": " + describe(cause)};
    capacityEvents_.push_back(event);
    return fail(cause.code, where(device),
                "scratch " + std::string(toString(reason)) + " on device " + std::to_string(device) + " from " +
                    std::to_string(s.capacity) + " to " + std::to_string(newBytes) + " bytes failed (" + event.detail +
                    "); the previous buffer is kept");
  };

  // The new buffer comes first, so a refusal leaves the old one in place.
  void* fresh = nullptr;
  if (newBytes > 0) {
    Result<void*> allocated = allocate(device, newBytes, stream);
    if (!allocated.ok()) return refuse(allocated.failure(), "allocation");
    fresh = allocated.get();
  }

  std::string note;
  if (s.buffer != nullptr) {
    // An earlier enqueue, possibly on another stream, may still read the old
    // buffer; only a drained device proves it no longer does.
    Status drained = synchronize(device);
    if (!drained.ok()) {
      if (fresh != nullptr) (void)free(device, fresh, stream);
      return refuse(drained.failure(), "device synchronize before freeing the old buffer");
    }
    Status freed = free(device, s.buffer, stream);
    if (!freed.ok()) note = "old buffer not freed: " + describe(freed.failure());
  }

  capacityEvents_.push_back(CapacityEvent{device, executeIndex, s.capacity, newBytes, reason, note});
  s.buffer = fresh;
  s.capacity = newBytes;
  s.peakCapacity = std::max(s.peakCapacity, newBytes);
  return ok_status();
}

Status SharedScratchPool::handOff(const ScratchLease& lease, StreamHandle stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = devices_.find(lease.device);
  if (found == devices_.end() || !found->second.leased || found->second.leaseTicket != lease.ticket) {
    return fail(Error::InvalidArgument, where(lease.device),
                "handOff of a scratch lease that is not outstanding on device " + std::to_string(lease.device));
  }
  DeviceState& s = found->second;
  s.leased = false;
  Status recorded = record(lease.device, s.event, stream);
  if (recorded.ok()) {
    s.eventRecorded = true;
    return ok_status();
  }
  // With no event to wait on, the next user could overlap this enqueue: drain
  // the device now so that it cannot.
  s.eventRecorded = false;
  Status drained = synchronize(lease.device);
  if (!drained.ok()) {
    return fail(drained.error(), where(lease.device),
                "scratch hand-off event failed (" + describe(recorded.failure()) +
                    ") and the device could not be drained: " + describe(drained.failure()));
  }
  return fail(recorded.error(), where(lease.device),
              "scratch hand-off event failed, device drained instead: " + describe(recorded.failure()));
}

Status SharedScratchPool::shutdown() {
  std::lock_guard<std::mutex> lock(mutex_);
  Status first;
  for (auto& entry : devices_) {
    const int device = entry.first;
    DeviceState& s = entry.second;
    if (s.buffer == nullptr && s.event == nullptr) continue;
    if (s.leased && first.ok()) {
      first = fail(Error::InvalidState, "shared_scratch",
                   "shutdown with the scratch of device " + std::to_string(device) + " still leased");
    }
    Status drained = synchronize(device);
    if (!drained.ok()) {
      // Freeing memory a running enqueue may read is worse than leaking it.
      if (first.ok()) first = drained;
    } else if (s.buffer != nullptr) {
      Status freed = free(device, s.buffer, nullptr);
      if (!freed.ok() && first.ok()) first = freed;
    }
    if (s.event != nullptr) destroyEvent(device, s.event);
    s.buffer = nullptr;
    s.capacity = 0;
    s.event = nullptr;
    s.eventRecorded = false;
    s.leased = false;
    resetWindow(s);
  }
  return first;
}

// Each device call runs with the lease's device current: the NULL stream is
// the current device's, and an event belongs to the device it was created on.
#define TRTX_SCRATCH_DEVICE_SCOPE(device) \
  cuda::DeviceScope scope_(api_, device); \
  if (!scope_.status().ok()) return scope_.status().failure()

Result<void*> SharedScratchPool::allocate(int device, std::size_t bytes, StreamHandle stream) {
  TRTX_SCRATCH_DEVICE_SCOPE(device);
  return api_.malloc_async(bytes, stream);
}

Status SharedScratchPool::free(int device, void* pointer, StreamHandle stream) {
  TRTX_SCRATCH_DEVICE_SCOPE(device);
  return api_.free_async(pointer, stream);
}

Status SharedScratchPool::synchronize(int device) {
  TRTX_SCRATCH_DEVICE_SCOPE(device);
  return api_.device_synchronize();
}

Result<EventHandle> SharedScratchPool::createEvent(int device) {
  TRTX_SCRATCH_DEVICE_SCOPE(device);
  return api_.event_create();
}

Status SharedScratchPool::record(int device, EventHandle event, StreamHandle stream) {
  TRTX_SCRATCH_DEVICE_SCOPE(device);
  return api_.event_record(event, stream);
}

Status SharedScratchPool::wait(int device, StreamHandle stream, EventHandle event) {
  TRTX_SCRATCH_DEVICE_SCOPE(device);
  return api_.stream_wait_event(stream, event);
}

void SharedScratchPool::destroyEvent(int device, EventHandle event) {
  cuda::DeviceScope scope(api_, device);
  api_.event_destroy(event);
}

#undef TRTX_SCRATCH_DEVICE_SCOPE

std::size_t SharedScratchPool::capacity(int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = devices_.find(device);
  return found == devices_.end() ? 0 : found->second.capacity;
}

ScratchDeviceStats SharedScratchPool::stats(int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  ScratchDeviceStats out;
  out.device = device;
  auto found = devices_.find(device);
  if (found == devices_.end()) return out;
  const DeviceState& s = found->second;
  out.capacity = s.capacity;
  out.peakCapacity = s.peakCapacity;
  out.floorFrozen = s.floorFrozen;
  out.floor = s.floor;
  out.executes = s.executes;
  out.underfilledRun = s.underfilledRun;
  return out;
}

std::vector<CapacityEvent> SharedScratchPool::capacityEvents() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacityEvents_;
}

std::string SharedScratchPool::reportJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = "{\"mode\":\"shared\",\"reclaim\":";
  out += options_.reclaim ? "true" : "false";
  out += ",\"warmup_executes\":" + std::to_string(options_.warmupExecutes);
  out += ",\"shrink_after\":" + std::to_string(options_.shrinkAfter);
  out += ",\"devices\":[";
  bool first = true;
  for (const auto& entry : devices_) {
    const DeviceState& s = entry.second;
    if (!first) out += ",";
    first = false;
    out += "{\"device\":" + std::to_string(entry.first);
    out += ",\"capacity\":" + std::to_string(s.capacity);
    out += ",\"peak_capacity\":" + std::to_string(s.peakCapacity);
    out += ",\"floor\":" + (s.floorFrozen ? std::to_string(s.floor) : std::string("null"));
    out += ",\"executes\":" + std::to_string(s.executes) + "}";
  }
  out += "],\"capacity_events\":[";
  first = true;
  for (const CapacityEvent& e : capacityEvents_) {
    if (!first) out += ",";
    first = false;
    out += "{\"device\":" + std::to_string(e.device);
    out += ",\"execute_index\":" + std::to_string(e.executeIndex);
    out += ",\"from\":" + std::to_string(e.from);
    out += ",\"to\":" + std::to_string(e.to);
    out += ",\"reason\":" + json::quote(toString(e.reason));
    out += ",\"detail\":" + (e.detail.empty() ? std::string("null") : json::quote(e.detail)) + "}";
  }
  out += "]}";
  return out;
}

}  // namespace memory
}  // namespace trtx
