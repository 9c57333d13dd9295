// TensorRTBackend::execute: one DelegateCall under the delegate runtime
// contracts (docs/runtime-contracts.md).

#include "trt_handle.h"
#include "trtx/et/caller_stream.h"
#include "trtx/et/device_allocator.h"

namespace trtx::backend {

namespace et = executorch::runtime;
using runtime::Placement;

namespace {

enum class Elision { Staged, ZeroCopy, None };

const char* elision_name(Elision e) {
  return e == Elision::Staged ? "staged" : e == Elision::ZeroCopy ? "zero-copy" : "none";
}

// One delegate argument as the engine sees it.
struct Arg {
  void* data = nullptr;
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
  uint64_t numel = 0;
  uint64_t nbytes = 0;
  Placement placement = Placement::Host;
};

std::string shape_text(ScalarType t, const std::vector<int64_t>& sizes) {
  std::string s = std::string(scalar_type_name(t)) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

Failure exec_error(const std::string& where, const std::string& msg) {
  return fail(Error::DelegateExecutionFailed, where, msg);
}

// Reads argument i. Where its bytes live is decided by the memory itself (an
// allocation of the registered device allocator, or not), never by the tag
// alone: a tensor tagged CUDA in a host arena is a host-planned program.
Result<Arg> read_arg(et::EValue* v, size_t i, int engine_device, const std::string& where) {
  if (v == nullptr || !v->isTensor()) {
    return fail(Error::InvalidType, where, "delegate argument " + std::to_string(i) + " is not a Tensor");
  }
  const executorch::aten::Tensor& t = v->toTensor();
  Arg a;
  a.data = t.mutable_data_ptr();
  a.dtype = static_cast<ScalarType>(static_cast<int8_t>(t.scalar_type()));
  for (auto s : t.sizes()) a.sizes.push_back(s);
  a.numel = static_cast<uint64_t>(t.numel());
  a.nbytes = static_cast<uint64_t>(t.nbytes());
  if (a.data == nullptr && a.nbytes != 0) {
    return fail(Error::InvalidState, where, "delegate argument " + std::to_string(i) + " has no memory");
  }
  int memory_device = engine_device;
  const bool device_memory = trtx::et::device_allocator().owns(a.data, a.nbytes, &memory_device);
  const bool tagged_device = t.unsafeGetTensorImpl()->device_type() != et::etensor::DeviceType::CPU;
  if (tagged_device && !device_memory && a.nbytes != 0) {
    return exec_error(where, "delegate argument " + std::to_string(i) +
                                 " is tagged CUDA but its memory is in a host arena (a host-planned program)");
  }
  // ExecuTorch moves a tensor between devices through the host (a cuda:0 ->
  // host -> cuda:1 pair of et_copy kernels, propagate_device_pass.py); an
  // engine handed another device's memory would read it without peer access.
  if (device_memory && memory_device != engine_device && a.nbytes != 0) {
    return fail(Error::DeviceMismatch, where,
                "delegate argument " + std::to_string(i) + " lives in memory of cuda:" + std::to_string(memory_device) +
                    " but the engine runs on cuda:" + std::to_string(engine_device));
  }
  a.placement = device_memory ? Placement::Device : Placement::Host;
  // Device memory is bound to the engine as it is (host memory is staged
  // into an aligned buffer first). A tensor planned at an offset that is not
  // a multiple of its element size (the runtime loads it:
  // runtime/core/hierarchical_allocator.h checks bounds only) would be
  // accessed misaligned: undefined behaviour in a CPU engine, a
  // misaligned-address fault in a CUDA kernel. trtx check refuses the program
  // (STRUCT_ARENA_ALIGNMENT); the delegate refuses the call.
  const size_t elem = element_size(a.dtype);
  if (device_memory && elem > 1 && a.nbytes != 0 && reinterpret_cast<uintptr_t>(a.data) % elem != 0) {
    return exec_error(where, "delegate argument " + std::to_string(i) + " (" + scalar_type_name(a.dtype) +
                                 ") in device memory is not aligned to its " + std::to_string(elem) +
                                 "-byte element (a misaligned planned offset): the engine would access it misaligned");
  }
  return a;
}

Status check_binding_type(const TrtBinding& b, const Arg& t, const std::string& where, size_t arg) {
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

Result<Elision> elision_of(const TrtHandle& h, size_t n) {
  const size_t n_in = h.blob.inputs.size();
  const size_t n_out = h.blob.outputs.size();
  const size_t n_al = h.blob.aliased_io.size();  // <= n_out: the parser refuses a repeated output
  if (h.contract == TrtContract::Stock) {
    // Torch-TensorRT's runtime without the zero-copy contract binds every
    // input and output from the argument list.
    if (n < n_in + n_out) {
      return fail(Error::DelegateArity, h.where,
                  "expected at least " + std::to_string(n_in + n_out) + " args (" + std::to_string(n_in) +
                      " inputs + " + std::to_string(n_out) + " outputs), got " + std::to_string(n) +
                      ": the stock Torch-TensorRT runtime has no zero-copy KV contract");
    }
    return n_al > 0 ? Elision::Staged : Elision::None;
  }
  if (n == n_in + n_out) return n_al > 0 ? Elision::Staged : Elision::None;
  if (n_al > 0 && n == n_in + n_out - n_al) return Elision::ZeroCopy;
  std::string expect =
      std::to_string(n_in + n_out) + " (" + std::to_string(n_in) + " inputs + " + std::to_string(n_out) + " outputs)";
  if (n_al > 0) {
    expect += " or " + std::to_string(n_in + n_out - n_al) + " (zero-copy: " + std::to_string(n_al) +
              " aliased outputs elided)";
  }
  return fail(Error::DelegateArity, h.where,
              "delegate '" + h.where + "' takes " + expect + " arguments, got " + std::to_string(n));
}

Status check_stamp(const TrtHandle& h, Elision mode) {
  const bool stamped = h.specs.zero_copy_kv.has_value();
  if (mode == Elision::ZeroCopy) {
    if (!stamped) {
      return fail(Error::CompileSpecInvalid, h.where,
                  "the call elides the aliased outputs but the delegate carries no zero_copy_kv spec");
    }
    if (!h.stamp_is_all_aliased) {
      return fail(Error::CompileSpecInvalid, h.where,
                  "zero_copy_kv does not name exactly the engine's aliased outputs (elision is all or nothing)");
    }
  } else if (stamped) {
    return fail(Error::CompileSpecInvalid, h.where,
                "zero_copy_kv is stamped on the delegate but the call passes every output (staged)");
  }
  return ok_status();
}

// A copy after the enqueue: an aliased output reflected into its staged
// argument, or a host output copied back from its staging buffer.
struct Copy {
  void* dst;
  Placement dst_p;
  const void* src;
  uint64_t n;
};

// One execute's state: the arguments, the bindings handed to the engine, the
// stream, and the copies around the enqueue.
struct Call {
  Call(TrtHandle& h, Elision m) : handle(h), blob(h.blob), where(h.where), dev(h.device), mode(m) {}
  TrtHandle& handle;
  const TrtBlob& blob;
  const std::string& where;
  const runtime::DeviceContext& dev;
  Elision mode;
  std::vector<Arg> args;
  std::optional<runtime::StreamRef> caller;
  runtime::StreamRef stream;
  runtime::CopyCounters copies;
  std::vector<engine::BindingView> bindings;
  bool host_staging = false;
  std::vector<Copy> reflects, host_outputs;
};

Result<void*> stage(Call& c, size_t binding, const Arg& t) {
  Staging& s = c.handle.staging[binding];
  if (s.size < t.nbytes) {
    c.dev.release(s.ptr, c.stream);
    s = Staging{};
    TRTX_ASSIGN_OR_RETURN(s.ptr, c.dev.allocate(t.nbytes, c.stream));
    s.size = t.nbytes;
  }
  return s.ptr;
}

void view(Call& c, size_t binding, const Arg& t, void* data) {
  engine::BindingView& v = c.bindings[binding];
  v.name = c.blob.bindings[binding].name;
  v.is_input = c.blob.bindings[binding].is_input;
  v.data = data;
  v.dtype = t.dtype;
  v.sizes = t.sizes;
  v.numel = t.numel;
  v.nbytes = t.nbytes;
}

// The caller's stream when ExecuTorch gives one, else the handle's own
// (made on first use).
Status pick_stream(Call& c) {
  c.caller = trtx::et::caller_stream(c.dev.device_index());
  c.stream = c.caller.has_value() ? *c.caller : c.handle.own_stream;
  if (!c.caller.has_value() && c.stream.handle == nullptr) {
    TRTX_ASSIGN_OR_RETURN(c.handle.own_stream, c.dev.create_stream(/*non_blocking=*/false));
    c.stream = c.handle.own_stream;
  }
  return ok_status();
}

// Inputs: device memory is bound as it is, host memory staged onto the device.
Status bind_inputs(Call& c, std::vector<Placement>& input_placement) {
  for (size_t k = 0; k < c.blob.inputs.size(); ++k) {
    const size_t b = c.blob.inputs[k];
    const Arg& t = c.args[k];
    TRTX_CHECK_OK(check_binding_type(c.blob.bindings[b], t, c.where, k));
    input_placement[b] = t.placement;
    if (t.placement == Placement::Device) {
      view(c, b, t, t.data);
    } else {
      TRTX_ASSIGN_OR_RETURN(void* staged, stage(c, b, t));
      TRTX_CHECK_OK(c.dev.copy(staged, Placement::Device, t.data, Placement::Host, t.nbytes, c.stream, &c.copies));
      view(c, b, t, staged);
      c.host_staging = true;
    }
  }
  return ok_status();
}

// An aliased output `b` of input `in`; a staged call passes it as argument
// `arg` (then advanced), a zero-copy call elides it.
Status bind_aliased_output(Call& c, size_t b, size_t in, const std::vector<Placement>& input_placement, size_t& arg) {
  // The engine writes an aliased output through its input's memory, which
  // must be the caller's device memory, never a per-call staging copy.
  if (input_placement[in] != Placement::Device) {
    return exec_error(c.where, "aliased input '" + c.blob.bindings[in].name +
                                   "' must be device-resident; its argument is planned in host memory");
  }
  c.bindings[b] = c.bindings[in];
  c.bindings[b].name = c.blob.bindings[b].name;
  c.bindings[b].is_input = false;
  if (c.mode != Elision::Staged) return ok_status();
  const Arg& t = c.args[arg];
  TRTX_CHECK_OK(check_binding_type(c.blob.bindings[b], t, c.where, arg));
  if (t.nbytes != c.bindings[in].nbytes) {
    return exec_error(c.where, "aliased output '" + c.blob.bindings[b].name + "' argument is " +
                                   std::to_string(t.nbytes) + " bytes but its input '" + c.blob.bindings[in].name +
                                   "' is " + std::to_string(c.bindings[in].nbytes));
  }
  c.reflects.push_back(Copy{t.data, t.placement, c.bindings[in].data, t.nbytes});
  ++arg;
  return ok_status();
}

// Outputs: aliased ones through their inputs, the others bound in device
// memory or staged and copied back to the host after the enqueue.
Status bind_outputs(Call& c, const std::vector<Placement>& input_placement) {
  size_t arg = c.blob.inputs.size();
  for (size_t k = 0; k < c.blob.outputs.size(); ++k) {
    const size_t b = c.blob.outputs[k];
    const long ai = c.blob.aliased_input_of(b);
    if (ai >= 0) {
      TRTX_CHECK_OK(bind_aliased_output(c, b, static_cast<size_t>(ai), input_placement, arg));
      continue;
    }
    const Arg& t = c.args[arg];
    TRTX_CHECK_OK(check_binding_type(c.blob.bindings[b], t, c.where, arg));
    if (t.placement == Placement::Device) {
      view(c, b, t, t.data);
    } else {
      TRTX_ASSIGN_OR_RETURN(void* staged, stage(c, b, t));
      view(c, b, t, staged);
      c.host_outputs.push_back(Copy{t.data, Placement::Host, staged, t.nbytes});
      c.host_staging = true;
    }
    ++arg;
  }
  return ok_status();
}

Status enqueue(Call& c) {
  TrtHandle& handle = c.handle;
  TRTX_CHECK_OK(handle.engine->check_bindings(c.bindings, c.where));
  TRTX_ASSIGN_OR_RETURN(uint64_t need, handle.engine->scratch_bytes(c.bindings, c.where));
  if (need > SIZE_MAX) return exec_error(c.where, "scratch need too large");
  TRTX_ASSIGN_OR_RETURN(void* scratch, handle.scratch->acquire(c.dev, static_cast<size_t>(need), c.stream));
  // Every acquire is followed by release_after, also when the enqueue fails
  // (a provider may refuse the next acquire until it is).
  Status enqueued = handle.engine->enqueue(c.bindings, scratch, need, c.stream, c.where);
  Status recorded = enqueued.ok() ? c.dev.record(handle.scratch_done, c.stream) : ok_status();
  handle.scratch->release_after(enqueued.ok() && recorded.ok() ? handle.scratch_done : runtime::EventRef{});
  TRTX_CHECK_OK(enqueued);
  TRTX_CHECK_OK(recorded);
  handle.info.engine_stand_in = handle.engine->stand_in_copies();
  handle.info.weights = handle.engine->weight_placement();
  handle.info.scratch_bytes = need;
  handle.info.scratch_capacity = handle.scratch->capacity();
  return ok_status();
}

Status copy_back(Call& c) {
  // A staged aliased output is a separate argument: the engine's in-place
  // write is reflected into it, and that pending reflect forces the sync.
  for (const auto& r : c.reflects)
    TRTX_CHECK_OK(c.dev.copy(r.dst, r.dst_p, r.src, Placement::Device, r.n, c.stream, &c.copies));
  for (const auto& o : c.host_outputs) {
    TRTX_CHECK_OK(c.dev.copy(o.dst, Placement::Host, o.src, Placement::Device, o.n, c.stream, &c.copies));
  }
  DelegateInfo& info = c.handle.info;
  ++info.executes;
  info.copies.h2d_bytes += c.copies.h2d_bytes;
  info.copies.d2h_bytes += c.copies.d2h_bytes;
  info.copies.d2d_bytes += c.copies.d2d_bytes;
  trtx::et::device_allocator().add_traffic(c.copies);
  return ok_status();
}

Status finish(Call& c) {
  TrtHandle& handle = c.handle;
  const bool must_sync = c.host_staging || !c.reflects.empty() || !c.caller.has_value();
  if (must_sync) {
    TRTX_CHECK_OK(c.dev.synchronize(c.stream));
    ++handle.info.syncs_performed;
    return handle.engine->check_deferred(c.where);
  }
  // Zero-copy under a caller stream: the caller orders everything after this
  // enqueue on its stream; the event lets the next execute and teardown
  // order themselves after it too.
  TRTX_CHECK_OK(c.dev.record(handle.inflight, c.stream));
  handle.inflight_pending = true;
  ++handle.info.syncs_skipped;
  return ok_status();
}

}  // namespace

Status execute_handle(TrtHandle& handle, et::Span<et::EValue*> argv) {
  // Elision is read from the argument count alone, never from a flag.
  TRTX_ASSIGN_OR_RETURN(Elision mode, elision_of(handle, argv.size()));
  TRTX_CHECK_OK(check_stamp(handle, mode));
  if (handle.info.elision.empty()) handle.info.elision = elision_name(mode);
  Call c(handle, mode);
  for (size_t i = 0; i < argv.size(); ++i) {
    TRTX_ASSIGN_OR_RETURN(Arg a, read_arg(argv[i], i, c.dev.device_index(), c.where));
    c.args.push_back(std::move(a));
  }

  // The engine's kernels launch on its own device, whichever device the
  // calling thread is on; the caller's device is put back on return.
  runtime::DeviceScope scope(c.dev.target(), c.dev.device_index());
  TRTX_CHECK_OK(Status(scope.status()));
  TRTX_CHECK_OK(pick_stream(c));
  c.bindings.resize(c.blob.bindings.size());

  // Wait for the previous enqueue whose sync was skipped, before anything of
  // this execute touches memory it may still use.
  if (handle.inflight_pending) {
    TRTX_CHECK_OK(c.dev.wait(c.stream, handle.inflight));
    handle.inflight_pending = false;
    ++handle.info.waits;
  }

  std::vector<Placement> input_placement(c.blob.bindings.size(), Placement::Host);
  TRTX_CHECK_OK(bind_inputs(c, input_placement));
  TRTX_CHECK_OK(bind_outputs(c, input_placement));
  TRTX_CHECK_OK(enqueue(c));
  TRTX_CHECK_OK(copy_back(c));
  return finish(c);
}

}  // namespace trtx::backend
