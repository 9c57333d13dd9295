// The runner's side of ATen's kernels (trtx/aten/aten_program.h): whether this
// build has them is known at compile time (TRTX_HAVE_ATEN, TRTX_ATEN_CUDA from
// CMakeLists.txt); the kernels themselves are libtrtx_aten.so, loaded beside
// the binary (or the --backend-lib library) that holds this code, on the first
// load() -- never by a run whose program has no reference engine's program.
#include <dlfcn.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "../aten/api.h"

#ifndef TRTX_HAVE_ATEN
#define TRTX_HAVE_ATEN 0
#endif
#ifndef TRTX_ATEN_CUDA
#define TRTX_ATEN_CUDA 0
#endif

namespace trtx::aten_kernels {

namespace {

constexpr const char* kLibrary = "libtrtx_aten.so";

// The folder of the file this code was linked into (the runner, or a backend
// library built from the same sources).
// For the executable, dladdr may name it as it was started (no folder):
// /proc/self/exe has the real path.
std::string own_folder() {
  Dl_info info{};
  std::string path;
  if (dladdr(reinterpret_cast<void*>(&own_folder), &info) != 0 && info.dli_fname != nullptr) path = info.dli_fname;
  if (path.find('/') == std::string::npos) {
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    path = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
  }
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

struct Loaded {
  const Api* api = nullptr;
  std::string error;
};

const Loaded& loaded() {
  static Loaded once;
  static std::once_flag flag;
  std::call_once(flag, [] {
    const std::string path = own_folder() + "/" + kLibrary;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      once.error = "cannot load " + path + ": " + (e ? e : "unknown error");
      return;
    }
    auto entry = reinterpret_cast<const Api* (*)()>(dlsym(handle, "trtx_aten_api"));
    const Api* api = entry != nullptr ? entry() : nullptr;
    if (api == nullptr || api->version != kApiVersion || api->load == nullptr) {
      once.error = path + " is not this runner's ATen library (another build)";
      return;
    }
    once.api = api;  // the library stays loaded for the process
  });
  return once;
}

}  // namespace

bool built() { return TRTX_HAVE_ATEN != 0; }
bool cuda_built() { return TRTX_ATEN_CUDA != 0; }

bool default_for(runtime::Target target) { return built() && (target == runtime::Target::Host || cuda_built()); }

const char* kernel_set(runtime::Target target) {
  if (!built()) return "none";
  return target == runtime::Target::Cuda ? "aten-cuda" : "aten-cpu";
}

Result<std::unique_ptr<Program>> load(const uint8_t* pte, size_t size, const std::string& method,
                                      const runtime::DeviceContext& device, const ConstantResolver& constants,
                                      bool internal_weights_stream, const std::string& at) {
  if (!built()) {
    return fail(Error::NotSupported, at, "this trtx-runner was built without libtorch: ATen's kernels are not here");
  }
  const Loaded& l = loaded();
  if (l.api == nullptr) return fail(Error::NotSupported, at, "ATen's kernels: " + l.error);
  return l.api->load(pte, size, method, device, constants, internal_weights_stream, at);
}

}  // namespace trtx::aten_kernels
