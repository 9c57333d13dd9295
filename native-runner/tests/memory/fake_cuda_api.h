// The CUDA wrapper (trtx/runtime/cuda_api.h) over N simulated devices, the
// one fake of the device for the memory units. Every call the warm pool and
// the shared scratch pool make logs itself together with the calling
// thread's current device at the time, and can be told to fail; every other
// call refuses (NotSupported), so that a unit under test that strays from the
// calls it is meant to make fails.
//
// It models just enough of the device to catch the unsafe case of the shared
// scratch: an event recorded on a device stays pending until that device is
// synchronized, and freeing memory on a device with a pending event (or
// recording an event on another device than its own) is logged as a
// violation.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "trtx/runtime/cuda_api.h"

namespace trtx_test {

using trtx::Result;
using trtx::Status;
using StreamHandle = void*;
using EventHandle = void*;

struct CudaCall {
  // The warm pool's: getDevice setDevice getThreshold setThreshold sync trim
  // clearError. The shared scratch's: allocate allocateFailed free sync
  // createEvent record wait destroyEvent.
  std::string op;
  int device = -1;   // device argument (for sync and the scratch's calls: the current device)
  int current = -1;  // the calling thread's current device when called
  std::uint64_t value = 0;
  StreamHandle stream = nullptr;
  void* pointer = nullptr;  // allocate: result, free: argument
  std::size_t bytes = 0;
  EventHandle event = nullptr;
};

class FakeCudaApi : public trtx::cuda::Api {
 public:
  explicit FakeCudaApi(int deviceCount) : thresholds_(deviceCount, 0), reserved_(deviceCount, 0) {}

  // Shared scratch controls: the next N calls of a kind fail.
  int failNextAllocations = 0;
  int failNextWaits = 0;
  int failNextRecords = 0;
  int failNextSyncs = 0;
  int failNextCreates = 0;
  std::vector<std::string> violations;
  std::map<void*, std::size_t> live;  // device pointer -> bytes

