// The runner on ExecuTorch: the program is loaded, verified, memory-planned
// and executed by ExecuTorch's Module (extension/module/module.h), the stock
// path applications deploy; trtx contributes the plugins it calls: the
// TensorRTBackend delegate and the device allocator registered for CUDA.
#include "run_command.h"

#include <executorch/extension/module/module.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "backend_plugin.h"
#include "et_failure.h"
#include "et_platform.h"
#include "guarded_loader.h"
#include "load_limits.h"
#include "progress.h"
#include "run_report.h"
#include "runner_memory.h"
#include "runner_module.h"
#include "step_io.h"
#include "step_values.h"
#include "trtx/et/caller_stream.h"
#include "trtx/et/failure.h"
#include "version.h"

namespace trtx::cli {

namespace et = executorch::runtime;
using integration::RunnerMemory;  // the ExecuTorch integration, src/executorch/
using integration::RunnerMemoryOptions;
using integration::RunnerModule;

namespace {

// What the counters moved between two snapshots.
runtime::CopyCounters since(const runtime::CopyCounters& before, const runtime::CopyCounters& now) {
  return {now.h2d_bytes - before.h2d_bytes, now.d2h_bytes - before.d2h_bytes, now.d2d_bytes - before.d2d_bytes};
}

class Runner {
 public:
  Runner(const RunOptions& o, Report& r, StepValues& v) : opts_(o), report_(r), values_(v) {}
  ~Runner() {
    for (size_t i = 0; i < loaded_.size(); ++i) close(i);
    module_.reset();
    guards_.clear();
    if (memory_) (void)memory_->teardown();
    for (const auto& cs : streams_) runtime::DeviceContext(device_->target(), cs.first).destroy_stream(cs.second);
  }

  void run() {
    if (setup()) {
      for (int step = 0; step < opts_.steps && report_.errors.empty(); ++step) {
        for (size_t i = 0; i < methods_.size() && report_.errors.empty(); ++i) run_step(i, step);
        if (opts_.progress && report_.errors.empty()) say_step_done(step + 1, opts_.steps);
      }
    }
    finish();
  }

  const RunnerMemory* memory() const { return memory_.get(); }
  void record(Failure f) { report_.errors.push_back(std::move(f)); }

 private:
  bool choose_device() {
    bool cuda = false;
    if (opts_.device == DeviceChoice::Cuda) {
      if (!runtime::cuda_built()) {
        record(fail(Error::DeviceUnavailable, "--device cuda", "this trtx-runner was built without CUDA"));
        return false;
      }
      if (runtime::cuda_device_count() == 0) {
        record(fail(Error::DeviceUnavailable, "--device cuda", "no CUDA device is visible"));
        return false;
      }
      cuda = true;
    } else if (opts_.device == DeviceChoice::Auto) {
      cuda = runtime::cuda_built() && runtime::cuda_device_count() > 0;
    }
    device_ = std::make_unique<runtime::DeviceContext>(cuda ? runtime::Target::Cuda : runtime::Target::Host, 0);
    if (!cuda) return true;
    report_.device_kind = "cuda";
    report_.device_index = 0;
    auto name = runtime::cuda_device_name(0);
    report_.device_name = name.ok() ? name.get() : "unknown CUDA device";
    Status s = device_->activate();
    if (!s.ok()) record(s.take_failure());
    return s.ok();
  }

