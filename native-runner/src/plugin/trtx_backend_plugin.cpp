// trtx's own TensorRTBackend built as a backend library for `trtx-runner run
// --backend-lib` (docs/backend-plugin.md): the shape a third-party backend
// such as Torch-TensorRT's takes. It registers "TensorRTBackend" from a
// static initializer when loaded, as Torch-TensorRT's TensorRTBackend.cpp
// does, and exports trtx_backend_abi(). Its backend, engines and
// program states are its own copy (linked -Bsymbolic), never configured by the
// runner: like a third-party backend it takes where its engines run from the
// process's registered device allocator (CUDA memory when the runner runs
// on a GPU, the host stand-in otherwise), with its other defaults (private
// scratch, the zero-copy contract). Before it did, a CUDA run handed device
// pointers to its host executor and crashed (found on an H200: every
// --backend-lib run with --device cuda ended in SIGSEGV). The trtx::et
// services it calls (that allocator, the caller streams, the failure record)
// are not in it and resolve to the runner's when it is loaded (the runner
// exports them: runner_exports.list), as a third-party backend uses the
// process's ExecuTorch allocator and streams.
//
// It marks itself, so a test can tell it ran rather than the runner's own
// backend: with TRTX_BACKEND_PLUGIN_TRACE=FILE in the environment each
// init() appends one line to FILE.
#include <executorch/runtime/backend/interface.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "trtx/backend/tensorrt_backend.h"
#include "trtx/et/device_allocator.h"

namespace {

namespace et = executorch::runtime;

class TracedTensorRTBackend final : public et::BackendInterface {
 public:
  bool is_available() const override { return inner_.is_available(); }

  et::Result<et::DelegateHandle*> init(et::BackendInitContext& context, et::FreeableBuffer* processed,
                                       et::ArrayRef<et::CompileSpec> compile_specs) const override {
    const char* trace = std::getenv("TRTX_BACKEND_PLUGIN_TRACE");
    if (trace != nullptr && *trace != '\0') {
      if (std::FILE* f = std::fopen(trace, "a")) {
        std::fprintf(f, "init %s\n", context.get_method_name() ? context.get_method_name() : "");
        std::fclose(f);
      }
    }
    // The allocator is configured before any program loads, so the first
    // init sees the target every later one would.
    std::call_once(configured_, [] {
      trtx::backend::TensorRTBackendConfig config;
      config.target = trtx::et::device_allocator().target();
      trtx::backend::default_program_state().configure(std::move(config));
    });
    return inner_.init(context, processed, compile_specs);
  }

  et::Error execute(et::BackendExecutionContext& context, et::DelegateHandle* handle,
                    et::Span<et::EValue*> args) const override {
    return inner_.execute(context, handle, args);
  }

  void destroy(et::DelegateHandle* handle) const override { inner_.destroy(handle); }

 private:
  trtx::backend::TensorRTBackend inner_;
  mutable std::once_flag configured_;
};

TracedTensorRTBackend& backend() {
  static TracedTensorRTBackend b;
  return b;
}

// Registered when the library is loaded; a failure (the name is taken) is
// the runner's to find: it then finds no TensorRTBackend of this library.
const et::Error kRegistered = et::register_backend(et::Backend{trtx::backend::TensorRTBackend::kId, &backend()});

}  // namespace

extern "C" __attribute__((visibility("default"))) const char* trtx_backend_abi(void) {
  (void)kRegistered;
  return TRTX_EXECUTORCH_VERSION;
}
