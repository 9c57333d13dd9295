// A method's deterministic inputs for each step, and what the report reads
// back from it: output and named-buffer digests (internal).
#pragma once

#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "run_report.h"
#include "trtx/runtime/result.h"

namespace trtx::cli {

/// Host memory for a method's tensor inputs, kept for the method's lifetime:
/// a planned input gets its bytes copied in by Method::set_input, an
/// unplanned one points at this memory.
class MethodInputs {
 public:
  Status prepare(const executorch::runtime::MethodMeta& meta);
  /// Step inputs: an integer input's element k gets step + k (so a
  /// one-element position gets the step: the decode position); a float input
  /// ((7 step + 13 k) mod 29 - 14) / 16, exact in every float type; a bool
  /// (step + k) mod 2; an Int value the step.
  Status set(executorch::runtime::Method& method, int step);

 private:
  struct Input {
    executorch::runtime::Tag tag = executorch::runtime::Tag::None;
    std::vector<uint8_t> bytes;
    std::vector<int32_t> sizes;
    std::vector<uint8_t> dim_order;
    std::unique_ptr<executorch::aten::TensorImpl> impl;
  };
  std::vector<Input> inputs_;
};

Status record_outputs(const executorch::runtime::Method& method, std::vector<OutputRecord>& out);

/// Every named, memory-planned tensor of the method (its mutable buffers).
Status record_buffers(executorch::runtime::Method& method, std::vector<BufferRecord>& out);

/// What a correct application does after load_method and before the first
/// execute: zero every named buffer that lives in device memory. Returns how
/// many it initialised.
Result<uint64_t> init_device_buffers(executorch::runtime::Method& method);

}  // namespace trtx::cli
