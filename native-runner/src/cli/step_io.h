// A method's deterministic inputs for each step, and what the report reads
// back from it: output and named-buffer digests (internal).
#pragma once

#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "run_report.h"
#include "tensor_file.h"
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
  /// Checks that `recorded` (run --inputs) has a value for every input of
  /// (method, step) whose kind, dtype, sizes and nbytes equal the input's
  /// meta. A failure is the caller's usage error, at "steps[S].inputs[I]".
  Status check_recorded(const RecordedValues& recorded, const std::string& method, int step) const;
  /// Step inputs from `recorded`, after check_recorded accepted them.
  Status set_recorded(executorch::runtime::Method& method, const RecordedValues& recorded, const std::string& name,
                      int step);

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

/// Every output of the method after an execute, as TRXT records of (name,
/// step) (run --outputs); device-resident outputs read through the
/// registered allocator, as record_outputs reads them.
Status write_output_records(const executorch::runtime::Method& method, const std::string& name, int step,
                            TensorFileWriter& out);

/// Every named, memory-planned tensor of the method (its mutable buffers).
Status record_buffers(executorch::runtime::Method& method, std::vector<BufferRecord>& out);

/// What a correct application does after load_method and before the first
/// execute: zero every named buffer that lives in device memory. Returns how
/// many it initialised.
Result<uint64_t> init_device_buffers(executorch::runtime::Method& method);

}  // namespace trtx::cli
