// ExecuTorch's plugin interfaces return a bare runtime::Error. The trtx
// plugins (the TensorRT backend, the device allocator, the guarded data
// loader) also record the full failure (code, location, message) here, on
// the calling thread, so the runner can report what went wrong rather than
// "Internal".
#pragma once

#include <executorch/runtime/core/error.h>

#include <optional>

#include "trtx/runtime/error.h"

namespace trtx::et {

/// Records `f` for the runner (the first one since the last take wins: it is
/// the cause, later ones are consequences) and returns the ExecuTorch error
/// the plugin answers with.
executorch::runtime::Error record_failure(Failure f, executorch::runtime::Error as);

/// The recorded failure, cleared.
std::optional<Failure> take_failure();

/// The stable name of an ExecuTorch error ("NotSupported").
const char* et_error_name(executorch::runtime::Error e);

/// The runner's code for an ExecuTorch error (the same name where it has one).
trtx::Error from_et_error(executorch::runtime::Error e);

}  // namespace trtx::et
