// A program's weights on its device (internal to src/aten/): resident up to
// a weight-streaming budget, the rest streamed per execute, as TensorRT's
// weight streaming keeps part of an engine's weights in device memory and
// copies the rest in from host memory while the engine runs
// (IExecutionContext / ICudaEngine::setWeightStreamingBudgetV2). Here a
// streamed weight lives in host memory (pinned on a GPU) and is copied into a
// device window just before each operator that reads it, on the same stream,
// so the copy is ordered after every earlier reader of that window.
#pragma once

#include <optional>
#include <vector>

#include "plan.h"

namespace trtx::aten_kernels {

class Weights {
 public:
  /// `host[i]` holds plan.constants[i]'s bytes (checked against its size).
  /// `internal_stream`: the program's own constants count against the budget
  /// (version 2); otherwise only EXTERNAL ones do and the rest stay resident.
  Status init(const Plan& plan, std::vector<ConstantBytes> host, const at::Device& device, bool internal_stream,
              const std::string& at);

  /// Places every weight: in order of first use, each whole, resident while
  /// the running total stays within `budget` (no budget: all resident).
  Status place(const Plan& plan, std::optional<uint64_t> budget, const std::string& at);
  bool placed() const { return placed_; }

  /// Puts each resident weight into `values` (once per run).
  void bind_resident(std::vector<c10::IValue>& values) const;
  /// Copies the weights instruction `pc` reads that are streamed into the
  /// window, on the current stream, and points their values there.
  void stream_for(const Plan& plan, size_t pc, std::vector<c10::IValue>& values);

  const WeightPlacement& placement() const { return placement_; }

 private:
  struct Weight {
    size_t value = 0;
    ConstantBytes host;
    bool resident = true;
    bool streamable = true;  // counts against the budget
    at::Tensor on_device;    // resident: the weight as the operators read it
    at::Tensor owner;        // resident on a GPU: the device bytes on_device views
    at::Tensor source;       // streamed: its host bytes (pinned on a GPU), as uint8
  };
  at::Device device_{at::kCPU};
  std::vector<Weight> weights_;
  std::vector<int64_t> weight_of_value_;  // value index -> index in weights_, -1
  // Per instruction: (weight, byte offset in the window) for each streamed
  // weight it reads.
  std::vector<std::vector<std::pair<size_t, uint64_t>>> streamed_;
  at::Tensor window_;
  WeightPlacement placement_;
  bool placed_ = false;
};

/// The value indices instruction `ins` reads or writes, list items included.
std::vector<int32_t> mentioned(const Plan& plan, const Instruction& ins);

}  // namespace trtx::aten_kernels
