// One loaded method: its plan checked index by index and extent by extent,
// its arenas allocated and initialised, its tensors bound to memory, its
// operators resolved, its delegates initialised. execute() runs chain 0's
// instruction stream (KernelCall, DelegateCall, MoveCall, JumpFalseCall,
// FreeCall).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtx/backend/backend.h"
#include "trtx/executor/evalue.h"
#include "trtx/executor/kernels.h"
#include "trtx/executor/memory_manager.h"
#include "trtx/program/program.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/scratch_provider.h"

namespace trtx::executor {

struct MethodOptions {
  const runtime::DeviceContext* device = nullptr;
  /// Set: every enqueue and copy of this method goes on `caller_stream`
  /// (ExecuTorch's caller-stream guard). Unset: copies are synchronous and
  /// each delegate uses its own stream and synchronizes.
  bool has_caller_stream = false;
  runtime::StreamRef caller_stream;
  std::optional<uint64_t> budget_option;
  runtime::ScratchProviderFactory scratch_factory = runtime::private_scratch_factory();
};

/// A named mutable buffer (extra_tensor_info.fully_qualified_name).
struct NamedBuffer {
  std::string name;
  TensorImpl* tensor = nullptr;
};

class Method {
 public:
  /// Instructions one execute() may run before it is stopped (a malformed
  /// JumpFalseCall can loop forever); ExecuTorch's default limit.
  static constexpr size_t kMaxInstructions = 10'000'000;

  static Result<std::unique_ptr<Method>> load(const program::Program& program, const std::string& name,
                                              const MethodOptions& options);
  ~Method();
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;

  const std::string& name() const { return name_; }

  Status execute(runtime::CopyCounters* counters);

  /// Teardown: drains every delegate (an enqueue whose sync was skipped is
  /// waited for), reports their deferred faults, and destroys them.
  Status close();

  /// Faults delegates left on the device; call once the stream is synchronized.
  Status check_deferred();

  size_t num_inputs() const { return inputs_.size(); }
  EValue& input(size_t i) { return values_[static_cast<size_t>(inputs_[i])]; }
  int input_index(size_t i) const { return inputs_[i]; }
  size_t num_outputs() const { return outputs_.size(); }
  const EValue& output(size_t i) const { return values_[static_cast<size_t>(outputs_[i])]; }
  int output_index(size_t i) const { return outputs_[i]; }
  const std::vector<NamedBuffer>& named_buffers() const { return named_buffers_; }
  /// Per delegate; after close() as they were once drained.
  std::vector<backend::DelegateInfo> delegate_infos() const;

  /// Gives an unplanned input tensor host memory of its own.
  Status provide_input_memory(size_t i);

  /// Host bytes of a tensor (device memory is copied back on the method's
  /// stream, which is synchronized).
  Status read_tensor(const TensorImpl& t, std::vector<uint8_t>& out) const;
  /// Writes host bytes into a tensor (to device memory synchronously).
  Status write_tensor(TensorImpl& t, const std::vector<uint8_t>& bytes) const;

 private:
  Method() = default;
  Status build_values(const program::Program& program);
  Status build_instructions();
  Status init_delegates(const program::Program& program);

  struct Instruction {
    enum class Kind { Kernel, Delegate, Move, JumpFalse, Free } kind = Kind::Kernel;
    KernelFn kernel = nullptr;
    std::string op;
    size_t delegate = 0;
    std::vector<EValue*> args;
    int32_t a = 0, b = 0;  // move from/to, jump cond/destination, free value
  };

  std::string name_;
  MethodOptions options_;
  const executorch_flatbuffer::ExecutionPlan* plan_ = nullptr;
  std::unique_ptr<MemoryManager> memory_;
  std::vector<std::unique_ptr<TensorImpl>> tensors_;
  std::vector<EValue> values_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;
  std::vector<Instruction> instructions_;
  std::vector<NamedBuffer> named_buffers_;
  struct Delegate {
    const backend::BackendInterface* backend = nullptr;
    std::unique_ptr<backend::DelegateHandle> handle;
  };
  std::vector<Delegate> delegates_;
  std::vector<void*> provided_;  // host memory given to unplanned inputs
  std::vector<backend::DelegateInfo> final_infos_;  // as they were at close()
  bool closed_ = false;
};

}  // namespace trtx::executor
