// `--backend-lib PATH`: a shared library that registers its own
// "TensorRTBackend" with ExecuTorch's backend registry, used instead of
// trtx's (internal; docs/backend-plugin.md). ExecuTorch's registry keeps the
// first registration of a name and refuses a second (InvalidArgument,
// runtime/backend/interface.cpp register_backend), so the runner registers
// nothing of its own when a plugin is given: it loads the library, whose
// static initializers register the backend (as Torch-TensorRT's
// TensorRTBackend.cpp does), and then finds it in the registry
// (get_backend_class). Everything else stays trtx's: the device allocator
// registered for CUDA (and its poison fill), the caller streams, the report.
//
// The ABI: the library is built against the same ExecuTorch as the runner
// and links the same shared libexecutorch (one registry). It says which
// ExecuTorch it was built against through a C function,
//   extern "C" const char* trtx_backend_abi(void);
// returning that ExecuTorch's version string, exactly as `trtx env` and
// `trtx-runner --version` print it ("1.5.1+cpu"). A library without it, or
// with another version, is refused before it is used: BackendInterface is a
// C++ vtable and EValue, Tensor and the contexts are C++ layouts, so a
// mismatch would fail as memory corruption, not as an error.
//
// Every failure is an environment error, printed as one coded line, exit 2,
// no report: RUNNER_BACKEND_LIB_MISSING (no such file),
// RUNNER_BACKEND_LIB_LOAD (dlopen refused it), RUNNER_BACKEND_LIB_ABI (no
// trtx_backend_abi, or another ExecuTorch), RUNNER_BACKEND_LIB_EMPTY (it
// registered no TensorRTBackend in this process's registry: a library with
// a static copy of the ExecuTorch runtime registers into its own).
#pragma once

#include <string>

namespace trtx::integration {

/// The C symbol a backend library exports to state its ABI.
constexpr const char* kBackendAbiSymbol = "trtx_backend_abi";

struct BackendPlugin {
  std::string path;
  std::string executorch;  // what trtx_backend_abi() returned
};

/// Loads `path` and checks it as above; the library stays loaded for the
/// life of the process (ExecuTorch has no way to unregister a backend).
/// `expected` is the runner's ExecuTorch version. On a refusal it prints
/// `RUNNER_BACKEND_LIB_<WHY>: PATH: message` on stderr and returns false.
bool load_backend_plugin(const std::string& path, const std::string& expected, BackendPlugin& out);

}  // namespace trtx::integration
