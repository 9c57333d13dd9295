#include "backend_plugin.h"

#include <dlfcn.h>
#include <executorch/runtime/backend/interface.h>
#include <sys/stat.h>

#include <cstdio>

#include "trtx/backend/tensorrt_backend.h"

namespace trtx::integration {

namespace et = executorch::runtime;

namespace {

// code: RUNNER_BACKEND_LIB_* (src/codes/environment.ts).
bool refuse(const std::string& path, const char* code, const std::string& message) {
  std::fprintf(stderr, "%s: %s: %s\n", code, path.c_str(), message.c_str());
  return false;
}

// What the registry holds, for a library that registered something else.
std::string registered_names() {
  std::string names;
  for (size_t i = 0; i < et::get_num_registered_backends(); ++i) {
    auto name = et::get_backend_name(i);
    if (!name.ok()) continue;
    names += (names.empty() ? "" : ", ") + std::string(name.get());
  }
  return names.empty() ? "none" : names;
}

}  // namespace

bool load_backend_plugin(const std::string& path, const std::string& expected, BackendPlugin& out) {
  struct stat st {};
  if (path.empty() || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return refuse(path, "RUNNER_BACKEND_LIB_MISSING", "no such file (--backend-lib names the backend library)");
  }
  const char* id = backend::TensorRTBackend::kId;
  if (et::get_backend_class(id) != nullptr) {
    return refuse(path, "RUNNER_BACKEND_LIB_EMPTY",
                  std::string(id) + " is registered before the library is loaded: the runner cannot tell whose it is");
  }
  // RTLD_NOW: an unresolved symbol is a refusal now, not a crash at the
  // first execute. RTLD_LOCAL: its symbols stay its own. A name without a
  // slash would be searched for on the library path; the runner loads the
  // file it was given.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return refuse(path, "RUNNER_BACKEND_LIB_LOAD", std::string("dlopen refused it: ") + (why ? why : "unknown error"));
  }
  using AbiFn = const char* (*)();
  auto abi = reinterpret_cast<AbiFn>(dlsym(handle, kBackendAbiSymbol));
  if (abi == nullptr) {
    return refuse(path, "RUNNER_BACKEND_LIB_ABI",
                  std::string("it does not export extern \"C\" const char* ") + kBackendAbiSymbol +
                      "(void), which names the ExecuTorch it was built against; the runner is built against "
                      "ExecuTorch " +
                      expected + " (docs/backend-plugin.md)");
  }
  const char* built = abi();
  const std::string version = built == nullptr ? "" : built;
  if (version != expected) {
    return refuse(path, "RUNNER_BACKEND_LIB_ABI",
                  "it was built against ExecuTorch '" + version + "' and the runner against ExecuTorch " + expected +
                      ": ExecuTorch's backend interface is a C++ ABI, so both must come from the same ExecuTorch");
  }
  if (et::get_backend_class(id) == nullptr) {
    return refuse(path, "RUNNER_BACKEND_LIB_EMPTY",
                  std::string("it registered no ") + id +
                      " with this process's ExecuTorch (registered: " + registered_names() +
                      "); a library linked against its own, static copy of the ExecuTorch runtime registers into "
                      "that copy: link the shared libexecutorch the runner uses");
  }
  out = BackendPlugin{path, version};
  return true;  // handle deliberately kept: the backend lives until exit
}

}  // namespace trtx::integration
