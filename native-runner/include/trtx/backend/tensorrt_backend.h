// TensorRTBackend: the Torch-TensorRT ExecuTorch delegate's runtime contract
// (docs/runtime-contracts.md) as an ExecuTorch BackendInterface registered
// under "TensorRTBackend" (runtime/backend/interface.h); its engines are trtx
// reference engines, on the CPU or as CUDA kernels. init() parses the blob
// and compile specs, refuses a TensorRT plan (EngineNotExecutable) and
// resolves the budget: the load-time option `weight_streaming_budget`
// (decimal bytes), else the baked spec, else automatic. execute() reads
// elision from arity alone, stages host-resident inputs, binds each aliased
// output to its input, runs the engine with scratch from its provider, and
// synchronizes unless a caller stream is set and nothing is pending; a
// skipped sync records an event the next execute waits on and drain() waits
// for. TrtContract::Stock is Torch-TensorRT without the zero-copy KV contract
// (pull request 4667): zero_copy_kv is ignored and a call needs at least
// n_in + n_out arguments ("expected at least N args").
#pragma once

#include <executorch/runtime/backend/interface.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtx/backend/backend.h"
#include "trtx/runtime/result.h"
#include "trtx/runtime/scratch_provider.h"

namespace trtx::backend {

enum class TrtContract { ZeroCopy, Stock };

struct TensorRTBackendConfig {
  runtime::Target target = runtime::Target::Host;
  runtime::ScratchProviderFactory scratch_factory;  // empty: private scratch per engine
  TrtContract contract = TrtContract::ZeroCopy;
  // Version-2/3 engines on ATen's kernels (libtorch, the device's) instead of
  // ExecuTorch's CPU kernels (trtx/aten/aten_program.h).
  bool aten_kernels = false;
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

/// What one loaded program's TensorRT delegates share: the configuration
/// init() creates them with, and the handles that are live, which the
/// runner reads back. A program is bound to a state when it is loaded,
/// through the backend option ProgramState::kOption (an int: the state's
/// id()) in the LoadBackendOptionsMap given to Module::load; a program
/// loaded without it shares default_program_state() (an application that
/// loads one program and knows nothing of trtx). Two programs that both have
/// `forward`, each bound to its own state, keep their own handles, delegate
/// indices and counters; an id that names no live state is refused at init
/// (InvalidArgument). Each handle holds its state, so destroying the
/// ProgramState before the program is unloaded is safe.
class ProgramState {
 public:
  static constexpr char kOption[] = "trtx_program";

  explicit ProgramState(TensorRTBackendConfig config = {});
  ~ProgramState();
  ProgramState(const ProgramState&) = delete;
  ProgramState& operator=(const ProgramState&) = delete;

  /// The value of kOption that binds a program to this state.
  int id() const;

  /// Applies to the handles init() creates from now on.
  void configure(TensorRTBackendConfig config);

  /// The live handles of `method`, in delegate order.
  std::vector<DelegateInfo> delegate_infos(const std::string& method) const;

  /// Faults an earlier execute of `method` left on the device; valid once
  /// the streams it used are known complete (the caller synchronized them).
  Status check_deferred(const std::string& method) const;

  /// Teardown of `method`'s handles before ExecuTorch destroys them: waits
  /// for any enqueue still in flight (counted as a drain), then
  /// check_deferred.
  Status drain(const std::string& method) const;

  struct Shared;  // what the handles hold (trt_handle.h)

 private:
  std::shared_ptr<Shared> shared_;
};

/// The state of programs loaded without ProgramState::kOption.
ProgramState& default_program_state();

/// Registers the backend with ExecuTorch under kId, once.
executorch::runtime::Error register_tensorrt_backend();

}  // namespace trtx::backend
