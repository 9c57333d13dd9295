// The runner on ExecuTorch: the program is loaded, verified, memory-planned
// and executed by ExecuTorch's Module (extension/module/module.h), the stock
// path applications deploy; trtx contributes the plugins it calls: the
// TensorRTBackend delegate and the device allocator registered for CUDA.
#include "run_command.h"

#include <optional>

#include "backend_plugin.h"
#include "device_choice.h"
#include "et_platform.h"
#include "loaded_program.h"
#include "run_memory.h"
#include "run_outcome.h"
#include "run_report.h"
#include "step_loop.h"
#include "step_values.h"
#include "version.h"

namespace trtx::cli {

namespace {

// A run: the device chosen, the memory set up, the program loaded, then the
// step loop; torn down in the reverse order (members below), so the
// methods are unloaded before the pool and the caller streams go.
class Runner {
 public:
  Runner(const RunOptions& o, Report& r, StepValues& v) : opts_(o), report_(r), values_(v), memory_(o) {}

  void run() {
    if (setup()) loop_->run();
    finish();
  }

  const integration::RunnerMemory* memory() const { return memory_.runner_memory(); }

 private:
  bool setup() {
    auto device = choose_device(opts_.device, report_);
    if (!device.ok()) {
      report_.errors.push_back(device.take_failure());
      memory_.without_device();
      return false;
    }
    const runtime::Target target = device.get().target();
    memory_.set_up(device.get());
    Status s = program_.open(opts_, target, report_);
    if (s.ok() && opts_.caller_stream) s = memory_.set_caller_streams(program_.module(), program_.methods());
    if (!s.ok()) {
      report_.errors.push_back(s.take_failure());
      return false;
    }
    program_.delegates().configure({target, memory_.scratch_factory(program_.delegate_calls()), opts_.contract,
                                    opts_.aten_kernels.value_or(aten_kernels::default_for(target))});
    loop_.emplace(opts_, report_, values_, program_, memory_);
    return true;
  }

  // Every method drained and unloaded, then the scratch freed and the pool handed back,
  // in that order: the pool's trim can only return freed memory.
  void finish() {
    if (loop_) loop_->close_all();
    Status s = memory_.teardown();
    if (!s.ok()) report_.errors.push_back(s.take_failure());
  }

  const RunOptions& opts_;
  Report& report_;
  StepValues& values_;
  RunMemory memory_;
  LoadedProgram program_;
  std::optional<StepLoop> loop_;
};

// For the abort hook: the run in progress.
struct Current {
  const RunOptions* options = nullptr;
  Report* report = nullptr;
  Runner* runner = nullptr;
};
Current g_current;

}  // namespace

int run_command(const RunOptions& options) {
  Report report;
  report.program_path = options.program;
  int exit_code = 0;
  // ExecuTorch aborts on an ET_CHECK (Module does when a device arena cannot
  // be allocated): the report still says why.
  integration::install_et_platform([](const std::string& last_error) {
    if (g_current.report == nullptr) return;
    g_current.report->errors.push_back(
        fail(Error::ExecuTorchAbort, "executorch", last_error.empty() ? "the runtime aborted" : last_error));
    int code = 1;
    write_final(*g_current.report, *g_current.options, nullptr, code);
  });
  // --inputs and --outputs are the caller's files: a bad one is a usage
  // error (exit 2, no report), as is a recorded input the method does not take.
  StepValues values;
  Status opened = values.open(options.inputs_path, options.outputs_path);
  if (!opened.ok()) return usage_error(opened.failure());
  // A backend library that cannot serve is the environment's, before any
  // run: it printed one coded line; exit 2, no report.
  integration::BackendPlugin plugin;
  if (!options.backend_lib.empty() &&
      !integration::load_backend_plugin(options.backend_lib, kExecutorchVersion, plugin))
    return 2;
  if (!plugin.path.empty()) report.backend = {"plugin", plugin.path, plugin.executorch};
  {
    Runner runner(options, report, values);
    g_current = Current{&options, &report, &runner};
    runner.run();
    Status closed = values.close();
    if (values.usage().has_value()) {
      g_current = Current{};
      return usage_error(*values.usage());
    }
    write_final(report, options, runner.memory(), exit_code);
    if (!closed.ok()) exit_code = usage_error(closed.failure());
    g_current = Current{};
  }
  return exit_code;
}

}  // namespace trtx::cli
