#include "trtx/backend/tensorrt_backend.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "trtx/backend/tensorrt_blob.h"
#include "trtx/engine/reference_engine.h"

namespace trtx::backend {

using executor::EValue;
using executor::TensorImpl;
using runtime::Placement;

namespace {

enum class Elision { Staged, ZeroCopy, None };

const char* elision_name(Elision e) {
  switch (e) {
    case Elision::Staged:
      return "staged";
    case Elision::ZeroCopy:
      return "zero-copy";
    case Elision::None:
      return "none";
  }
  return "none";
}

// A device buffer that a host-planned argument is staged through.
struct Staging {
  void* ptr = nullptr;
  uint64_t size = 0;
};

class TrtHandle final : public DelegateHandle {
 public:
  explicit TrtHandle(runtime::DeviceContext dev) : device(dev) {}
  ~TrtHandle() override {
    // The provider may still wait on scratch_done (PrivateScratch does), so
    // it goes before the events.
    scratch.reset();
    engine.reset();
    for (auto& s : staging) device.release(s.ptr, runtime::StreamRef{});
    if (inflight.handle != nullptr) device.destroy_event(inflight);
    if (scratch_done.handle != nullptr) device.destroy_event(scratch_done);
    if (own_stream.handle != nullptr) device.destroy_stream(own_stream);
  }

