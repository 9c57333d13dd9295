#include "trtx/runtime/error.h"

#include <cstddef>

namespace trtx {

const char* error_name(Error e) {
  const auto i = static_cast<std::size_t>(e);
  return i < kErrorCount ? kErrorNames[i] : "Internal";
}

Error error_from_name(const std::string& name) {
  for (std::size_t i = 0; i < kErrorCount; ++i) {
    if (name == kErrorNames[i]) return static_cast<Error>(i);
  }
  return Error::Ok;
}

}  // namespace trtx
