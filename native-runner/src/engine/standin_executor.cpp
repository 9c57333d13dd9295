// The reference engine's executor: runs a parsed StandinEngine's steps over the
// bindings ExecuTorch hands the delegate, on the host or through the CUDA
// kernels of standin_cuda.cu (schemas/reference-engine.md says what each
// step computes). Parsing is standin_engine.cpp.
#include "standin_cuda.h"
#include "standin_plan.h"
#include "trtx/engine/standin_engine.h"

namespace trtx::engine {

namespace {

bool overlap(const BindingView& x, const BindingView& y) {
  auto a = reinterpret_cast<uintptr_t>(x.data);
  auto b = reinterpret_cast<uintptr_t>(y.data);
  return x.nbytes != 0 && y.nbytes != 0 && a < b + y.nbytes && b < a + x.nbytes;
}

Failure exec_error(const std::string& where, const std::string& msg) {
  return fail(Error::DelegateExecutionFailed, where, msg);
}

Status need_float(const BindingView& b, const std::string& where, const std::string& what) {
  if (!is_floating(b.dtype)) {
    return exec_error(where, what + " binding '" + b.name + "' is " + scalar_type_name(b.dtype) +
                                 "; the reference engine computes on float32, float16 or bfloat16");
  }
  if (b.numel == 0) return exec_error(where, what + " binding '" + b.name + "' has no elements");
  return ok_status();
}

class StandinExecutor final : public EngineExecutor {
 public:
  StandinExecutor(StandinEngine e, runtime::DeviceContext device, void* fault)
      : engine_(std::move(e)), device_(device), fault_(fault) {}
  ~StandinExecutor() override {
    if (fault_ != nullptr) device_.release_mapped_flag(fault_);
  }

  const char* kind() const override {
    // Synthetic (version 1): its numbers are not a model's, and the name says
    // so wherever a report shows it (docs/reference-lowering.md section 1).
    return device_.target() == runtime::Target::Cuda ? "synthetic-cuda" : "synthetic-cpu";
  }
  uint64_t streamable_weight_bytes() const override { return engine_.streamable_weight_bytes; }
  bool weight_streaming() const override { return engine_.weight_streaming; }
  Status set_weight_streaming_budget(uint64_t bytes) override {
    budget_ = bytes;
    return ok_status();
  }

  Status check_bindings(const std::vector<BindingView>& b, const std::string& where) const override {
    for (size_t i = 0; i < engine_.steps.size(); ++i) {
      const StandinStep& s = engine_.steps[i];
      std::string at = where + ".engine.steps[" + std::to_string(i) + "]";
      switch (s.kind) {
        case StandinStep::Kind::Affine:
          TRTX_CHECK_OK(need_float(b[s.a], at, "Affine input"));
          TRTX_CHECK_OK(need_float(b[s.b], at, "Affine output"));
          if (b[s.a].numel != b[s.b].numel) {
            return exec_error(at, "Affine input '" + b[s.a].name + "' has " + std::to_string(b[s.a].numel) +
                                      " elements, output '" + b[s.b].name + "' " + std::to_string(b[s.b].numel));
          }
          if (b[s.a].data != b[s.b].data && overlap(b[s.a], b[s.b])) {
            return exec_error(at, "Affine input and output partially overlap");
          }
          break;
        case StandinStep::Kind::KvWrite: {
          TRTX_CHECK_OK(need_float(b[s.a], at, "KvWrite cache"));
          TRTX_CHECK_OK(need_float(b[s.c], at, "KvWrite source"));
          const BindingView& pos = b[s.b];
          if (!is_index_integer(pos.dtype) || pos.numel != 1) {
            return exec_error(at, "KvWrite position binding '" + pos.name + "' must be one int64 or int32 element");
          }
          if (s.seq_dim >= b[s.a].sizes.size()) {
            return exec_error(at, "KvWrite seq_dim " + std::to_string(s.seq_dim) + " but cache '" + b[s.a].name +
                                      "' has rank " + std::to_string(b[s.a].sizes.size()));
          }
          if (b[s.a].sizes[s.seq_dim] <= 0) return exec_error(at, "KvWrite cache has an empty sequence dimension");
          if (overlap(b[s.a], b[s.c]) || overlap(b[s.a], pos)) {
            return exec_error(at, "KvWrite cache overlaps its source or position");
          }
          break;
        }
        case StandinStep::Kind::Attend: {
          TRTX_CHECK_OK(need_float(b[s.a], at, "Attend query"));
          TRTX_CHECK_OK(need_float(b[s.b], at, "Attend output"));
          if (overlap(b[s.b], b[s.a])) return exec_error(at, "Attend output overlaps its query");
          for (uint32_t c : s.caches) {
            TRTX_CHECK_OK(need_float(b[c], at, "Attend cache"));
            if (overlap(b[s.b], b[c])) return exec_error(at, "Attend output overlaps cache '" + b[c].name + "'");
          }
          break;
        }
        case StandinStep::Kind::RingShift: {
          TRTX_CHECK_OK(need_float(b[s.a], at, "RingShift state_in"));
          TRTX_CHECK_OK(need_float(b[s.b], at, "RingShift source"));
          TRTX_CHECK_OK(need_float(b[s.c], at, "RingShift state_out"));
          const BindingView& in = b[s.a];
          const BindingView& out = b[s.c];
          if (in.sizes.empty() || in.numel != out.numel || out.sizes.empty() || in.sizes.back() != out.sizes.back()) {
            return exec_error(at, "RingShift state_in '" + in.name + "' and state_out '" + out.name +
                                      "' must have the same element count and last dimension");
          }
          if (overlap(in, out) || overlap(out, b[s.b])) {
            return exec_error(at, "RingShift state_out overlaps its state_in or source");
          }
          break;
        }
      }
    }
    return ok_status();
  }