  bool setup() {
    const RunnerMemoryOptions memory_options{opts_.cold_pool, opts_.shared_scratch};
    if (!choose_device()) {
      memory_ = std::make_unique<RunnerMemory>(runtime::Target::Host, memory_options, nullptr,
                                               "no device was chosen for the run");
      return false;
    }
    const runtime::Target target = device_->target();
    memory_ = RunnerMemory::create(target, memory_options);
    RunnerMemory* memory = memory_.get();
    // The warm pool is acquired when ExecuTorch allocates the first arena of a device, so
    // every arena comes from it and it stays warm across --fresh-state reloads until teardown.
    trtx::et::device_allocator().configure(
        {target, opts_.arena_fill, [memory](int device) { memory->program_loaded({device}); }});
    trtx::et::register_device_allocator();
    // With --backend-lib the library registered TensorRTBackend before the
    // run (backend_plugin.h); ExecuTorch keeps the first registration of a
    // name, so the runner registers none of its own.
    if (opts_.backend_lib.empty() && backend::register_tensorrt_backend() != et::Error::Ok) {
      record(fail(Error::Internal, "TensorRTBackend", "another backend is registered under the id TensorRTBackend"));
      return false;
    }
    integration::clear_pending();
    auto opened = integration::open_program_file(opts_.program, !opts_.file_loader);
    if (!opened.ok()) {
      record(opened.take_failure());
      return false;
    }
    std::unique_ptr<et::DataLoader> file = std::move(opened.get());
    auto size = file->size();
    if (size.ok()) report_.program_bytes = size.get();
    // The loader validates the program before ExecuTorch reads it, and
    // refuses planned host memory past the cap before Module allocates a
    // byte of it (program_validation.h, load_limits.h).
    integration::PlannedCap cap{opts_.methods, target,
                                opts_.max_planned_bytes.value_or(integration::physical_memory_bytes())};
    module_ =
        std::make_unique<RunnerModule>(std::make_unique<integration::GuardedLoader>(std::move(file), std::move(cap)),
                                       nullptr, nullptr, nullptr, nullptr, opts_.share_arenas);
    if (opts_.budget.has_value()) {
      // A byte budget does not fit ExecuTorch's 32-bit int option, so it
      // travels as decimal text.
      et::BackendOptions<1> budget;
      (void)budget.set_option("weight_streaming_budget", std::to_string(*opts_.budget).c_str());
      budget_options_ = budget;
      (void)backend_options_.set_options(backend::TensorRTBackend::kId, budget_options_.view());
    }
    // InternalConsistency, not Module's default Minimal, which skips the flatbuffer verifier
    // (runtime/executor/program.cpp); the runner's own validation runs either way
    // (integration::GuardedLoader): --verification minimal drops ExecuTorch's second look.
    const auto level = opts_.minimal_verification ? et::Program::Verification::Minimal
                                                  : et::Program::Verification::InternalConsistency;
    const et::Error loaded = module_->load(backend_options_, level);
    if (loaded != et::Error::Ok) {
      record(integration::failure_of(loaded, opts_.program, "loading the program"));
      return false;
    }
    const auto program = module_->program();
    for (size_t i = 0; i < program->num_methods(); ++i) {
      auto name = program->get_method_name(i);
      if (name.ok()) report_.program_methods.emplace_back(name.get());
    }
    methods_ = opts_.methods.empty() ? report_.program_methods : opts_.methods;
    uint64_t delegate_calls = 0;
    for (const auto& name : methods_) {
      auto meta = module_->method_meta(name);
      if (!meta.ok()) {
        record(fail(Error::NotFound, "--method " + name, "the program has no method '" + name + "'"));
        return false;
      }
      // A backend this runner does not have: the program cannot run here,
      // which is not the program's fault.
      for (size_t b = 0; b < meta->num_backends(); ++b) {
        auto id = meta->get_backend_name(b);
        if (id.ok() && et::get_backend_class(id.get()) == nullptr) {
          record(fail(Error::BackendMissing, name + ".delegates",
                      std::string("backend ") + id.get() +
                          " is not in this trtx-runner (it has TensorRTBackend only), so the program cannot run here"));
          return false;
        }
      }
      // Each delegate is called once per execute in the programs trtx writes:
      // the shared scratch's warm-up is one step's delegate calls.
      delegate_calls += meta->num_backends();
    }
    if (opts_.caller_stream && !set_caller_streams()) return false;
    backend::configure_tensorrt_backend({target, memory_->scratch_factory(delegate_calls), opts_.contract,
                                         opts_.aten_kernels.value_or(aten_kernels::default_for(target))});
    report_.methods.resize(methods_.size());
    for (size_t i = 0; i < methods_.size(); ++i) report_.methods[i].name = methods_[i];
    loaded_.assign(methods_.size(), false);
    inputs_.resize(methods_.size());
    return true;
  }

