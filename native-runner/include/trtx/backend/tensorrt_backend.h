// TensorRTBackend: the Torch-TensorRT ExecuTorch delegate's runtime contract
// (domain brief section 6) over this build's engine executors.
//
// init:    parse the blob (every refusal of tensorrt_blob.h), the compile
//          specs, recognise the engine (a TensorRT plan is refused with
//          EngineNotExecutable, exit 3), resolve the weight-streaming budget.
// execute: detect elision from arity alone (staged n_in + n_out, zero-copy
//          n_in + n_out - n_aliased, anything else refused), bind inputs,
//          bind each aliased output to its input's address, run the engine,
//          reflect staged aliased outputs, and synchronize unless a caller
//          stream is set and nothing (host staging, a reflect) is pending;
//          when it skips the sync it records an event the next execute waits
//          on and teardown drains.
#pragma once

#include "trtx/backend/backend.h"

namespace trtx::backend {

class TensorRTBackend final : public BackendInterface {
 public:
  static constexpr const char* kId = "TensorRTBackend";

  bool is_available() const override { return true; }
  Result<std::unique_ptr<DelegateHandle>> init(BackendInitContext& ctx, const program::BlobSource& processed,
                                               const std::vector<CompileSpecView>& specs) const override;
  Status execute(BackendExecutionContext& ctx, DelegateHandle* handle,
                 const std::vector<executor::EValue*>& args) const override;
  Status check_deferred(DelegateHandle* handle) const override;
  Status drain(DelegateHandle* handle) const override;
  void destroy(std::unique_ptr<DelegateHandle> handle) const override;
  DelegateInfo describe(const DelegateHandle* handle) const override;
};

}  // namespace trtx::backend
