// Minimal JSON text helpers for the reports of this unit (no JSON library is
// linked into the runner's memory code).
#pragma once

#include <string>

namespace trtx {
namespace memory {
namespace json {

// "..." with the characters JSON requires escaped.
std::string quote(const std::string& text);
// A Status as null when ok, else {"code":"...","message":"..."}.
std::string statusOrNull(bool ok, const char* code, const std::string& message);

}  // namespace json
}  // namespace memory
}  // namespace trtx
