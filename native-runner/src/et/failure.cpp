#include "trtx/et/failure.h"

#include <utility>

namespace trtx::et {

namespace {
thread_local std::optional<Failure> t_failure;
}

executorch::runtime::Error record_failure(Failure f, executorch::runtime::Error as) {
  if (!t_failure.has_value()) t_failure = std::move(f);
  return as;
}

std::optional<Failure> take_failure() {
  std::optional<Failure> f = std::move(t_failure);
  t_failure.reset();
  return f;
}

const char* et_error_name(executorch::runtime::Error e) {
  using executorch::runtime::Error;
  // runtime/core/error.h; names as ExecuTorch spells them.
  switch (e) {
    case Error::Ok: return "Ok";
    case Error::Internal: return "Internal";
    case Error::InvalidState: return "InvalidState";
    case Error::EndOfMethod: return "EndOfMethod";
    case Error::NotSupported: return "NotSupported";
    case Error::NotImplemented: return "NotImplemented";
    case Error::InvalidArgument: return "InvalidArgument";
    case Error::InvalidType: return "InvalidType";
    case Error::OperatorMissing: return "OperatorMissing";
    case Error::NotFound: return "NotFound";
    case Error::MemoryAllocationFailed: return "MemoryAllocationFailed";
    case Error::AccessFailed: return "AccessFailed";
    case Error::InvalidProgram: return "InvalidProgram";
    case Error::InvalidExternalData: return "InvalidExternalData";
    case Error::OutOfResources: return "OutOfResources";
    case Error::DelegateInvalidCompatibility: return "DelegateInvalidCompatibility";
    case Error::DelegateMemoryAllocationFailed: return "DelegateMemoryAllocationFailed";
    case Error::DelegateInvalidHandle: return "DelegateInvalidHandle";
    default: return "ExecuTorchError";
  }
}

trtx::Error from_et_error(executorch::runtime::Error e) {
  const trtx::Error named = error_from_name(et_error_name(e));
  return named == trtx::Error::Ok ? trtx::Error::Internal : named;
}

}  // namespace trtx::et
