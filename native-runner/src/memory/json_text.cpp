#include "json_text.h"

#include <cstdio>

namespace trtx {
namespace memory {
namespace json {

std::string quote(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string statusOrNull(bool ok, const char* code, const std::string& message) {
  if (ok) return "null";
  return std::string("{\"code\":") + quote(code) + ",\"message\":" + quote(message) + "}";
}

}  // namespace json
}  // namespace memory
}  // namespace trtx
