// Errors as values. Every failure the runner can report is one `Error` code
// with a stable name (the report's `code`), a location in the input it
// concerns and a one-line message. Nothing is thrown across a module
// boundary: functions return `Result<T>`, the ExecuTorch way.
#pragma once

#include <string>
#include <utility>

// The `Error` enum, its names and exit statuses, generated from
// src/codes/runner-report.ts by scripts/gen-runner-errors.ts.
#include "trtx/runtime/error_codes.h"

namespace trtx {

/// The stable name of a code, as written in reports ("TRT_BLOB_MAGIC").
const char* error_name(Error e);

/// Looks a name up; Error::Ok when unknown (Ok itself is never reported).
Error error_from_name(const std::string& name);

struct Failure {
  Error code = Error::Internal;
  std::string location;
  std::string message;
};

inline Failure fail(Error code, std::string location, std::string message) {
  return Failure{code, std::move(location), std::move(message)};
}

}  // namespace trtx
