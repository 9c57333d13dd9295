// The runner's ExecuTorch platform hooks (runtime/platform/platform.h,
// register_pal): ExecuTorch's error log lines are kept so a failed load or
// execute reports the runtime's own reason, and a runtime abort (ET_CHECK,
// e.g. Module failing to allocate a device arena) writes the report before
// the process ends instead of leaving none (internal).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace trtx::integration {

/// Installs the hooks once. `on_abort` runs when ExecuTorch aborts, with its
/// last error line; it must end the process.
void install_et_platform(std::function<void(const std::string& last_error)> on_abort);

/// ExecuTorch error lines logged since the last call, cleared.
std::vector<std::string> take_et_errors();

}  // namespace trtx::integration
