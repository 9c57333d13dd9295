#include "trtx/et/recorded_failure.h"

#include <string_view>
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
  // ExecuTorch's own names (runtime/core/error.h), which spell every code
  // ("Error::Unknown" for one outside the enum); the prefix is dropped so the
  // name matches trtx's error names where the two share one.
  const char* name = executorch::runtime::to_string(e);
  constexpr std::string_view kPrefix = "Error::";
  return std::string_view(name).substr(0, kPrefix.size()) == kPrefix ? name + kPrefix.size() : name;
}

trtx::Error from_et_error(executorch::runtime::Error e) {
  const trtx::Error named = error_from_name(et_error_name(e));
  return named == trtx::Error::Ok ? trtx::Error::Internal : named;
}

}  // namespace trtx::et
