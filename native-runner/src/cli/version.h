#pragma once

namespace trtx::cli {
constexpr const char* kRunnerVersion = "0.2.0";
// The ExecuTorch runtime this runner is linked against (CMake passes the
// SDK's EXECUTORCH_BUILD_VERSION).
#ifndef TRTX_EXECUTORCH_VERSION
#define TRTX_EXECUTORCH_VERSION "unknown"
#endif
constexpr const char* kExecutorchVersion = TRTX_EXECUTORCH_VERSION;
}  // namespace trtx::cli