  runtime::DeviceContext device;
  std::string where;
  TrtBlob blob;
  TrtCompileSpecs specs;
  std::unique_ptr<engine::EngineExecutor> engine;
  std::shared_ptr<runtime::ScratchProvider> scratch;
  runtime::StreamRef own_stream;  // used when no caller stream is set
  runtime::EventRef inflight;     // recorded when a sync is skipped
  bool inflight_pending = false;
  runtime::EventRef scratch_done;
  std::vector<Staging> staging;   // per binding
  DelegateInfo info;
};

std::string shape_text(ScalarType t, const std::vector<int64_t>& sizes) {
  std::string s = std::string(scalar_type_name(t)) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

Failure exec_error(const std::string& where, const std::string& msg) {
  return fail(Error::DelegateExecutionFailed, where, msg);
}

Status check_binding_type(const TrtBinding& b, const TensorImpl& t, const std::string& where, size_t arg) {
  if (b.has_dtype) {
    ScalarType want;
    if (!scalar_type_from_dtype(b.dtype, want)) {
      return exec_error(where, "binding '" + b.name + "' has dtype '" + b.dtype + "', which this runner does not know");
    }
    if (want != t.dtype) {
      return exec_error(where, "binding '" + b.name + "' is " + b.dtype + " but argument " + std::to_string(arg) +
                                   " is " + shape_text(t.dtype, t.sizes));
    }
  }
  if (b.has_shape) {
    bool same = b.shape.size() == t.sizes.size();
    for (size_t i = 0; same && i < b.shape.size(); ++i) same = b.shape[i] == -1 || b.shape[i] == t.sizes[i];
    if (!same) {
      std::vector<int64_t> want(b.shape.begin(), b.shape.end());
      return exec_error(where, "binding '" + b.name + "' has shape " + shape_text(t.dtype, want) + " but argument " +
                                   std::to_string(arg) + " is " + shape_text(t.dtype, t.sizes));
    }
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<DelegateHandle>> TensorRTBackend::init(BackendInitContext& ctx,
                                                              const program::BlobSource& processed,
                                                              const std::vector<CompileSpecView>& specs) const {
  const std::string& where = ctx.where;
  const std::string blob_where = where + ".blob";

  // Header and metadata first; the engine is read only once they hold.
  uint8_t head[kTrtBlobHeaderSize] = {0};
  size_t head_n = processed.size() < kTrtBlobHeaderSize ? static_cast<size_t>(processed.size()) : kTrtBlobHeaderSize;
  TRTX_CHECK_OK(processed.read(0, head_n, head));
  TRTX_ASSIGN_OR_RETURN(TrtBlobHeader header, parse_trt_blob_header(head, head_n, processed.size(), blob_where));
  std::string metadata(header.metadata_size, '\0');
  TRTX_CHECK_OK(processed.read(header.metadata_offset, header.metadata_size, metadata.data()));
  TRTX_ASSIGN_OR_RETURN(TrtBlob blob, parse_trt_metadata(header, metadata, blob_where));
  TRTX_ASSIGN_OR_RETURN(TrtCompileSpecs parsed_specs, parse_trt_compile_specs(specs, where));

  if (parsed_specs.zero_copy_kv.has_value()) {
    for (const auto& name : *parsed_specs.zero_copy_kv) {
      bool aliased = false;
      for (const auto& a : blob.aliased_io) aliased = aliased || a.output == name;
      if (!aliased) {
        return fail(Error::CompileSpecInvalid, where + ".compile_specs(zero_copy_kv)",
                    "zero_copy_kv names '" + name + "', which is not an aliased output of the engine");
      }
    }
  }

  uint8_t engine_head[8] = {0};
  size_t engine_head_n = header.engine_size < 8 ? static_cast<size_t>(header.engine_size) : 8;
  TRTX_CHECK_OK(processed.read(header.engine_offset, engine_head_n, engine_head));
  switch (engine::classify_engine(engine_head, engine_head_n)) {
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
  if (header.engine_size > SIZE_MAX) return fail(Error::EngineFormat, where + ".engine", "engine too large");
  TRTX_ASSIGN_OR_RETURN(program::AlignedBuffer engine_bytes,
                        program::AlignedBuffer::allocate(static_cast<size_t>(header.engine_size)));
  TRTX_CHECK_OK(processed.read(header.engine_offset, static_cast<size_t>(header.engine_size), engine_bytes.data()));
  std::vector<bool> is_input;
  for (const auto& b : blob.bindings) is_input.push_back(b.is_input);
  TRTX_ASSIGN_OR_RETURN(engine::RefEngine ref,
                        engine::parse_reference_engine(engine_bytes.data(), engine_bytes.size(), is_input, where));

  int device_index = parsed_specs.target_device.has_value() ? *parsed_specs.target_device : static_cast<int>(blob.device_id);
  const runtime::DeviceContext& runner = *ctx.device;
  if (runner.target() == runtime::Target::Cuda && device_index != runner.device_index()) {
    return fail(Error::DeviceUnavailable, where + ".compile_specs(target_device)",
                "delegate targets cuda:" + std::to_string(device_index) + " but this run executes on cuda:" +
                    std::to_string(runner.device_index()));
  }
  auto handle = std::make_unique<TrtHandle>(runtime::DeviceContext(runner.target(), device_index));
  handle->where = where;
  handle->info.backend_id = kId;
  handle->info.target_device = device_index;

  BudgetResolution budget = resolve_budget(ctx.budget_option, parsed_specs.budget, ref.weight_streaming,
                                           ref.streamable_weight_bytes);
  TRTX_ASSIGN_OR_RETURN(handle->engine, engine::make_reference_executor(std::move(ref), handle->device));
  if (budget.effective.has_value()) TRTX_CHECK_OK(handle->engine->set_weight_streaming_budget(*budget.effective));
  handle->info.budget = budget;
  handle->info.engine = handle->engine->kind();

  TRTX_ASSIGN_OR_RETURN(handle->inflight, handle->device.create_event());
  TRTX_ASSIGN_OR_RETURN(handle->scratch_done, handle->device.create_event());
  handle->scratch = ctx.scratch_factory ? ctx.scratch_factory(handle->device, where) : nullptr;
  if (!handle->scratch) handle->scratch = std::make_shared<runtime::PrivateScratch>();
  handle->staging.resize(blob.bindings.size());
  for (size_t i : blob.inputs) handle->info.inputs.push_back(blob.bindings[i].name);
  for (size_t i : blob.outputs) handle->info.outputs.push_back(blob.bindings[i].name);
  for (const auto& a : blob.aliased_io) handle->info.aliased_outputs.push_back(a.output);
  handle->info.zero_copy_kv = parsed_specs.zero_copy_kv;
  handle->blob = std::move(blob);
  handle->specs = std::move(parsed_specs);
  return std::unique_ptr<DelegateHandle>(std::move(handle));
}

Status TensorRTBackend::execute(BackendExecutionContext& ctx, DelegateHandle* h,
                                const std::vector<EValue*>& args) const {
  auto* handle = static_cast<TrtHandle*>(h);
  const TrtBlob& blob = handle->blob;
  const std::string& where = ctx.where;
  const runtime::DeviceContext& dev = handle->device;

  const size_t n_in = blob.inputs.size();
  const size_t n_out = blob.outputs.size();
  const size_t n_al = blob.aliased_io.size();  // <= n_out: the parser refuses a repeated output
  const size_t n = args.size();

  // Elision is read from the argument count alone, never from a flag.
  Elision mode;
  if (n == n_in + n_out) {
    mode = n_al > 0 ? Elision::Staged : Elision::None;
  } else if (n_al > 0 && n == n_in + n_out - n_al) {
    mode = Elision::ZeroCopy;
  } else {
    std::string expect = std::to_string(n_in + n_out) + " (" + std::to_string(n_in) + " inputs + " +
                         std::to_string(n_out) + " outputs)";
    if (n_al > 0) {
      expect += " or " + std::to_string(n_in + n_out - n_al) + " (zero-copy: " + std::to_string(n_al) +
                " aliased outputs elided)";
    }
    return fail(Error::DelegateArity, where,
                "delegate '" + handle->where + "' takes " + expect + " arguments, got " + std::to_string(n));
  }
  const bool stamped = handle->specs.zero_copy_kv.has_value();
  if (mode == Elision::ZeroCopy) {
    if (!stamped) {
      return fail(Error::CompileSpecInvalid, where,
                  "the call elides the aliased outputs but the delegate carries no zero_copy_kv spec");
    }
    std::set<std::string> named(handle->specs.zero_copy_kv->begin(), handle->specs.zero_copy_kv->end());
    std::set<std::string> aliased;
    for (const auto& a : blob.aliased_io) aliased.insert(a.output);
    if (named != aliased) {
      return fail(Error::CompileSpecInvalid, where,
                  "zero_copy_kv does not name exactly the engine's aliased outputs (elision is all or nothing)");
    }
  } else if (stamped) {
    return fail(Error::CompileSpecInvalid, where,
                "zero_copy_kv is stamped on the delegate but the call passes every output (staged)");
  }
  if (handle->info.elision.empty()) handle->info.elision = elision_name(mode);

  for (size_t i = 0; i < n; ++i) {
    if (!args[i]->is_tensor()) {
      return fail(Error::InvalidType, where,
                  "delegate argument " + std::to_string(i) + " is " + executor::tag_name(args[i]->tag) + ", not a Tensor");
    }
    const TensorImpl& t = *args[i]->tensor;
    if (t.data == nullptr && t.nbytes != 0) {
      return fail(Error::InvalidState, where, "delegate argument " + std::to_string(i) + " has no memory");
    }
    if (t.placement == Placement::Device && t.device_index != dev.device_index()) {
      return exec_error(where, "delegate argument " + std::to_string(i) + " is on cuda:" + std::to_string(t.device_index) +
                                   " but the delegate targets cuda:" + std::to_string(dev.device_index()));
    }
  }

  runtime::StreamRef stream = ctx.has_caller_stream ? ctx.caller_stream : handle->own_stream;
  if (!ctx.has_caller_stream && stream.handle == nullptr) {
    TRTX_ASSIGN_OR_RETURN(handle->own_stream, dev.create_stream(/*non_blocking=*/false));
    stream = handle->own_stream;
  }

  runtime::CopyCounters copies;
  std::vector<engine::BindingView> bindings(blob.bindings.size());
  bool host_staging = false;
  struct Reflect {
    void* dst;
    Placement dst_p;
    const void* src;
    uint64_t n;
  };
  std::vector<Reflect> reflects;
  struct HostOut {
    void* dst;
    const void* src;
    uint64_t n;
  };
  std::vector<HostOut> host_outputs;

  auto stage = [&](size_t binding, const TensorImpl& t) -> Result<void*> {
    Staging& s = handle->staging[binding];
    if (s.size < t.nbytes) {
      dev.release(s.ptr, stream);
      s = Staging{};
      TRTX_ASSIGN_OR_RETURN(s.ptr, dev.allocate(t.nbytes, stream));
      s.size = t.nbytes;
    }
    return s.ptr;
  };
  auto view = [&](size_t binding, const TensorImpl& t, void* data) {
    engine::BindingView& v = bindings[binding];
    v.name = blob.bindings[binding].name;
    v.is_input = blob.bindings[binding].is_input;
    v.data = data;
    v.dtype = t.dtype;
    v.sizes = t.sizes;
    v.numel = t.numel;
    v.nbytes = t.nbytes;
  };

  // Wait for the previous enqueue whose sync was skipped, before anything of
  // this execute touches memory it may still use.
  if (handle->inflight_pending) {
    TRTX_CHECK_OK(dev.wait(stream, handle->inflight));
    handle->inflight_pending = false;
    ++handle->info.waits;
  }

  std::vector<Placement> input_placement(blob.bindings.size(), Placement::Host);
  for (size_t k = 0; k < n_in; ++k) {
    size_t b = blob.inputs[k];
    const TensorImpl& t = *args[k]->tensor;
    TRTX_CHECK_OK(check_binding_type(blob.bindings[b], t, where, k));
    input_placement[b] = t.placement;
    if (t.placement == Placement::Device) {
      view(b, t, t.data);
    } else {
      TRTX_ASSIGN_OR_RETURN(void* staged, stage(b, t));
      TRTX_CHECK_OK(dev.copy(staged, Placement::Device, t.data, Placement::Host, t.nbytes, stream, &copies));
      view(b, t, staged);
      host_staging = true;
    }
  }

  size_t arg = n_in;
  for (size_t k = 0; k < n_out; ++k) {
    size_t b = blob.outputs[k];
    long ai = blob.aliased_input_of(b);
    if (ai >= 0) {
      auto in = static_cast<size_t>(ai);
      // The engine writes an aliased output through its input's memory, which
      // must be the caller's device memory, never a per-call staging copy.
      if (input_placement[in] != Placement::Device) {
        return exec_error(where, "aliased input '" + blob.bindings[in].name +
                                     "' must be device-resident; its argument is planned in host memory");
      }
      bindings[b] = bindings[in];
      bindings[b].name = blob.bindings[b].name;
      bindings[b].is_input = false;
      if (mode == Elision::Staged) {
        const TensorImpl& t = *args[arg]->tensor;
        TRTX_CHECK_OK(check_binding_type(blob.bindings[b], t, where, arg));
        if (t.nbytes != bindings[in].nbytes) {
          return exec_error(where, "aliased output '" + blob.bindings[b].name + "' argument is " + std::to_string(t.nbytes) +
                                       " bytes but its input '" + blob.bindings[in].name + "' is " +
                                       std::to_string(bindings[in].nbytes));
        }
        if (t.constant) return exec_error(where, "output argument " + std::to_string(arg) + " is a constant");
        reflects.push_back(Reflect{t.data, t.placement, bindings[in].data, t.nbytes});
        ++arg;
      }
      continue;
    }
    const TensorImpl& t = *args[arg]->tensor;
    TRTX_CHECK_OK(check_binding_type(blob.bindings[b], t, where, arg));
    if (t.constant) return exec_error(where, "output argument " + std::to_string(arg) + " is a constant");
    if (t.placement == Placement::Device) {
      view(b, t, t.data);
    } else {
      TRTX_ASSIGN_OR_RETURN(void* staged, stage(b, t));
      view(b, t, staged);
      host_outputs.push_back(HostOut{t.data, staged, t.nbytes});
      host_staging = true;
    }
    ++arg;
  }

  TRTX_CHECK_OK(handle->engine->check_bindings(bindings, handle->where));
  TRTX_ASSIGN_OR_RETURN(uint64_t need, handle->engine->scratch_bytes(bindings, handle->where));
  if (need > SIZE_MAX) return exec_error(where, "scratch need too large");
  TRTX_ASSIGN_OR_RETURN(void* scratch, handle->scratch->acquire(dev, static_cast<size_t>(need), stream));
  // Every acquire is followed by release_after, also when the enqueue fails
  // (a provider may refuse the next acquire until it is).
  Status enqueued = handle->engine->enqueue(bindings, scratch, need, stream, handle->where);
  Status recorded = enqueued.ok() ? dev.record(handle->scratch_done, stream) : ok_status();
  handle->scratch->release_after(enqueued.ok() && recorded.ok() ? handle->scratch_done : runtime::EventRef{});
  TRTX_CHECK_OK(enqueued);
  TRTX_CHECK_OK(recorded);
  handle->info.scratch_bytes = need;
  handle->info.scratch_capacity = handle->scratch->capacity();

  // A staged aliased output is a separate argument: the engine's in-place
  // write is reflected into it, and that pending reflect forces the sync.
  for (const auto& r : reflects) {
    TRTX_CHECK_OK(dev.copy(r.dst, r.dst_p, r.src, Placement::Device, r.n, stream, &copies));
  }
  for (const auto& o : host_outputs) {
    TRTX_CHECK_OK(dev.copy(o.dst, Placement::Host, o.src, Placement::Device, o.n, stream, &copies));
  }

  ++handle->info.executes;
  handle->info.copies.h2d_bytes += copies.h2d_bytes;
  handle->info.copies.d2h_bytes += copies.d2h_bytes;
  handle->info.copies.d2d_bytes += copies.d2d_bytes;
  if (ctx.counters != nullptr) {
    ctx.counters->h2d_bytes += copies.h2d_bytes;
    ctx.counters->d2h_bytes += copies.d2h_bytes;
    ctx.counters->d2d_bytes += copies.d2d_bytes;
  }

  const bool must_sync = host_staging || !reflects.empty() || !ctx.has_caller_stream;
  if (must_sync) {
    TRTX_CHECK_OK(dev.synchronize(stream));
    ++handle->info.syncs_performed;
    return handle->engine->check_deferred(handle->where);
  }
  // Zero-copy under a caller stream: the caller orders everything after this
  // enqueue on its stream; the event lets the next execute and teardown
  // order themselves after it too.
  TRTX_CHECK_OK(dev.record(handle->inflight, stream));
  handle->inflight_pending = true;
  ++handle->info.syncs_skipped;
  return ok_status();
}

Status TensorRTBackend::check_deferred(DelegateHandle* h) const {
  auto* handle = static_cast<TrtHandle*>(h);
  return handle->engine->check_deferred(handle->where);
}

Status TensorRTBackend::drain(DelegateHandle* h) const {
  auto* handle = static_cast<TrtHandle*>(h);
  if (handle->inflight_pending) {
    TRTX_CHECK_OK(handle->device.event_synchronize(handle->inflight));
    handle->inflight_pending = false;
    ++handle->info.drains;
  }
  return handle->engine->check_deferred(handle->where);
}

void TensorRTBackend::destroy(std::unique_ptr<DelegateHandle> h) const {
  if (h) (void)drain(h.get());
  h.reset();
}

DelegateInfo TensorRTBackend::describe(const DelegateHandle* h) const {
  return static_cast<const TrtHandle*>(h)->info;
}

}  // namespace trtx::backend
