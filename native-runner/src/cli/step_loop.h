// A run's step loop (internal): each step runs every chosen method once, in
// order, loading a method on its first step (and on every step with
// --fresh-state), setting its inputs, executing it and recording what it
// did; the loop stops at the first error. Each method is drained and
// unloaded at the end, its delegates reported as they were last.
#pragma once

#include <executorch/runtime/executor/method.h>

#include <vector>

#include "loaded_program.h"
#include "run_command.h"
#include "run_memory.h"
#include "run_report.h"
#include "step_io.h"
#include "step_values.h"

namespace trtx::cli {

class StepLoop {
 public:
  /// The report gets a record per chosen method.
  StepLoop(const RunOptions& options, Report& report, StepValues& values, LoadedProgram& program, RunMemory& memory);
  ~StepLoop() { close_all(); }
  StepLoop(const StepLoop&) = delete;
  StepLoop& operator=(const StepLoop&) = delete;

  /// --steps steps, until the first error.
  void run();

  /// Every loaded method drained and unloaded.
  void close_all();

 private:
  void close(size_t i);
  executorch::runtime::Method* load(size_t i);
  void run_step(size_t i, int step);
  // The step's outputs, buffers and delegates after a successful execute.
  Status record_step(size_t i, executorch::runtime::Method& m, StepRecord& rec,
                     const std::vector<backend::DelegateInfo>& before);
  void record(Failure f) { report_.errors.push_back(std::move(f)); }

  const RunOptions& opts_;
  Report& report_;
  StepValues& values_;  // --inputs / --outputs
  LoadedProgram& program_;
  RunMemory& memory_;
  std::vector<bool> loaded_;
  std::vector<MethodInputs> inputs_;
};

}  // namespace trtx::cli
