#include "trtx/backend/tensorrt_backend.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "trt_handle.h"
#include "trtx/engine/program_executor.h"
#include "trtx/engine/standin_engine.h"
#include "trtx/et/recorded_failure.h"
#include "trtx/runtime/et_error_for.h"

namespace trtx::backend {

namespace et = executorch::runtime;

namespace {

using Shared = ProgramState::Shared;

// The live program states by id: how init() finds the state its program
// was bound to (the backend is one registered object, its handles are not
// one program's). The states themselves hold the handles.
struct ProgramTable {
  std::mutex mutex;
  int next_id = 1;
  std::unordered_map<int, std::weak_ptr<Shared>> states;
};

ProgramTable& program_table() {
  static ProgramTable t;
  return t;
}

// The state init() creates its handle in: the one kOption names, else the default.
Result<std::shared_ptr<Shared>> program_of(et::BackendInitContext& context) {
  auto option = context.get_runtime_spec<int>(ProgramState::kOption);
  const std::string where = std::string("backend option ") + ProgramState::kOption;
  if (!option.ok() && option.error() != et::Error::NotFound) {
    return fail(Error::InvalidArgument, where, "must be an int (a ProgramState's id)");
  }
  // Before the lock: the default state enters the table when first made.
  const int id = option.ok() ? option.get() : default_program_state().id();
  ProgramTable& table = program_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.states.find(id);
  std::shared_ptr<Shared> state = it == table.states.end() ? nullptr : it->second.lock();
  if (!state) return fail(Error::InvalidArgument, where, "no program state " + std::to_string(id) + " is live");
  return state;
}

// The delegate's compile specs; a zero_copy_kv stamp must name aliased
// outputs only (`all_aliased`: it names every one).
Result<TrtCompileSpecs> read_compile_specs(et::ArrayRef<et::CompileSpec> compile_specs, const TrtBlob& blob,
                                           const TensorRTBackendConfig& config, const std::string& where,
                                           bool& stamp_is_all_aliased) {
  std::vector<CompileSpecView> specs;
  for (const et::CompileSpec& s : compile_specs) {
    specs.push_back({s.key, std::string_view(static_cast<const char*>(s.value.buffer), s.value.nbytes)});
  }
  TRTX_ASSIGN_OR_RETURN(TrtCompileSpecs parsed_specs, parse_trt_compile_specs(specs, where));
  if (parsed_specs.zero_copy_kv.has_value() && config.contract == TrtContract::ZeroCopy) {
    // A set, not a scan per name: both lists come from the file.
    std::unordered_set<std::string> aliased_outputs;
    for (const auto& a : blob.aliased_io) aliased_outputs.insert(a.output);
    for (const auto& name : *parsed_specs.zero_copy_kv) {
      if (aliased_outputs.count(name) == 0) {
        return fail(Error::CompileSpecInvalid, where + ".compile_specs(zero_copy_kv)",
                    "zero_copy_kv names '" + name + "', which is not an aliased output of the engine");
      }
    }
    // The spec parser refuses a repeated name, so a subset of the same size
    // is the whole set: settled once here, read on every zero-copy execute.
    stamp_is_all_aliased = parsed_specs.zero_copy_kv->size() == aliased_outputs.size();
  }
  // The stock runtime does not know the key.
  if (config.contract == TrtContract::Stock) parsed_specs.zero_copy_kv.reset();
  return parsed_specs;
}

// The blob's engine, which must be a trtx reference engine.
Result<engine::StandinEngine> read_engine(const uint8_t* bytes, const TrtBlobHeader& header,
                                          const std::vector<bool>& is_input, const std::string& where) {
  const uint8_t* engine_bytes = bytes + header.engine_offset;
  switch (engine::classify_engine(engine_bytes, static_cast<size_t>(std::min<uint64_t>(header.engine_size, 8)))) {
    case engine::EngineKind::TensorRTPlan:
      return fail(Error::EngineNotExecutable, where + ".engine",
                  "the delegate carries a TensorRT plan (" + std::to_string(header.engine_size) +
                      " bytes, starts with 'ftrt'); this trtx-runner has no TensorRT and executes only trtx reference "
                      "engines, so it does not run the program");
    case engine::EngineKind::Unknown:
      return fail(Error::EngineFormat, where + ".engine",
                  "engine bytes are neither a TensorRT plan ('ftrt') nor a trtx reference engine ('TRXE' at byte 4)");
    case engine::EngineKind::Reference:
      break;
  }
  // The flatbuffer verifier wants the engine 8-aligned. The blob keeps it
  // 16-aligned relative to its own start, and ExecuTorch's loaders hand the
  // segment out aligned (mmap: the segment alignment of the file; malloc: at
  // least 16), so it is parsed where it lies; only a blob at an odd address
  // (an application's own buffer) is copied first. A version-2 engine
  // carries the weights: a copy here would hold them twice more.
  const size_t size = static_cast<size_t>(header.engine_size);
  if (reinterpret_cast<uintptr_t>(engine_bytes) % alignof(uint64_t) == 0) {
    return engine::parse_standin_engine(engine_bytes, size, is_input, where);
  }
  std::vector<uint8_t> engine_copy(engine_bytes, engine_bytes + size);
  return engine::parse_standin_engine(engine_copy.data(), engine_copy.size(), is_input, where);
}

// The weight_streaming_budget backend option, when given.
Result<std::optional<uint64_t>> budget_option_of(et::BackendInitContext& context) {
  std::optional<uint64_t> budget_option;
  auto spec = context.get_runtime_spec<const char*>("weight_streaming_budget");
  if (spec.ok()) {
    TRTX_ASSIGN_OR_RETURN(uint64_t b, parse_budget_bytes(spec.get(), "backend option weight_streaming_budget"));
    budget_option = b;
  } else if (spec.error() != et::Error::NotFound) {
    return fail(Error::InvalidArgument, "backend option weight_streaming_budget",
                "must be a string of decimal bytes (a 32-bit int option cannot hold a byte budget)");
  }
  return budget_option;
}

// The device the engine runs on.
Result<int> engine_device(const TrtBlob& blob, const TrtCompileSpecs& parsed_specs, const std::string& where) {
  // Where the engine runs: Torch-TensorRT deserializes it on the blob's
  // device_id (core/runtime/TRTEngine.cpp via the delegate's init), while
  // ExecuTorch plans the delegate's I/O on target_device
  // (exir/passes/propagate_device_pass.py). A program whose two disagree
  // would have the engine read and write another device's memory: refused.
  if (parsed_specs.target_device.has_value() && blob.device_id != *parsed_specs.target_device) {
    return fail(Error::DeviceMismatch, where + ".compile_specs(target_device)",
                "target_device is cuda:" + std::to_string(*parsed_specs.target_device) +
                    " but the blob's device_id is " + std::to_string(blob.device_id) +
                    ": ExecuTorch places the delegate's tensors on the first, Torch-TensorRT runs the engine on the "
                    "second");
  }
  return parsed_specs.target_device.has_value() ? *parsed_specs.target_device : static_cast<int>(blob.device_id);
}

Result<TrtHandle*> init_handle(et::BackendInitContext& context, et::FreeableBuffer* processed,
                               et::ArrayRef<et::CompileSpec> compile_specs) {
  TRTX_ASSIGN_OR_RETURN(std::shared_ptr<Shared> program, program_of(context));
  const std::string method = context.get_method_name() != nullptr ? context.get_method_name() : "?";
  TensorRTBackendConfig config;
  size_t index = 0;
  {
    std::lock_guard<std::mutex> lock(program->mutex);
    config = program->config;
    for (const TrtHandle* h : program->live) index += h->info.method == method ? 1 : 0;
  }
  const std::string where = method + ".delegates[" + std::to_string(index) + "]";
  const std::string blob_where = where + ".blob";
  const auto* bytes = static_cast<const uint8_t*>(processed->data());
  const uint64_t size = processed->size();

  TRTX_ASSIGN_OR_RETURN(TrtBlobHeader header,
                        parse_trt_blob_header(bytes, std::min<uint64_t>(size, kTrtBlobHeaderSize), size, blob_where));
  std::string metadata(reinterpret_cast<const char*>(bytes) + header.metadata_offset, header.metadata_size);
  TRTX_ASSIGN_OR_RETURN(TrtBlob blob, parse_trt_metadata(header, metadata, blob_where));
  bool stamp_is_all_aliased = false;
  TRTX_ASSIGN_OR_RETURN(TrtCompileSpecs parsed_specs,
                        read_compile_specs(compile_specs, blob, config, where, stamp_is_all_aliased));
  std::vector<bool> is_input;
  for (const auto& b : blob.bindings) is_input.push_back(b.is_input);
  TRTX_ASSIGN_OR_RETURN(engine::StandinEngine ref, read_engine(bytes, header, is_input, where));
  // ExecuTorch keeps the processed bytes until init returns; the handle holds
  // everything it needs, so give them back now, as delegates do.
  processed->Free();

  TRTX_ASSIGN_OR_RETURN(std::optional<uint64_t> budget_option, budget_option_of(context));
  TRTX_ASSIGN_OR_RETURN(const int device_index, engine_device(blob, parsed_specs, where));
  // The same refusal (DeviceUnavailable, an environment result) the runner
  // gives a program that plans memory on a device the machine lacks.
  TRTX_CHECK_OK(runtime::require_device(config.target, device_index, where + ".compile_specs(target_device)"));
  // Everything init creates on the device (events, the engine's fault flag)
  // belongs to the engine's device, whichever device the loading thread is on.
  runtime::DeviceScope scope(config.target, device_index);
  TRTX_CHECK_OK(Status(scope.status()));
  auto handle = std::make_unique<TrtHandle>(runtime::DeviceContext(config.target, device_index));
  handle->contract = config.contract;
  handle->where = where;
  handle->info.method = method;
  handle->info.index = index;
  handle->info.backend_id = TensorRTBackend::kId;
  handle->info.target_device = device_index;
  BudgetResolution budget =
      resolve_budget(budget_option, parsed_specs.budget, ref.weight_streaming, ref.streamable_weight_bytes);
  // Version 1 is synthetic steps; versions 2 and 3 are the partition's own
  // ExecuTorch program, loaded and run by ExecuTorch inside this delegate
  // (docs/reference-lowering.md section 1). Version 3's weights are the
  // outer program's named data: ExecuTorch hands this init the map
  // (runtime/backend/backend_init_context.h; the program's PteDataMap, or
  // its merge with a .ptd file's), which lives as long as the method.
  if (ref.version != engine::kSyntheticVersion) {
    TRTX_ASSIGN_OR_RETURN(handle->engine,
                          engine::make_program_executor(std::move(ref), handle->device, is_input, where,
                                                        context.get_named_data_map(), config.aten_kernels));
  } else {
    TRTX_ASSIGN_OR_RETURN(handle->engine, engine::make_standin_executor(std::move(ref), handle->device));
  }
  if (budget.effective.has_value()) TRTX_CHECK_OK(handle->engine->set_weight_streaming_budget(*budget.effective));
  handle->info.budget = budget;
  handle->info.engine = handle->engine->kind();
  handle->info.kernels = handle->engine->kernels();
  handle->info.weights = handle->engine->weight_placement();
  TRTX_ASSIGN_OR_RETURN(handle->inflight, handle->device.create_event());
  TRTX_ASSIGN_OR_RETURN(handle->scratch_done, handle->device.create_event());
  handle->scratch = config.scratch_factory ? config.scratch_factory(handle->device, where) : nullptr;
  if (!handle->scratch) handle->scratch = std::make_shared<runtime::PrivateScratch>();
  handle->staging.resize(blob.bindings.size());
  for (size_t i : blob.inputs) handle->info.inputs.push_back(blob.bindings[i].name);
  for (size_t i : blob.outputs) handle->info.outputs.push_back(blob.bindings[i].name);
  for (const auto& a : blob.aliased_io) handle->info.aliased_outputs.push_back(a.output);
  handle->info.zero_copy_kv = parsed_specs.zero_copy_kv;
  handle->stamp_is_all_aliased = stamp_is_all_aliased;
  handle->blob = std::move(blob);
  handle->specs = std::move(parsed_specs);
  handle->program = program;
  std::lock_guard<std::mutex> lock(program->mutex);
  program->live.push_back(handle.get());
  return handle.release();
}

Status drain_handle(TrtHandle& h) {
  if (h.inflight_pending) {
    TRTX_CHECK_OK(h.device.event_synchronize(h.inflight));
    h.inflight_pending = false;
    ++h.info.drains;
  }
  return h.engine->check_deferred(h.where);
}

std::vector<TrtHandle*> handles_of(const Shared& program, const std::string& method) {
  std::lock_guard<std::mutex> lock(program.mutex);
  std::vector<TrtHandle*> out;
  for (TrtHandle* h : program.live) {
    if (h->info.method == method) out.push_back(h);
  }
  return out;
}

}  // namespace

TrtHandle::~TrtHandle() {
  // The provider may still wait on scratch_done (PrivateScratch does), so it
  // goes before the events.
  scratch.reset();
  engine.reset();
  for (auto& s : staging) device.release(s.ptr, runtime::StreamRef{});
  if (inflight.handle != nullptr) device.destroy_event(inflight);
  if (scratch_done.handle != nullptr) device.destroy_event(scratch_done);
  if (own_stream.handle != nullptr) device.destroy_stream(own_stream);
}

et::Result<et::DelegateHandle*> TensorRTBackend::init(et::BackendInitContext& context, et::FreeableBuffer* processed,
                                                      et::ArrayRef<et::CompileSpec> compile_specs) const {
  Result<TrtHandle*> h = init_handle(context, processed, compile_specs);
  if (!h.ok()) {
    Failure f = h.take_failure();
    const et::Error e = et_error_for(f.code);
    return trtx::et::record_failure(std::move(f), e);
  }
  return static_cast<et::DelegateHandle*>(h.get());
}

et::Error TensorRTBackend::execute(et::BackendExecutionContext&, et::DelegateHandle* handle,
                                   et::Span<et::EValue*> args) const {
  Status s = execute_handle(*static_cast<TrtHandle*>(handle), args);
  if (s.ok()) return et::Error::Ok;
  Failure f = s.take_failure();
  const et::Error e = et_error_for(f.code);
  return trtx::et::record_failure(std::move(f), e);
}

void TensorRTBackend::destroy(et::DelegateHandle* handle) const {
  auto* h = static_cast<TrtHandle*>(handle);
  if (h == nullptr) return;
  runtime::DeviceScope scope(h->device.target(), h->device.device_index());
  // A runner drains before unloading; an application that did not still
  // must not free memory an enqueue is reading.
  (void)drain_handle(*h);
  // The state outlives the handle's removal: the handle holds it.
  std::shared_ptr<Shared> program = h->program;
  {
    std::lock_guard<std::mutex> lock(program->mutex);
    auto& live = program->live;
    live.erase(std::remove(live.begin(), live.end(), h), live.end());
  }
  delete h;
}

ProgramState::ProgramState(TensorRTBackendConfig config) : shared_(std::make_shared<Shared>()) {
  shared_->config = std::move(config);
  ProgramTable& table = program_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  shared_->id = table.next_id++;
  table.states.emplace(shared_->id, shared_);
}

ProgramState::~ProgramState() {
  ProgramTable& table = program_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.states.erase(shared_->id);
}

int ProgramState::id() const { return shared_->id; }

void ProgramState::configure(TensorRTBackendConfig config) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  shared_->config = std::move(config);
}

ProgramState& default_program_state() {
  static ProgramState state;
  return state;
}

et::Error register_tensorrt_backend() {
  static TensorRTBackend backend;
  static const et::Error registered = et::register_backend(et::Backend{TensorRTBackend::kId, &backend});
  return registered;
}

std::vector<DelegateInfo> ProgramState::delegate_infos(const std::string& method) const {
  std::vector<DelegateInfo> out;
  for (const TrtHandle* h : handles_of(*shared_, method)) out.push_back(h->info);
  return out;
}

Status ProgramState::check_deferred(const std::string& method) const {
  for (TrtHandle* h : handles_of(*shared_, method)) TRTX_CHECK_OK(h->engine->check_deferred(h->where));
  return ok_status();
}

Status ProgramState::drain(const std::string& method) const {
  Status first = ok_status();
  for (TrtHandle* h : handles_of(*shared_, method)) {
    Status s = drain_handle(*h);
    if (!s.ok() && first.ok()) first = std::move(s);
  }
  return first;
}

}  // namespace trtx::backend
