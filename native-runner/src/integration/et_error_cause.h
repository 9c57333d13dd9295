// The failure behind an ExecuTorch error, for the runner's report: the one a
// trtx plugin recorded (trtx/et/recorded_failure.h), or the runtime's own
// error lines (et_platform.h), with the operators it has no kernel for named.
#pragma once

#include <executorch/runtime/core/error.h>

#include <string>

#include "trtx/runtime/result.h"

namespace trtx::integration {

/// The failure of `what` (at `location`) that returned `e`; consumes the
/// recorded plugin failure and the runtime's error lines.
Failure failure_of(executorch::runtime::Error e, const std::string& location, const std::string& what);

/// Drops a recorded plugin failure and the runtime's error lines.
void clear_pending();

}  // namespace trtx::integration
