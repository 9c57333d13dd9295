// One fake standing for both the allocator and the event factory, so that a
// single log orders their calls. It models just enough of the device to catch
// the unsafe case: an event recorded on a device stays pending until that
// device (or that event) is synchronized, and freeing memory on a device with
// a pending event is logged as a violation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trtx/memory/scratch_backend.h"

namespace trtx_test {

using trtx::Result;
using trtx::Status;
using trtx::memory::Allocator;
using trtx::memory::EventFactory;
using trtx::memory::EventHandle;
using trtx::memory::StreamHandle;

struct ScratchCall {
  std::string op;  // allocate free sync createEvent record wait destroyEvent
  int device = -1;
  StreamHandle stream = nullptr;
  void* pointer = nullptr;  // allocate: result, free: argument
  std::size_t bytes = 0;
  EventHandle event = nullptr;
};

class FakeScratchBackend : public Allocator, public EventFactory {
 public:
  // Test controls.
  int failNextAllocations = 0;
  int failNextWaits = 0;
  int failNextRecords = 0;
  int failNextSyncs = 0;
  int failNextCreates = 0;
  std::vector<ScratchCall> calls;
  std::vector<std::string> violations;
  std::map<void*, std::size_t> live;  // pointer -> bytes

  std::size_t count(const std::string& op) const {
    std::size_t n = 0;
    for (const ScratchCall& c : calls) n += c.op == op ? 1 : 0;
    return n;
  }
  // Index of the n-th (0-based) call of `op`, or -1.
  long indexOf(const std::string& op, std::size_t nth = 0) const {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].op == op && nth-- == 0) return static_cast<long>(i);
    }
    return -1;
  }
  bool pending(EventHandle event) const {
    auto found = events_.find(event);
    return found != events_.end() && found->second.pending;
  }
  std::size_t liveBytes() const {
    std::size_t total = 0;
    for (const auto& entry : live) total += entry.second;
    return total;
  }

  Result<void*> allocate(int device, std::size_t bytes, StreamHandle stream) override {
    if (bytes == 0) violations.push_back("allocate called with 0 bytes");
    if (failNextAllocations > 0) {
      --failNextAllocations;
      calls.push_back(ScratchCall{"allocateFailed", device, stream, nullptr, bytes, nullptr});
      return trtx::fail(trtx::Error::MemoryAllocationFailed, "", "fake out of memory");
    }
    void* pointer = reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x10000 * ++nextId_));
    live[pointer] = bytes;
    calls.push_back(ScratchCall{"allocate", device, stream, pointer, bytes, nullptr});
    return pointer;
  }
  Status free(int device, void* pointer, StreamHandle stream) override {
    calls.push_back(ScratchCall{"free", device, stream, pointer, 0, nullptr});
    for (const auto& entry : events_) {
      if (entry.second.device == device && entry.second.pending) {
        violations.push_back("free while an enqueue event is pending on device " + std::to_string(device));
      }
    }
    if (live.erase(pointer) == 0) violations.push_back("free of a pointer that is not live");
    return trtx::ok_status();
  }
  Status synchronizeDevice(int device) override {
    calls.push_back(ScratchCall{"sync", device, nullptr, nullptr, 0, nullptr});
    if (failNextSyncs > 0) {
      --failNextSyncs;
      return trtx::fail(trtx::Error::CudaError, "", "fake sync failure");
    }
    for (auto& entry : events_) {
      if (entry.second.device == device) entry.second.pending = false;
    }
    return trtx::ok_status();
  }

  Result<EventHandle> create(int device) override {
    if (failNextCreates > 0) {
      --failNextCreates;
      return trtx::fail(trtx::Error::CudaError, "", "fake event create failure");
    }
    EventHandle event = reinterpret_cast<EventHandle>(static_cast<std::uintptr_t>(0x900 + ++nextId_));
    events_[event] = EventState{device, false};
    calls.push_back(ScratchCall{"createEvent", device, nullptr, nullptr, 0, event});
    return event;
  }
  Status record(int device, EventHandle event, StreamHandle stream) override {
    calls.push_back(ScratchCall{"record", device, stream, nullptr, 0, event});
    if (failNextRecords > 0) {
      --failNextRecords;
      return trtx::fail(trtx::Error::CudaError, "", "fake record failure");
    }
    events_[event].pending = true;
    return trtx::ok_status();
  }
  Status wait(int device, StreamHandle stream, EventHandle event) override {
    calls.push_back(ScratchCall{"wait", device, stream, nullptr, 0, event});
    if (failNextWaits > 0) {
      --failNextWaits;
      return trtx::fail(trtx::Error::CudaError, "", "fake wait failure");
    }
    return trtx::ok_status();
  }
  void destroy(int device, EventHandle event) override {
    calls.push_back(ScratchCall{"destroyEvent", device, nullptr, nullptr, 0, event});
    events_.erase(event);
  }

 private:
  struct EventState {
    int device = -1;
    bool pending = false;
  };
  std::map<EventHandle, EventState> events_;
  std::uintptr_t nextId_ = 0;
};

}  // namespace trtx_test
