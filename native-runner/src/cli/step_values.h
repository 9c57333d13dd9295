// `run --inputs FILE` and `run --outputs FILE` (docs/reference-lowering.md
// section 3): recorded step inputs fed instead of the pattern, and every
// output of every executed step written as TRXT records (internal).
#pragma once

#include <executorch/runtime/executor/method.h>

#include <optional>
#include <string>

#include "step_io.h"
#include "tensor_file.h"
#include "trtx/runtime/result.h"

namespace trtx::cli {

class StepValues {
 public:
  /// Reads the inputs file and creates the outputs file (either path may be
  /// empty). A failure is a usage error: the run does not start.
  Status open(const std::string& inputs_path, const std::string& outputs_path);

  /// Sets a step's inputs: the recorded ones with --inputs, else the pattern.
  /// A missing or mismatched record is also kept as usage() (exit 2).
  Status set_inputs(MethodInputs& inputs, executorch::runtime::Method& method, const std::string& name, int step);

  /// Appends the step's outputs to the --outputs file (nothing without one).
  Status record_outputs(const executorch::runtime::Method& method, const std::string& name, int step);

  /// Finishes the outputs file.
  Status close();

  /// The usage error set_inputs met, if any.
  const std::optional<Failure>& usage() const { return usage_; }

 private:
  std::optional<RecordedValues> recorded_;
  TensorFileWriter outputs_;
  std::optional<Failure> usage_;
};

}  // namespace trtx::cli
