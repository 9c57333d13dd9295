// The device-memory units fail with the runner's own trtx::Failure (codes from
// src/codes/runner-report.ts): MemoryAllocationFailed when an allocation is
// refused and the previous buffer is still usable, InvalidArgument when the
// caller broke the contract (unbalanced release, bad device, wrong lease),
// InvalidState when a device's shared scratch is leased and not yet handed
// off, and the device runtime's own code (CudaError) for anything else.
//
// The report's `memory` section names a failure in its own smaller
// vocabulary (memory_error.code in schemas/runner-report.schema.json); this
// header is the one place that maps onto it.
#pragma once

#include <string>

#include "trtx/runtime/error.h"

namespace trtx {
namespace memory {

/// memory_error.code of the runner report for a failure's code.
inline const char* report_code(Error code) {
  switch (code) {
    case Error::InvalidArgument:
      return "invalid_argument";
    case Error::MemoryAllocationFailed:
      return "out_of_memory";
    case Error::InvalidState:
      return "busy";
    default:
      return "device_error";
  }
}

/// "location: message", or the message alone when there is no location: the
/// one-line text a report's memory_error.message and a capacity event carry.
inline std::string describe(const Failure& failure) {
  if (failure.location.empty()) return failure.message;
  return failure.location + ": " + failure.message;
}

}  // namespace memory
}  // namespace trtx
