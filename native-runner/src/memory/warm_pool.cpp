#include "trtx/memory/warm_pool.h"

#include <limits>
#include <string>

#include "json_text.h"

namespace trtx {
namespace memory {

namespace {
constexpr std::uint64_t kMaxThreshold = std::numeric_limits<std::uint64_t>::max();

// Keeps the first failure for the caller while every device is still attempted.
void keepFirst(Status& first, const Status& next) {
  if (first.ok() && !next.ok()) first = next;
}
}  // namespace

const char* toString(PoolState state) {
  switch (state) {
    case PoolState::kDisabled:
      return "disabled";
    case PoolState::kRaised:
      return "raised";
    case PoolState::kAlreadyMax:
      return "already_max";
    case PoolState::kFailed:
      return "failed";
    case PoolState::kRestored:
      return "restored";
  }
  return "unknown";
}

cuda::Api& WarmPool::api() {
  ++apiCalls_;
  return api_;
}

WarmPool::WarmPool(cuda::Api& api, WarmPoolOptions options) : api_(api), options_(options) {}

WarmPool::~WarmPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (options_.enabled && handles_ > 0) {
    handles_ = 0;
    (void)restoreAllLocked();
  }
}

std::vector<PoolState> WarmPool::acquire(const std::vector<int>& devices) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++handles_;
  std::vector<PoolState> states;
  states.reserve(devices.size());
  for (int device : devices) {
    WarmPoolDeviceRecord& record = records_[device];
    record.device = device;
    if (!options_.enabled) {
      record.state = PoolState::kDisabled;
    } else if (!record.ownsRestore) {
      configureLocked(record);
    }
    states.push_back(record.state);
  }
  return states;
}

void WarmPool::configureLocked(WarmPoolDeviceRecord& record) {
  record.configureStatus = ok_status();
  record.releaseStatus = ok_status();
  record.restored = false;
  record.trimmed = false;

  std::uint64_t current = 0;
  Result<std::uint64_t> read = api().pool_release_threshold(record.device);
  Status status = read.ok() ? ok_status() : Status(read.take_failure());
  if (status.ok()) current = read.get();
  if (status.ok() && current == kMaxThreshold) {
    // Another user already keeps it at the maximum: nothing to raise, and so
    // nothing of ours to restore or trim later.
    record.state = PoolState::kAlreadyMax;
    return;
  }
  if (status.ok()) status = api().set_pool_release_threshold(record.device, kMaxThreshold);
  if (!status.ok()) {
    // Only speed is lost; a latched error would otherwise surface at the next
    // unrelated launch check.
    api().clear_last_error();
    record.state = PoolState::kFailed;
    record.configureStatus = status;
    return;
  }
  record.previousThreshold = current;
  record.ownsRestore = true;
  record.state = PoolState::kRaised;
}

Status WarmPool::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (handles_ <= 0) {
    return fail(Error::InvalidArgument, "warm_pool", "released more often than acquired");
  }
  --handles_;
  if (handles_ > 0 || !options_.enabled) return ok_status();
  return restoreAllLocked();
}

Status WarmPool::restoreAllLocked() {
  Status first;
  int callerDevice = -1;
  Result<int> caller = api().get_device();
  Status status = caller.ok() ? ok_status() : Status(caller.take_failure());
  const bool callerKnown = status.ok();
  if (callerKnown) callerDevice = caller.get();
  if (!callerKnown) {
    api().clear_last_error();
    keepFirst(first, status);
  }

  // From this object's own record: the releasing thread is often current on a
  // device other than the one the model ran on.
  for (auto& entry : records_) {
    WarmPoolDeviceRecord& record = entry.second;
    if (!record.ownsRestore) continue;
    const int device = record.device;
    Status deviceFirst;

    status = api().set_device(device);
    const bool switched = status.ok();
    if (!switched) {
      api().clear_last_error();
      keepFirst(deviceFirst, status);
    } else {
      // The pool can only release frees the driver has already observed, and
      // nothing else on the teardown path waits.
      status = api().device_synchronize();
      if (!status.ok()) {
        api().clear_last_error();
        keepFirst(deviceFirst, status);
      }
    }

    status = api().set_pool_release_threshold(device, record.previousThreshold);
    record.restored = status.ok();
    if (!status.ok()) {
      api().clear_last_error();
      keepFirst(deviceFirst, status);
    }

    status = api().pool_trim_to(device, 0);
    record.trimmed = status.ok();
    if (!status.ok()) {
      api().clear_last_error();
      keepFirst(deviceFirst, status);
    }

    record.ownsRestore = false;
    record.state = PoolState::kRestored;
    record.releaseStatus = deviceFirst;
    keepFirst(first, deviceFirst);
  }

  if (callerKnown) {
    status = api().set_device(callerDevice);
    if (!status.ok()) {
      api().clear_last_error();
      keepFirst(first, status);
    }
  }
  return first;
}

WarmPoolReport WarmPool::report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  WarmPoolReport out;
  out.enabled = options_.enabled;
  out.handles = handles_;
  out.apiCalls = apiCalls_;
  for (const auto& entry : records_) out.devices.push_back(entry.second);
  return out;
}

std::string WarmPool::reportJson() const {
  const WarmPoolReport r = report();
  std::string out = "{\"mode\":";
  out += r.enabled ? "\"warm\"" : "\"cold\"";
  out += ",\"handles\":" + std::to_string(r.handles) + ",\"devices\":[";
  bool firstDevice = true;
  for (const WarmPoolDeviceRecord& d : r.devices) {
    if (!firstDevice) out += ",";
    firstDevice = false;
    const bool hasPrevious = d.state == PoolState::kRaised || d.state == PoolState::kRestored;
    out += "{\"device\":" + std::to_string(d.device);
    out += ",\"state\":" + json::quote(toString(d.state));
    out += ",\"previous_release_threshold\":";
    out += hasPrevious ? json::quote(std::to_string(d.previousThreshold)) : "null";
    out += ",\"restored\":" + std::string(d.restored ? "true" : "false");
    out += ",\"trimmed\":" + std::string(d.trimmed ? "true" : "false");
    out += ",\"configure_error\":" + json::statusOrNull(d.configureStatus);
    out += ",\"release_error\":" + json::statusOrNull(d.releaseStatus);
    out += "}";
  }
  out += "]}";
  return out;
}

}  // namespace memory
}  // namespace trtx
