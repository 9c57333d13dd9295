// What a failed ExecuTorch call reports (et_error_cause.h).
#include "et_error_cause.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "et_platform.h"
#include "trtx/et/recorded_failure.h"

namespace trtx::integration {

namespace et = executorch::runtime;

namespace {

// ExecuTorch logs each operator it has no kernel for, then a count.
std::string missing_operators(const std::vector<std::string>& lines) {
  std::vector<std::string> missing;
  for (const std::string& line : lines) {
    const size_t at = line.find("Missing operator: [");
    const size_t name = at == std::string::npos ? at : line.find("] ", at);
    if (name == std::string::npos) continue;
    const std::string op = line.substr(name + 2);
    if (std::find(missing.begin(), missing.end(), op) == missing.end()) missing.push_back(op);
  }
  if (missing.empty()) return "";
  std::string msg = ": no kernel for ";
  for (size_t i = 0; i < missing.size(); ++i) msg += (i ? ", " : "") + missing[i];
  return msg;
}

}  // namespace

// The failure behind an ExecuTorch error: the one a trtx plugin recorded, or
// the runtime's own last error line.
Failure failure_of(et::Error e, const std::string& location, const std::string& what) {
  std::optional<Failure> plugin = trtx::et::take_failure();
  std::vector<std::string> lines = take_et_errors();
  if (plugin.has_value()) {
    // A version-2 engine's program missing a kernel: the runtime's log, not
    // the plugin, knows which (src/engine/program_executor.cpp).
    if (plugin->code == Error::OperatorMissing) plugin->message += missing_operators(lines);
    return *plugin;
  }
  std::string msg = what + " failed with " + trtx::et::et_error_name(e);
  const std::string missing = missing_operators(lines);
  if (!missing.empty()) {
    msg += missing;
  } else {
    // The cause first (a kernel's failed check), then where it stopped; the
    // per-argument type dump adds nothing a reader can act on.
    std::vector<std::string> useful;
    for (const std::string& line : lines) {
      if (line.find(" with type id ") == std::string::npos && useful.size() < 3) useful.push_back(line);
    }
    for (size_t i = 0; i < useful.size(); ++i) msg += (i ? "; " : ": ") + useful[i];
  }
  return fail(trtx::et::from_et_error(e), location, msg);
}

void clear_pending() {
  (void)trtx::et::take_failure();
  (void)take_et_errors();
}

}  // namespace trtx::integration
