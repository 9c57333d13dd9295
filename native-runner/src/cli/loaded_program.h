// The program a run executes (internal): opened under the runner's limits,
// loaded by ExecuTorch's Module (its methods later, one by one), and bound
// to a TensorRTBackend program state of its own, so what its delegates did
// is read back from this program's handles only, whatever method names
// other programs in the process share (tensorrt_backend.h ProgramState).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "run_command.h"
#include "run_report.h"
#include "runner_module.h"
#include "trtx/backend/tensorrt_backend.h"
#include "trtx/runtime/result.h"

namespace trtx::cli {

class LoadedProgram {
 public:
  /// Opens and loads options.program for `target` (not its methods) and
  /// checks the chosen methods: present, and every backend they delegate to
  /// in this runner. The report gets the program's size and method names.
  Status open(const RunOptions& options, runtime::Target target, Report& report);

  integration::RunnerModule& module() { return *module_; }
  /// The methods to run: --method's, else every method in plan order.
  const std::vector<std::string>& methods() const { return methods_; }
  /// Delegate calls per step, one per delegate in the programs trtx writes.
  uint64_t delegate_calls() const { return delegate_calls_; }
  /// This program's TensorRTBackend state (the runner's own backend; a
  /// --backend-lib library keeps its own, which the runner never sees).
  backend::ProgramState& delegates() { return delegates_; }

 private:
  Status load_module(const RunOptions& options, runtime::Target target, Report& report);
  Status check_methods(const std::vector<std::string>& methods);

  // Before the module: the handles ExecuTorch destroys with it hold it anyway.
  backend::ProgramState delegates_;
  std::unique_ptr<integration::RunnerModule> module_;
  std::vector<std::string> methods_;
  uint64_t delegate_calls_ = 0;
};

}  // namespace trtx::cli
