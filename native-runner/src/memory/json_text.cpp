#include "json_text.h"

#include "trtx/runtime/json.h"

namespace trtx {
namespace memory {
namespace json {

// The runner's one JSON string writer (runtime/json_quote.cpp): the same
// escapes, and invalid UTF-8 from a hostile file's names as U+FFFD.
std::string quote(const std::string& text) {
  std::string out;
  trtx::json::append_quoted(out, text);
  return out;
}

std::string statusOrNull(const Status& status) {
  if (status.ok()) return "null";
  return std::string("{\"code\":") + quote(report_code(status.error())) +
         ",\"message\":" + quote(describe(status.failure())) + "}";
}

}  // namespace json
}  // namespace memory
}  // namespace trtx
