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
  using E = executorch::runtime::Error;
  // runtime/core/error.h; names as ExecuTorch spells them.
  static const std::pair<E, const char*> kNames[] = {
      {E::Ok, "Ok"},
      {E::Internal, "Internal"},
      {E::InvalidState, "InvalidState"},
      {E::EndOfMethod, "EndOfMethod"},
      {E::NotSupported, "NotSupported"},
      {E::NotImplemented, "NotImplemented"},
      {E::InvalidArgument, "InvalidArgument"},
      {E::InvalidType, "InvalidType"},
      {E::OperatorMissing, "OperatorMissing"},
      {E::NotFound, "NotFound"},
      {E::MemoryAllocationFailed, "MemoryAllocationFailed"},
      {E::AccessFailed, "AccessFailed"},
      {E::InvalidProgram, "InvalidProgram"},
      {E::InvalidExternalData, "InvalidExternalData"},
      {E::OutOfResources, "OutOfResources"},
      {E::DelegateInvalidCompatibility, "DelegateInvalidCompatibility"},
      {E::DelegateMemoryAllocationFailed, "DelegateMemoryAllocationFailed"},
      {E::DelegateInvalidHandle, "DelegateInvalidHandle"}};
  for (const auto& n : kNames) {
    if (n.first == e) return n.second;
  }
  return "ExecuTorchError";
}

trtx::Error from_et_error(executorch::runtime::Error e) {
  const trtx::Error named = error_from_name(et_error_name(e));
  return named == trtx::Error::Ok ? trtx::Error::Internal : named;
}

}  // namespace trtx::et