  // One caller stream per device the chosen methods plan memory on, and the run's own
  // device: a CUDA stream serves one device only, so an application running a program
  // across devices hands the runtime one per device (trtx/et/caller_stream.h). Set before
  // any method is loaded, so the arenas' poison fill and every copy are ordered on them.
  bool set_caller_streams() {
    std::vector<int> devices{device_->device_index()};
    for (const auto& name : methods_) {
      auto meta = module_->method_meta(name);
      if (!meta.ok()) continue;
      for (size_t b = 0; b < meta->num_memory_planned_buffers(); ++b) {
        auto d = meta->memory_planned_buffer_device(b);
        if (!d.ok() || d->type() == et::etensor::DeviceType::CPU) continue;
        const int index = d->index();
        if (std::find(devices.begin(), devices.end(), index) == devices.end()) devices.push_back(index);
      }
    }
    std::sort(devices.begin(), devices.end());
    for (int d : devices) {
      Status present = runtime::require_device(device_->target(), d, "the program plans memory");
      if (!present.ok()) {
        record(present.take_failure());
        return false;
      }
      runtime::DeviceContext ctx(device_->target(), d);
      auto s = ctx.create_stream(/*non_blocking=*/true);
      if (!s.ok()) {
        Failure f = s.take_failure();
        f.location = "--caller-stream on (cuda:" + std::to_string(d) + ")";
        record(std::move(f));
        return false;
      }
      streams_.emplace_back(d, s.get());
      guards_.push_back(std::make_unique<trtx::et::CallerStreamGuard>(s.get(), d));
    }
    return true;
  }

  // The step ends when every caller stream has drained.
  Status synchronize_caller_streams() {
    for (const auto& cs : streams_) {
      TRTX_CHECK_OK(runtime::DeviceContext(device_->target(), cs.first).synchronize(cs.second));
    }
    return ok_status();
  }

  // Every method drained and unloaded, then the scratch freed and the pool handed back,
  // in that order: the pool's trim can only return freed memory.
  void finish() {
    for (size_t i = 0; i < loaded_.size(); ++i) close(i);
    if (memory_) {
      Status s = memory_->teardown();
      if (!s.ok()) record(s.take_failure());
    }
  }

  void close(size_t i) {
    if (!loaded_[i]) return;
    Status s = backend::drain(methods_[i]);
    report_.methods[i].delegates = backend::delegate_infos(methods_[i]);
    if (!s.ok()) record(s.take_failure());
    module_->unload_method(methods_[i]);
    loaded_[i] = false;
  }

  et::Method* load(size_t i) {
    const std::string& name = methods_[i];
    integration::clear_pending();
    const et::Error e = module_->load_method(name);
    if (e != et::Error::Ok) {
      record(integration::failure_of(e, name, "loading method '" + name + "'"));
      return nullptr;
    }
    loaded_[i] = true;
    et::Method* m = module_->loaded(name);
    Status s = inputs_[i].prepare(m->method_meta());
    if (s.ok() && opts_.init_device_buffers) {
      auto n = init_device_buffers(*m);
      if (n.ok()) report_.methods[i].initialised_buffers = n.get();
      if (!n.ok()) s = n.take_failure();
    }
    if (!s.ok()) {
      record(s.take_failure());
      return nullptr;
    }
    return m;
  }

