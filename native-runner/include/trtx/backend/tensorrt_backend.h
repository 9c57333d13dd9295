// TensorRTBackend: the Torch-TensorRT ExecuTorch delegate's runtime contract
// (domain brief section 6) as an ExecuTorch BackendInterface, registered
// under "TensorRTBackend" (runtime/backend/interface.h). ExecuTorch's Method
// calls init() when it loads, execute() for each DelegateCall and destroy()
// when it goes; this build's engines are trtx reference engines, on the CPU
// or as CUDA kernels.
//
// init:    parse the blob (every refusal of tensorrt_blob.h) and the compile
//          specs, recognise the engine (a TensorRT plan is refused with
//          EngineNotExecutable: this build has no TensorRT), resolve the
//          weight-streaming budget: the load-time backend option
//          `weight_streaming_budget` (BackendInitContext::get_runtime_spec,
//          decimal bytes), else the baked spec, else automatic.
// execute: detect elision from arity alone (staged n_in + n_out, zero-copy
//          n_in + n_out - n_aliased, anything else refused), bind inputs
//          (host-resident ones staged through device buffers), bind each
//          aliased output to its input's address, run the engine with
//          activation scratch from its ScratchProvider, reflect staged
//          aliased outputs, and synchronize unless a caller stream is set and
//          nothing (host staging, a reflect) is pending; when it skips the
//          sync it records an event the next execute waits on and drain()
//          waits for.
//
// With TrtContract::Stock it behaves as the Torch-TensorRT runtime without
// the zero-copy KV contract (pull request 4667): it ignores zero_copy_kv and
// needs at least n_in + n_out arguments, so a zero-copy program fails its
// first execute with "expected at least N args".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "trtx/backend/backend.h"
#include "trtx/runtime/result.h"
#include "trtx/runtime/scratch_provider.h"

namespace trtx::backend {

enum class TrtContract { ZeroCopy, Stock };

struct TensorRTBackendConfig {
  runtime::Target target = runtime::Target::Host;
  int device_index = 0;
  runtime::ScratchProviderFactory scratch_factory;  // empty: private scratch per engine
  TrtContract contract = TrtContract::ZeroCopy;
};

class TensorRTBackend final : public executorch::runtime::BackendInterface {
 public:
  static constexpr const char* kId = "TensorRTBackend";

  bool is_available() const override { return true; }
  executorch::runtime::Result<executorch::runtime::DelegateHandle*> init(
      executorch::runtime::BackendInitContext& context, executorch::runtime::FreeableBuffer* processed,
      executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs) const override;
  executorch::runtime::Error execute(executorch::runtime::BackendExecutionContext& context,
                                     executorch::runtime::DelegateHandle* handle,
                                     executorch::runtime::Span<executorch::runtime::EValue*> args) const override;
  void destroy(executorch::runtime::DelegateHandle* handle) const override;
};

/// Applies to the handles init() creates from now on.
void configure_tensorrt_backend(TensorRTBackendConfig config);

/// Registers the backend with ExecuTorch under kId, once.
executorch::runtime::Error register_tensorrt_backend();

/// The live handles of `method`, in delegate order.
std::vector<DelegateInfo> delegate_infos(const std::string& method);

/// Faults an earlier execute of `method` left on the device; valid once the
/// streams it used are known complete (the caller synchronized them).
Status check_deferred(const std::string& method);

/// Teardown of `method`'s handles before ExecuTorch destroys them: waits for
/// any enqueue still in flight (counted as a drain), then check_deferred.
Status drain(const std::string& method);

}  // namespace trtx::backend
