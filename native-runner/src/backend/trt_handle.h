// A TensorRT delegate handle and the program state it belongs to (internal
// to the backend): ExecuTorch owns the handles' lifetime, the runner reads
// what they did through its ProgramState's delegate_infos() / drain().
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "trtx/backend/backend.h"
#include "trtx/backend/compile_specs.h"
#include "trtx/backend/tensorrt_backend.h"
#include "trtx/backend/tensorrt_blob.h"
#include "trtx/engine/engine_executor.h"
#include "trtx/runtime/scratch_provider.h"

namespace trtx::backend {

// A device buffer that a host-resident argument is staged through.
struct Staging {
  void* ptr = nullptr;
  uint64_t size = 0;
};

struct TrtHandle;

struct ProgramState::Shared {
  int id = 0;
  mutable std::mutex mutex;
  TensorRTBackendConfig config;
  std::vector<TrtHandle*> live;  // init order
};

struct TrtHandle {
  explicit TrtHandle(runtime::DeviceContext dev) : device(dev) {}
  ~TrtHandle();

  runtime::DeviceContext device;
  TrtContract contract = TrtContract::ZeroCopy;
  std::string where;  // "decode.delegates[0]"
  TrtBlob blob;
  TrtCompileSpecs specs;
  // specs.zero_copy_kv names exactly the blob's aliased outputs; fixed at init.
  bool stamp_is_all_aliased = false;
  std::unique_ptr<engine::EngineExecutor> engine;
  std::shared_ptr<runtime::ScratchProvider> scratch;
  runtime::StreamRef own_stream;  // used when no caller stream is set
  runtime::EventRef inflight;     // recorded when a sync is skipped
  bool inflight_pending = false;
  runtime::EventRef scratch_done;
  std::vector<Staging> staging;  // per binding
  DelegateInfo info;
  std::shared_ptr<ProgramState::Shared> program;  // listed in its live handles until destroy()
};

/// The delegate-call logic of TensorRTBackend::execute (tensorrt_execute.cpp).
Status execute_handle(TrtHandle& handle, executorch::runtime::Span<executorch::runtime::EValue*> args);

}  // namespace trtx::backend
