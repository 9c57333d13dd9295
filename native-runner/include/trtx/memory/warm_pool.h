// Keeps each device's default stream-ordered memory pool warm while program
// handles are alive (pytorch/executorch#22312, docs/runtime-contracts.md):
// the release threshold is raised to the maximum so a synchronize no longer
// hands memory back to the driver, and everything this object raised is put
// back and trimmed when the last handle goes.
#pragma once

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

struct WarmPoolOptions {
  // false is the runner's --cold-pool: no CUDA pool call is made at all.
  bool enabled = true;
};

enum class PoolState {
  kDisabled,    // --cold-pool
  kRaised,      // this object raised the threshold and owns its restore
  kAlreadyMax,  // someone else already keeps the pool at the maximum; left alone
  kFailed,      // configuring failed; the pool runs cold, execution goes on
  kRestored,    // raised earlier, restored and trimmed when the last handle went
};

const char* toString(PoolState state);

struct WarmPoolDeviceRecord {
  int device = -1;
  PoolState state = PoolState::kDisabled;
  bool ownsRestore = false;             // true while raised by us and not yet restored
  std::uint64_t previousThreshold = 0;  // meaningful when state is kRaised or kRestored
  Status configureStatus;               // why configuring failed (kFailed)
  Status releaseStatus;                 // first failure while restoring / trimming
  bool restored = false;
  bool trimmed = false;
};

struct WarmPoolReport {
  bool enabled = true;
  int handles = 0;
  std::uint64_t apiCalls = 0;                 // every CUDA call made; 0 proves --cold-pool left the pool alone
  std::vector<WarmPoolDeviceRecord> devices;  // ascending device order
};

// One per process (the threshold it touches is process-wide). Thread-safe.
class WarmPool {
 public:
  // Only the device and pool calls of `api` are used (get/set_device,
  // device_synchronize, pool_*, clear_last_error).
  explicit WarmPool(cuda::Api& api, WarmPoolOptions options = WarmPoolOptions());
  // Restores whatever is still raised if handles were leaked; never throws.
  ~WarmPool();

  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;

  // One call per program handle, naming every device that handle runs on.
  // Never fails the caller: a device whose pool could not be configured is
  // reported as kFailed (its CUDA error already cleared) and runs cold.
  // Returns the state of each named device, in the order given.
  std::vector<PoolState> acquire(const std::vector<int>& devices);

  // One call per acquire. The last one synchronizes, restores the previous
  // threshold and trims every device this object raised, from its own record,
  // whichever device the calling thread is on; the caller's current device is
  // put back afterwards. A failure there is returned for the report but is not
  // fatal: every other device is still restored. kInvalidArgument when there
  // is no matching acquire.
  Status release();

  WarmPoolReport report() const;
  // {"mode":"warm"|"cold","handles":N,"devices":[...]} for the runner's JSON
  // report. Thresholds are decimal strings: UINT64_MAX does not survive a
  // JavaScript number.
  std::string reportJson() const;

 private:
  void configureLocked(WarmPoolDeviceRecord& record);
  Status restoreAllLocked();

  // Every call goes through here, so that it is counted.
  cuda::Api& api();

  cuda::Api& api_;
  std::uint64_t apiCalls_ = 0;
  const WarmPoolOptions options_;
  mutable std::mutex mutex_;
  int handles_ = 0;
  std::map<int, WarmPoolDeviceRecord> records_;
};

}  // namespace memory
}  // namespace trtx
