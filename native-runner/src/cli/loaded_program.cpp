#include "loaded_program.h"

#include "et_error_cause.h"
#include "guarded_loader.h"
#include "load_limits.h"

namespace trtx::cli {

namespace et = executorch::runtime;

Status LoadedProgram::open(const RunOptions& options, runtime::Target target, Report& report) {
  // With --backend-lib the library registered TensorRTBackend before the
  // run (backend_plugin.h); ExecuTorch keeps the first registration of a
  // name, so the runner registers none of its own.
  if (options.backend_lib.empty() && backend::register_tensorrt_backend() != et::Error::Ok) {
    return fail(Error::Internal, "TensorRTBackend", "another backend is registered under the id TensorRTBackend");
  }
  TRTX_CHECK_OK(load_module(options, target, report));
  const auto program = module_->program();
  for (size_t i = 0; i < program->num_methods(); ++i) {
    auto name = program->get_method_name(i);
    if (name.ok()) report.program_methods.emplace_back(name.get());
  }
  methods_ = options.methods.empty() ? report.program_methods : options.methods;
  return check_methods(methods_);
}

Status LoadedProgram::load_module(const RunOptions& options, runtime::Target target, Report& report) {
  integration::clear_pending();
  TRTX_ASSIGN_OR_RETURN(std::unique_ptr<et::DataLoader> file,
                        integration::open_program_file(options.program, !options.file_loader));
  auto size = file->size();
  if (size.ok()) report.program_bytes = size.get();
  // The loader validates the program before ExecuTorch reads it, and
  // refuses planned host memory past the cap before Module allocates a
  // byte of it (program_validation.h, load_limits.h).
  integration::PlannedCap cap{options.methods, target,
                              options.max_planned_bytes.value_or(integration::physical_memory_bytes())};
  module_ = std::make_unique<integration::RunnerModule>(
      std::make_unique<integration::GuardedLoader>(std::move(file), std::move(cap)), nullptr, nullptr, nullptr, nullptr,
      options.share_arenas);
  // Module keeps a copy of the options. The runner's own backend is told
  // which program state its handles join; a --backend-lib library's keeps its own.
  et::BackendOptions<2> backend_options;
  if (options.backend_lib.empty()) (void)backend_options.set_option(backend::ProgramState::kOption, delegates_.id());
  // A byte budget does not fit ExecuTorch's 32-bit int option, so it
  // travels as decimal text.
  if (options.budget.has_value()) {
    (void)backend_options.set_option("weight_streaming_budget", std::to_string(*options.budget).c_str());
  }
  et::LoadBackendOptionsMap options_map;
  if (!backend_options.view().empty()) {
    (void)options_map.set_options(backend::TensorRTBackend::kId, backend_options.view());
  }
  // InternalConsistency, not Module's default Minimal, which skips the flatbuffer verifier
  // (runtime/executor/program.cpp); the runner's own validation runs either way
  // (integration::GuardedLoader): --verification minimal drops ExecuTorch's second look.
  const auto level = options.minimal_verification ? et::Program::Verification::Minimal
                                                  : et::Program::Verification::InternalConsistency;
  const et::Error loaded = module_->load(options_map, level);
  if (loaded != et::Error::Ok) return integration::failure_of(loaded, options.program, "loading the program");
  return ok_status();
}

Status LoadedProgram::check_methods(const std::vector<std::string>& methods) {
  for (const auto& name : methods) {
    auto meta = module_->method_meta(name);
    if (!meta.ok()) return fail(Error::NotFound, "--method " + name, "the program has no method '" + name + "'");
    // A backend this runner does not have: the program cannot run here,
    // which is not the program's fault.
    for (size_t b = 0; b < meta->num_backends(); ++b) {
      auto id = meta->get_backend_name(b);
      if (id.ok() && et::get_backend_class(id.get()) == nullptr) {
        return fail(Error::BackendMissing, name + ".delegates",
                    std::string("backend ") + id.get() +
                        " is not in this trtx-runner (it has TensorRTBackend only), so the program cannot run here");
      }
    }
    // Each delegate is called once per execute in the programs trtx writes:
    // the shared scratch's warm-up is one step's delegate calls.
    delegate_calls_ += meta->num_backends();
  }
  return ok_status();
}

}  // namespace trtx::cli