  Result<uint64_t> scratch_bytes(const std::vector<BindingView>& b, const std::string& where) const override {
    TRTX_ASSIGN_OR_RETURN(uint64_t declared, declared_scratch_bytes(engine_, b, where));
    // Attend accumulates its per-cache partial sums in scratch; the engine
    // gets at least that much whatever it declares.
    uint64_t intrinsic = 0;
    for (const StandinStep& s : engine_.steps) {
      if (s.kind != StandinStep::Kind::Attend) continue;
      uint64_t need = uint64_t(s.caches.size()) * b[s.b].numel * sizeof(float);
      if (need > intrinsic) intrinsic = need;
    }
    return declared > intrinsic ? declared : intrinsic;
  }

  Status enqueue(const std::vector<BindingView>& b, void* scratch, uint64_t scratch_bytes, runtime::StreamRef stream,
                 const std::string& where) override {
    for (size_t i = 0; i < engine_.steps.size(); ++i) {
      const StandinStep& s = engine_.steps[i];
      std::string at = where + ".engine.steps[" + std::to_string(i) + "]";
      switch (s.kind) {
        case StandinStep::Kind::Affine:
          TRTX_CHECK_OK(enqueue_affine(s, b, stream));
          break;
        case StandinStep::Kind::KvWrite:
          TRTX_CHECK_OK(enqueue_kv_write(s, b, stream, at));
          break;
        case StandinStep::Kind::Attend:
          TRTX_CHECK_OK(enqueue_attend(s, b, scratch, scratch_bytes, stream, at));
          break;
        case StandinStep::Kind::RingShift:
          TRTX_CHECK_OK(enqueue_ring_shift(s, b, stream));
          break;
      }
    }
    return ok_status();
  }

  Status check_deferred(const std::string& where) override {
    if (fault_ == nullptr) return ok_status();
    auto* code = static_cast<volatile uint32_t*>(fault_);
    if (*code == kFaultNone) return ok_status();
    int64_t detail = *reinterpret_cast<volatile int64_t*>(static_cast<char*>(fault_) + 8);
    *code = kFaultNone;
    return exec_error(where + ".engine", "KvWrite position " + std::to_string(detail) +
                                             " was outside the cache's sequence; the kernel wrote nothing");
  }

 private:
  bool on_cuda() const { return device_.target() == runtime::Target::Cuda; }

  // One step of enqueue each: on the device's stream through standin_cuda.cu, else on the host.
  Status enqueue_affine(const StandinStep& s, const std::vector<BindingView>& b, runtime::StreamRef stream) {
    AffinePlan p{b[s.a].data, b[s.a].dtype, b[s.b].data, b[s.b].dtype, b[s.b].numel, s.scale, s.bias};
    if (on_cuda()) {
      TRTX_CHECK_OK(cuda_kernels::affine(p, stream.handle));
    } else {
      for (uint64_t k = 0; k < p.n; ++k) {
        store_elem(p.out, p.tout, k, ref_add(ref_mul(load_elem(p.in, p.tin, k), p.scale), p.bias));
      }
    }
    return ok_status();
  }

