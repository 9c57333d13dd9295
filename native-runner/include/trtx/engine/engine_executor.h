// What a TensorRT delegate handle runs: an engine over bound addresses, on a
// stream. Real programs carry TensorRT plans; this build executes trtx's
// reference engines (standin_engine.h: synthetic version 1,
// program_executor.h: version 2) and recognises a TensorRT plan only to
// refuse it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtx/aten/aten_program.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"
#include "trtx/runtime/scalar_type.h"

namespace trtx::engine {

/// One io binding as bound for an enqueue, indexed like the blob's io_bindings.
struct BindingView {
  std::string name;
  bool is_input = false;
  void* data = nullptr;  // device memory on Target::Cuda
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
  uint64_t numel = 0;
  uint64_t nbytes = 0;
};

class EngineExecutor {
 public:
  virtual ~EngineExecutor() = default;

  /// What runs the engine: "synthetic-cpu" / "synthetic-cuda" (a version-1
  /// reference engine, whose steps are not the model's) or
  /// "reference-program" (version 2: the partition's ExecuTorch program).
  virtual const char* kind() const = 0;

  /// The kernels that compute it: "aten-cpu" / "aten-cuda" (libtorch's, as
  /// eager PyTorch runs them), "executorch-cpu" (ExecuTorch's CPU kernels),
  /// "synthetic-cpu" / "synthetic-cuda" (a version-1 engine's steps).
  virtual const char* kernels() const { return kind(); }

  /// Where its weights are and what streaming moved (ATen's kernels only).
  virtual std::optional<aten_kernels::WeightPlacement> weight_placement() const { return std::nullopt; }

  /// Weight bytes streaming may keep off the device; a budget is clamped to it.
  virtual uint64_t streamable_weight_bytes() const = 0;
  /// Built with weight streaming enabled (otherwise a budget is ignored).
  virtual bool weight_streaming() const = 0;
  /// Applies a resolved budget, as TensorRT's setWeightStreamingBudgetV2 does.
  virtual Status set_weight_streaming_budget(uint64_t bytes) = 0;

  /// Checks the bound shapes and types against what each step needs.
  virtual Status check_bindings(const std::vector<BindingView>& bindings, const std::string& where) const = 0;

  /// Activation scratch one enqueue needs for these bindings.
  virtual Result<uint64_t> scratch_bytes(const std::vector<BindingView>& bindings, const std::string& where) const = 0;

  /// Enqueues every step on `stream`. Aliased outputs are bound to their
  /// inputs' addresses by the caller; the engine writes through them.
  virtual Status enqueue(const std::vector<BindingView>& bindings, void* scratch, uint64_t scratch_bytes,
                         runtime::StreamRef stream, const std::string& where) = 0;

  /// Bytes the engine itself moved between device and host since it was
  /// made, beyond what a TensorRT engine would: a program executor reads
  /// every binding to the host and writes every output back each enqueue,
  /// because it runs the partition on ExecuTorch's CPU kernels. Not the
  /// program's staging traffic; reported apart from it.
  virtual runtime::CopyCounters stand_in_copies() const { return {}; }

  /// Reports a fault an earlier enqueue raised on the device (a KV position
  /// out of range); call only once that enqueue is known complete.
  virtual Status check_deferred(const std::string& where) = 0;
};

}  // namespace trtx::engine
