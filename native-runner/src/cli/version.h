#pragma once

namespace trtx::cli {
constexpr const char* kRunnerVersion = "0.1.0";
}  // namespace trtx::cli