  Status enqueue_kv_write(const StandinStep& s, const std::vector<BindingView>& b, runtime::StreamRef stream,
                          const std::string& at) {
    const BindingView& cache = b[s.a];
    uint64_t outer = 1, inner = 1;
    for (size_t d = 0; d < s.seq_dim; ++d) outer *= static_cast<uint64_t>(cache.sizes[d]);
    for (size_t d = s.seq_dim + 1; d < cache.sizes.size(); ++d) inner *= static_cast<uint64_t>(cache.sizes[d]);
    KvWritePlan p{cache.data,   cache.dtype, b[s.b].data,
                  b[s.b].dtype, b[s.c].data, b[s.c].dtype,
                  b[s.c].numel, outer,       static_cast<uint64_t>(cache.sizes[s.seq_dim]),
                  inner,        s.salt};
    if (on_cuda()) {
      TRTX_CHECK_OK(cuda_kernels::kv_write(p, fault_, stream.handle));
    } else {
      int64_t pos = load_position(p.position, p.tposition);
      if (pos < 0 || static_cast<uint64_t>(pos) >= p.seq) {
        return exec_error(at, "KvWrite position " + std::to_string(pos) + " is outside the cache's sequence [0, " +
                                  std::to_string(p.seq) + ")");
      }
      for (uint64_t o = 0; o < p.outer; ++o) {
        float factor = ref_add(1.0f, ref_mul(p.salt, static_cast<float>(o)));
        for (uint64_t k = 0; k < p.inner; ++k) {
          float v = ref_mul(load_elem(p.source, p.tsource, (o * p.inner + k) % p.n_source), factor);
          store_elem(p.cache, p.tcache, (o * p.seq + static_cast<uint64_t>(pos)) * p.inner + k, v);
        }
      }
    }
    return ok_status();
  }

  Status enqueue_attend(const StandinStep& s, const std::vector<BindingView>& b, void* scratch, uint64_t scratch_bytes,
                        runtime::StreamRef stream, const std::string& at) {
    AttendPlan p{};
    p.n_caches = static_cast<int>(s.caches.size());
    uint64_t offset = 0;
    for (size_t c = 0; c < s.caches.size(); ++c) {
      const BindingView& cb = b[s.caches[c]];
      p.caches[c] = AttendCache{cb.data, cb.dtype, cb.numel, offset};
      offset += cb.numel;
    }
    p.query = b[s.a].data;
    p.tquery = b[s.a].dtype;
    p.n_query = b[s.a].numel;
    p.out = b[s.b].data;
    p.tout = b[s.b].dtype;
    p.n = b[s.b].numel;
    uint64_t need = uint64_t(p.n_caches) * p.n * sizeof(float);
    if (scratch == nullptr || scratch_bytes < need) {
      return exec_error(
          at, "Attend needs " + std::to_string(need) + " bytes of scratch, got " + std::to_string(scratch_bytes));
    }
    auto* partial = static_cast<float*>(scratch);
    if (on_cuda()) {
      TRTX_CHECK_OK(cuda_kernels::attend(p, partial, stream.handle));
    } else {
      for (int c = 0; c < p.n_caches; ++c) {
        for (uint64_t j = 0; j < p.n; ++j) partial[uint64_t(c) * p.n + j] = attend_partial(p.caches[c], p.n, j);
      }
      for (uint64_t j = 0; j < p.n; ++j) {
        float sum = 0.0f;
        for (int c = 0; c < p.n_caches; ++c) sum = ref_add(sum, partial[uint64_t(c) * p.n + j]);
        store_elem(p.out, p.tout, j, ref_add(load_elem(p.query, p.tquery, j % p.n_query), sum));
      }
    }
    return ok_status();
  }

  Status enqueue_ring_shift(const StandinStep& s, const std::vector<BindingView>& b, runtime::StreamRef stream) {
    const BindingView& in = b[s.a];
    auto width = static_cast<uint64_t>(in.sizes.back());
    RingShiftPlan p{in.data,     in.dtype,     b[s.b].data,      b[s.b].dtype, b[s.b].numel,
                    b[s.c].data, b[s.c].dtype, in.numel / width, width};
    if (on_cuda()) {
      TRTX_CHECK_OK(cuda_kernels::ring_shift(p, stream.handle));
    } else {
      for (uint64_t r = 0; r < p.rows; ++r) {
        for (uint64_t t = 0; t < p.width; ++t) {
          float v = t + 1 < p.width ? load_elem(p.in, p.tin, r * p.width + t + 1)
                                    : load_elem(p.source, p.tsource, r % p.n_source);
          store_elem(p.out, p.tout, r * p.width + t, v);
        }
      }
    }
    return ok_status();
  }

  StandinEngine engine_;
  runtime::DeviceContext device_;
  void* fault_;
  // What TensorRT would get through setWeightStreamingBudgetV2; a reference
  // engine declares its weights but holds none, so nothing streams.
  uint64_t budget_ = 0;
};

}  // namespace

Result<std::unique_ptr<EngineExecutor>> make_standin_executor(StandinEngine engine,
                                                              const runtime::DeviceContext& device) {
  void* fault = nullptr;
  if (device.target() == runtime::Target::Cuda) {
    TRTX_ASSIGN_OR_RETURN(fault, device.allocate_mapped_flag());
  }
  return std::unique_ptr<EngineExecutor>(new StandinExecutor(std::move(engine), device, fault));
}

}  // namespace trtx::engine