  void run_step(size_t i, int step) {
    if (opts_.fresh_state) close(i);
    et::Method* m = loaded_[i] ? module_->loaded(methods_[i]) : load(i);
    if (m == nullptr) return;
    const std::string& name = methods_[i];
    Status s = values_.set_inputs(inputs_[i], *m, name, step);
    if (!s.ok()) return record(fail(s.failure().code, name + "." + s.failure().location, s.failure().message));
    const std::vector<backend::DelegateInfo> before = backend::delegate_infos(name);
    const runtime::CopyCounters traffic_before = trtx::et::device_allocator().traffic();
    const runtime::CopyCounters kernels_before = trtx::et::device_allocator().kernel_traffic();
    integration::clear_pending();
    const auto start = std::chrono::steady_clock::now();
    const et::Error e = m->execute();
    // A zero-copy delegate under a caller stream returns before its work is
    // done; the step ends when the stream has drained.
    if (e == et::Error::Ok) s = synchronize_caller_streams();
    const auto stop = std::chrono::steady_clock::now();
    report_.methods[i].delegates = backend::delegate_infos(name);
    if (e != et::Error::Ok) return record(integration::failure_of(e, name, "executing method '" + name + "'"));
    if (!s.ok()) return record(s.take_failure());
    // The stream is complete: faults a skipped sync left are final now.
    s = backend::check_deferred(name);
    if (!s.ok()) return record(s.take_failure());
    StepRecord rec;
    rec.step = step;
    rec.step_us = std::chrono::duration<double, std::micro>(stop - start).count();
    rec.copies = since(traffic_before, trtx::et::device_allocator().traffic());
    rec.program_copies = since(kernels_before, trtx::et::device_allocator().kernel_traffic());
    s = record_outputs(*m, rec.outputs);
    if (s.ok()) s = values_.record_outputs(*m, name, step);
    if (s.ok()) s = record_buffers(*m, rec.buffers);
    if (!s.ok()) return record(fail(s.failure().code, name + "." + s.failure().location, s.failure().message));
    const std::vector<backend::DelegateInfo>& now = report_.methods[i].delegates;
    for (size_t d = 0; d < now.size(); ++d) {
      rec.delegates.push_back(delegate_step(d, now[d], d < before.size() ? &before[d] : nullptr));
      rec.engine_stand_in.h2d_bytes += rec.delegates.back().engine_stand_in.h2d_bytes;
      rec.engine_stand_in.d2h_bytes += rec.delegates.back().engine_stand_in.d2h_bytes;
    }
    report_.methods[i].steps.push_back(std::move(rec));
  }

  const RunOptions& opts_;
  Report& report_;
  StepValues& values_;  // --inputs / --outputs
  std::unique_ptr<runtime::DeviceContext> device_;
  std::unique_ptr<RunnerMemory> memory_;
  std::vector<std::pair<int, runtime::StreamRef>> streams_;  // (device, caller stream)
  std::vector<std::unique_ptr<trtx::et::CallerStreamGuard>> guards_;
  et::BackendOptions<1> budget_options_;
  et::LoadBackendOptionsMap backend_options_;
  std::unique_ptr<RunnerModule> module_;
  std::vector<std::string> methods_;
  std::vector<bool> loaded_;
  std::vector<MethodInputs> inputs_;
};

// For the abort hook: the run in progress.
struct Current {
  const RunOptions* options = nullptr;
  Report* report = nullptr;
  Runner* runner = nullptr;
};
Current g_current;

void write_final(const Report& report, const RunOptions& options, const RunnerMemory* memory, int& exit_code) {
  exit_code = exit_code_of(report);
  for (const auto& e : report.errors) {
    std::fprintf(stderr, "%s: %s: %s\n", error_name(e.code), e.location.c_str(), e.message.c_str());
  }
  if (!write_report_file(options.report_path, render_report(report, options, exit_code, memory))) {
    std::fprintf(stderr, "trtx-runner: cannot write report %s\n", options.report_path.c_str());
    exit_code = 2;
  }
}

int usage_error(const Failure& f) {
  std::fprintf(stderr, "trtx-runner: %s: %s\n", f.location.c_str(), f.message.c_str());
  return 2;
}

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
