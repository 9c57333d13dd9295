// A DevicePoolApi over N simulated devices that logs every call together with
// the calling thread's current device at the time, and can be told to fail.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "trtx/memory/device_pool_api.h"

namespace trtx_test {

using trtx::Status;
using trtx::memory::DevicePoolApi;

struct PoolCall {
  std::string op;    // getDevice setDevice getThreshold setThreshold sync trim clearError
  int device = -1;   // device argument (for sync: the current device)
  int current = -1;  // the calling thread's current device when called
  std::uint64_t value = 0;
};

class FakeDevicePoolApi : public DevicePoolApi {
 public:
  explicit FakeDevicePoolApi(int deviceCount) : thresholds_(deviceCount, 0), reserved_(deviceCount, 0) {}

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

  Status getCurrentDevice(int* device) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("getDevice", -1, 0);
    if (failing("getDevice", -1)) return error("getDevice");
    *device = currentLocked(std::this_thread::get_id());
    return trtx::ok_status();
  }
  Status setCurrentDevice(int device) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("setDevice", device, 0);
    if (failing("setDevice", device) || !valid(device)) return error("setDevice");
    current_[std::this_thread::get_id()] = device;
    return trtx::ok_status();
  }
  Status getReleaseThreshold(int device, std::uint64_t* bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("getThreshold", device, 0);
    if (failing("getThreshold", device) || !valid(device)) return error("getThreshold");
    *bytes = thresholds_[device];
    return trtx::ok_status();
  }
  Status setReleaseThreshold(int device, std::uint64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("setThreshold", device, bytes);
    if (failing("setThreshold", device) || !valid(device)) return error("setThreshold");
    thresholds_[device] = bytes;
    return trtx::ok_status();
  }
  Status synchronizeCurrentDevice() override {
    std::lock_guard<std::mutex> lock(mutex_);
    const int device = currentLocked(std::this_thread::get_id());
    log("sync", device, 0);
    if (failing("sync", device)) return error("sync");
    return trtx::ok_status();
  }
  Status trimTo(int device, std::size_t minBytesToKeep) override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("trim", device, minBytesToKeep);
    if (failing("trim", device) || !valid(device)) return error("trim");
    if (reserved_[device] > minBytesToKeep) reserved_[device] = minBytesToKeep;
    return trtx::ok_status();
  }
  void clearLastError() override {
    std::lock_guard<std::mutex> lock(mutex_);
    log("clearError", -1, 0);
    errorLatched = false;
  }

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
