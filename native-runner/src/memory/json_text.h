// Minimal JSON text helpers for the reports of this unit (no JSON library is
// linked into the runner's memory code).
#pragma once

#include <string>

#include "trtx/memory/memory_error.h"
#include "trtx/runtime/result.h"

namespace trtx {
namespace memory {
namespace json {

// "..." with the characters JSON requires escaped.
std::string quote(const std::string& text);
// A Status as null when ok, else {"code":"...","message":"..."} (report_code,
// describe).
std::string statusOrNull(const Status& status);

}  // namespace json
}  // namespace memory
}  // namespace trtx
