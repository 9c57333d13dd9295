// Errors as values for the device-memory units: nothing here throws across a
// module boundary, so the runner core can map these onto its own error type.
#pragma once

#include <string>
#include <utility>

namespace trtx {
namespace memory {

enum class MemoryErrorCode : int {
  kOk = 0,
  kInvalidArgument,  // caller broke the contract (unbalanced release, bad device, wrong lease)
  kOutOfMemory,      // an allocation was refused; the previous buffer is still usable
  kDeviceError,      // any other failure reported by the device runtime
  kBusy,             // the device's shared scratch is leased and not yet handed off
};

inline const char* toString(MemoryErrorCode code) {
  switch (code) {
    case MemoryErrorCode::kOk:
      return "ok";
    case MemoryErrorCode::kInvalidArgument:
      return "invalid_argument";
    case MemoryErrorCode::kOutOfMemory:
      return "out_of_memory";
    case MemoryErrorCode::kDeviceError:
      return "device_error";
    case MemoryErrorCode::kBusy:
      return "busy";
  }
  return "unknown";
}

class Status {
 public:
  Status() = default;
  Status(MemoryErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status success() { return Status(); }

  bool ok() const { return code_ == MemoryErrorCode::kOk; }
  MemoryErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  MemoryErrorCode code_ = MemoryErrorCode::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}       // NOLINT(google-explicit-constructor)
  Result(Status error) : status_(std::move(error)) {  // NOLINT(google-explicit-constructor)
    if (status_.ok()) status_ = Status(MemoryErrorCode::kInvalidArgument, "error Result built from an ok Status");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const T& value() const { return value_; }
  T& value() { return value_; }

 private:
  T value_{};
  Status status_;
};

}  // namespace memory
}  // namespace trtx
