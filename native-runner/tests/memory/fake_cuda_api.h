// The CUDA wrapper (trtx/runtime/cuda_api.h) over N simulated devices, for
// the warm pool: its device and pool calls log themselves together with the
// calling thread's current device at the time, and can be told to fail; every
// other call refuses (NotSupported), so that a unit under test that strays
// from the calls it is meant to make fails.
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

using trtx::Status;

struct PoolCall {
  std::string op;    // getDevice setDevice getThreshold setThreshold sync trim clearError
  int device = -1;   // device argument (for sync: the current device)
  int current = -1;  // the calling thread's current device when called
  std::uint64_t value = 0;
};

class FakeCudaApi : public trtx::cuda::Api {
 public:
  explicit FakeCudaApi(int deviceCount) : thresholds_(deviceCount, 0), reserved_(deviceCount, 0) {}

  // Test setup / inspection (not part of the interface).
  std::vector<std::uint64_t>& thresholds() { return thresholds_; }
  std::vector<std::uint64_t>& reserved() { return reserved_; }
  std::set<std::string> failOps;  // "getThreshold:0", "setThreshold:1", "setDevice:1", "sync:0", "trim:0"
  bool errorLatched = false;      // set by a failed call, cleared by clearLastError
  std::vector<PoolCall> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
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
    if (failing("sync", device)) return error("sync");
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

  // Not the warm pool's calls.
  bool built() const override { return true; }
  int device_count() override { return static_cast<int>(thresholds_.size()); }
  trtx::Result<std::string> device_name(int) override { return refused("device_name"); }
  trtx::Result<void*> malloc_async(size_t, void*) override { return refused("malloc_async"); }
  Status free_async(void*, void*) override { return refused("free_async"); }
  Status memset_async(void*, int, size_t, void*) override { return refused("memset_async"); }
  Status memcpy_sync(void*, const void*, size_t, trtx::cuda::CopyKind) override { return refused("memcpy_sync"); }
  Status memcpy_async(void*, const void*, size_t, trtx::cuda::CopyKind, void*) override {
    return refused("memcpy_async");
  }
  trtx::Result<void*> stream_create(bool) override { return refused("stream_create"); }
  void stream_destroy(void*) override {}
  Status stream_synchronize(void*) override { return refused("stream_synchronize"); }
  trtx::Result<void*> event_create() override { return refused("event_create"); }
  void event_destroy(void*) override {}
  Status event_record(void*, void*) override { return refused("event_record"); }
  Status stream_wait_event(void*, void*) override { return refused("stream_wait_event"); }
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
    return trtx::fail(trtx::Error::NotSupported, op, "not faked: the warm pool does not make this call");
  }
  void log(const char* op, int device, std::uint64_t value) {
    calls_.push_back(PoolCall{op, device, currentLocked(std::this_thread::get_id()), value});
  }

  std::mutex mutex_;
  std::vector<std::uint64_t> thresholds_;
  std::vector<std::uint64_t> reserved_;
  std::map<std::thread::id, int> current_;
  std::vector<PoolCall> calls_;
};

}  // namespace trtx_test