  // Test setup / inspection (not part of the interface).
  std::vector<std::uint64_t>& thresholds() { return thresholds_; }
  std::vector<std::uint64_t>& reserved() { return reserved_; }
  std::set<std::string> failOps;  // "getThreshold:0", "setThreshold:1", "setDevice:1", "sync:0", "trim:0"
  bool errorLatched = false;      // set by a failed call, cleared by clearLastError
  std::vector<CudaCall> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  void clearCalls() {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.clear();
  }
  std::size_t count(const std::string& op) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t n = 0;
    for (const CudaCall& c : calls_) n += c.op == op ? 1 : 0;
    return n;
  }
  // Index of the n-th (0-based) call of `op` in calls(), or -1.
  long indexOf(const std::string& op, std::size_t nth = 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      if (calls_[i].op == op && nth-- == 0) return static_cast<long>(i);
    }
    return -1;
  }
  bool pending(EventHandle event) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = events_.find(event);
    return found != events_.end() && found->second.pending;
  }
  std::size_t liveBytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t total = 0;
    for (const auto& entry : live) total += entry.second;
    return total;
  }
  int currentOf(std::thread::id thread) {
    std::lock_guard<std::mutex> lock(mutex_);
    return currentLocked(thread);
  }
  void setCurrentOf(std::thread::id thread, int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    current_[thread] = device;
  }

  trtx::Result<int> get_device() override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("getDevice", -1, 0);
    if (failing("getDevice", -1)) return error("getDevice").take_failure();
    return currentLocked(std::this_thread::get_id());
  }
  Status set_device(int device) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("setDevice", device, 0);
    if (failing("setDevice", device) || !valid(device)) return error("setDevice");
    current_[std::this_thread::get_id()] = device;
    return trtx::ok_status();
  }
  trtx::Result<std::uint64_t> pool_release_threshold(int device) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("getThreshold", device, 0);
    if (failing("getThreshold", device) || !valid(device)) return error("getThreshold").take_failure();
    return thresholds_[device];
  }
  Status set_pool_release_threshold(int device, std::uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("setThreshold", device, bytes);
    if (failing("setThreshold", device) || !valid(device)) return error("setThreshold");
    thresholds_[device] = bytes;
    return trtx::ok_status();
  }
  Status device_synchronize() override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int device = currentLocked(std::this_thread::get_id());
    log("sync", device, 0);
    if (failing("sync", device) || consume(failNextSyncs)) return error("sync");
    for (auto& entry : events_) {
      if (entry.second.device == device) entry.second.pending = false;
    }
    return trtx::ok_status();
  }
  Status pool_trim_to(int device, std::size_t minBytesToKeep) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("trim", device, minBytesToKeep);
    if (failing("trim", device) || !valid(device)) return error("trim");
    if (reserved_[device] > minBytesToKeep) reserved_[device] = minBytesToKeep;
    return trtx::ok_status();
  }
  void clear_last_error() override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("clearError", -1, 0);
    errorLatched = false;
  }

  // The shared scratch pool's calls, on the current device.
  Result<void*> malloc_async(std::size_t bytes, StreamHandle stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int device = currentLocked(std::this_thread::get_id());
    if (bytes == 0) violations.push_back("allocate called with 0 bytes");
    if (consume(failNextAllocations)) {
      logScratch(CudaCall{"allocateFailed", device, device, 0, stream, nullptr, bytes, nullptr});
      return trtx::fail(trtx::Error::MemoryAllocationFailed, "", "fake out of memory");
    }
    void* pointer = reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x10000 * ++nextId_));
    live[pointer] = bytes;
    logScratch(CudaCall{"allocate", device, device, 0, stream, pointer, bytes, nullptr});
    return pointer;
  }
  Status free_async(void* pointer, StreamHandle stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int device = currentLocked(std::this_thread::get_id());
    logScratch(CudaCall{"free", device, device, 0, stream, pointer, 0, nullptr});
    for (const auto& entry : events_) {
      if (entry.second.device == device && entry.second.pending) {
        violations.push_back("free while an enqueue event is pending on device " + std::to_string(device));
      }
    }
    if (live.erase(pointer) == 0) violations.push_back("free of a pointer that is not live");
    return trtx::ok_status();
  }
  Result<void*> event_create() override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int device = currentLocked(std::this_thread::get_id());
    if (consume(failNextCreates)) return trtx::fail(trtx::Error::CudaError, "", "fake event create failure");
    EventHandle event = reinterpret_cast<EventHandle>(static_cast<std::uintptr_t>(0x900 + ++nextId_));
    events_[event] = EventState{device, false};
    logScratch(CudaCall{"createEvent", device, device, 0, nullptr, nullptr, 0, event});
    return event;
  }
  Status event_record(EventHandle event, StreamHandle stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int device = currentLocked(std::this_thread::get_id());
    logScratch(CudaCall{"record", device, device, 0, stream, nullptr, 0, event});
    if (events_[event].device != device) violations.push_back("event recorded on another device than its own");
    if (consume(failNextRecords)) return trtx::fail(trtx::Error::CudaError, "", "fake record failure");
    events_[event].pending = true;
    return trtx::ok_status();
  }
  Status stream_wait_event(StreamHandle stream, EventHandle event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int device = currentLocked(std::this_thread::get_id());
    logScratch(CudaCall{"wait", device, device, 0, stream, nullptr, 0, event});
    if (consume(failNextWaits)) return trtx::fail(trtx::Error::CudaError, "", "fake wait failure");
    return trtx::ok_status();
  }
  void event_destroy(EventHandle event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int device = currentLocked(std::this_thread::get_id());
    logScratch(CudaCall{"destroyEvent", device, device, 0, nullptr, nullptr, 0, event});
    events_.erase(event);
  }

  // Neither unit's calls.
  bool built() const override { return true; }
  int device_count() override { return static_cast<int>(thresholds_.size()); }
  trtx::Result<std::string> device_name(int) override { return refused("device_name"); }
  Status memset_async(void*, int, size_t, void*) override { return refused("memset_async"); }
  Status memcpy_sync(void*, const void*, size_t, trtx::cuda::CopyKind) override { return refused("memcpy_sync"); }
  Status memcpy_async(void*, const void*, size_t, trtx::cuda::CopyKind, void*) override {
    return refused("memcpy_async");
  }
  trtx::Result<void*> stream_create(bool) override { return refused("stream_create"); }
  void stream_destroy(void*) override {}
  Status stream_synchronize(void*) override { return refused("stream_synchronize"); }
  Status event_synchronize(void*) override { return refused("event_synchronize"); }
  trtx::Result<void*> host_alloc_mapped(size_t) override { return refused("host_alloc_mapped"); }
  void host_free(void*) override {}
  Status last_launch_error(const char*) override { return trtx::ok_status(); }

 private:
  int currentLocked(std::thread::id thread) {
    auto found = current_.find(thread);
    return found == current_.end() ? 0 : found->second;
  }
  bool valid(int device) const { return device >= 0 && device < static_cast<int>(thresholds_.size()); }
  bool failing(const char* op, int device) const {
    return failOps.count(std::string(op) + ":" + std::to_string(device)) > 0;
  }
  Status error(const char* op) {
    errorLatched = true;
    return trtx::fail(trtx::Error::CudaError, "", std::string("fake ") + op + " failed");
  }
  static trtx::Failure refused(const char* op) {
    return trtx::fail(trtx::Error::NotSupported, op, "not faked: neither memory unit makes this call");
  }
  void log(const char* op, int device, std::uint64_t value) {
    CudaCall call;
    call.op = op;
    call.device = device;
    call.current = currentLocked(std::this_thread::get_id());
    call.value = value;
    calls_.push_back(call);
  }
  void logScratch(const CudaCall& call) { calls_.push_back(call); }
  static bool consume(int& failNext) {
    if (failNext <= 0) return false;
    --failNext;
    return true;
  }
  struct EventState {
    int device = -1;
    bool pending = false;
  };

  std::mutex mutex_;
  std::vector<std::uint64_t> thresholds_;
  std::vector<std::uint64_t> reserved_;
  std::map<std::thread::id, int> current_;
  std::vector<CudaCall> calls_;
  std::map<EventHandle, EventState> events_;
  std::uintptr_t nextId_ = 0;
};

}  // namespace trtx_test
