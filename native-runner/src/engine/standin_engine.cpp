// The reference engine's format: what kind of engine a blob carries, and a
// reference engine parsed and checked against the delegate's bindings into a
// StandinEngine (schemas/reference-engine.md). Running one is
// standin_executor.cpp.
#include "trtx/engine/standin_engine.h"

#include <cstdlib>
#include <cstring>

#include "flatbuffers/flatbuffers.h"
#include "reference_engine_generated.h"
#include "standin_cuda.h"
#include "standin_plan.h"

namespace trtx::engine {

namespace rfb = trtx_ref;

EngineKind classify_engine(const uint8_t* head, size_t n) {
  if (n >= 4 && std::memcmp(head, "ftrt", 4) == 0) return EngineKind::TensorRTPlan;
  if (n >= 8 && std::memcmp(head + 4, rfb::EngineIdentifier(), 4) == 0) return EngineKind::Reference;
  return EngineKind::Unknown;
}

namespace {

/// Every execute runs every step over its bindings, so the step count bounds
/// the time one execute may take per element; trtx's writers emit a handful
/// (fixtures/trt.ts, python-bridge/trtx_bridge/standin_lowering). Stricter than the
/// flatbuffer verifier's own limit of 1,000,000 tables.
constexpr flatbuffers::uoffset_t kMaxSteps = 4096;

Failure format_error(const std::string& where, const std::string& msg) {
  return fail(Error::EngineFormat, where + ".engine", msg);
}

Status check_binding(uint32_t index, const std::vector<bool>& is_input, int want /* 1 input, 0 output, -1 any */,
                     const std::string& where, const std::string& what) {
  if (index >= is_input.size()) {
    return format_error(where, what + " names binding " + std::to_string(index) + " but the blob has " +
                                   std::to_string(is_input.size()) + " io bindings");
  }
  if (want == 1 && !is_input[index]) {
    return format_error(where,
                        what + " must name an input binding; binding " + std::to_string(index) + " is an output");
  }
  if (want == 0 && is_input[index]) {
    return format_error(where,
                        what + " must name an output binding; binding " + std::to_string(index) + " is an input");
  }
  return ok_status();
}

}  // namespace

Result<std::shared_ptr<AlignedBytes>> AlignedBytes::copy_of(const uint8_t* data, size_t size) {
  // aligned_alloc wants a multiple of the alignment; one byte at least, so an
  // empty copy still has an address.
  if (size > SIZE_MAX - 2 * kAlignment) return fail(Error::MemoryAllocationFailed, "engine.program", "too large");
  const size_t rounded = (size / kAlignment + 1) * kAlignment;
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, rounded));
  if (p == nullptr) {
    return fail(Error::MemoryAllocationFailed, "engine.program",
                "cannot allocate " + std::to_string(rounded) + " bytes for the engine's program");
  }
  if (size != 0) std::memcpy(p, data, size);
  std::memset(p + size, 0, rounded - size);
  return std::shared_ptr<AlignedBytes>(new AlignedBytes(p, size));
}

AlignedBytes::~AlignedBytes() { std::free(data_); }

Result<uint64_t> declared_scratch_bytes(const StandinEngine& engine, const std::vector<BindingView>& b,
                                        const std::string& where) {
  uint64_t declared = engine.scratch_base;
  if (engine.scratch_per_unit == 0) return declared;
  if (engine.scratch_unit_binding >= b.size()) {
    return fail(Error::DelegateExecutionFailed, where + ".engine.scratch",
                "unit_binding " + std::to_string(engine.scratch_unit_binding) + " but " + std::to_string(b.size()) +
                    " bindings are bound");
  }
  const BindingView& u = b[engine.scratch_unit_binding];
  if (engine.scratch_unit_dim >= u.sizes.size()) {
    return fail(Error::DelegateExecutionFailed, where + ".engine.scratch",
                "unit_dim " + std::to_string(engine.scratch_unit_dim) + " but binding '" + u.name + "' has rank " +
                    std::to_string(u.sizes.size()));
  }
  auto extent = static_cast<uint64_t>(u.sizes[engine.scratch_unit_dim]);
  if (extent != 0 && engine.scratch_per_unit > (UINT64_MAX - declared) / extent) {
    return fail(Error::DelegateExecutionFailed, where + ".engine.scratch", "scratch need overflows 64 bits");
  }
  return declared + engine.scratch_per_unit * extent;
}

namespace {

// One synthetic step (`at` names it): its operation and the bindings it reads
// and writes, each checked against the engine's inputs and outputs.
Result<StandinStep> read_step(const rfb::Step* step, const std::string& at, const std::vector<bool>& is_input,
                              const std::string& where) {
  StandinStep r;
  if (step->op() == nullptr) return format_error(where, at + " has no operation");
  switch (step->op_type()) {
    case rfb::Op::Affine: {
      const auto* op = step->op_as_Affine();
      r.kind = StandinStep::Kind::Affine;
      r.a = op->input();
      r.b = op->output();
      r.scale = op->scale();
      r.bias = op->bias();
      TRTX_CHECK_OK(check_binding(r.a, is_input, -1, where, at + " Affine.input"));
      TRTX_CHECK_OK(check_binding(r.b, is_input, 0, where, at + " Affine.output"));
      break;
    }
    case rfb::Op::KvWrite: {
      const auto* op = step->op_as_KvWrite();
      r.kind = StandinStep::Kind::KvWrite;
      r.a = op->cache();
      r.b = op->position();
      r.c = op->source();
      r.seq_dim = op->seq_dim();
      r.salt = op->salt();
      TRTX_CHECK_OK(check_binding(r.a, is_input, 1, where, at + " KvWrite.cache"));
      TRTX_CHECK_OK(check_binding(r.b, is_input, 1, where, at + " KvWrite.position"));
      TRTX_CHECK_OK(check_binding(r.c, is_input, -1, where, at + " KvWrite.source"));
      break;
    }
    case rfb::Op::Attend: {
      const auto* op = step->op_as_Attend();
      r.kind = StandinStep::Kind::Attend;
      if (op->caches() == nullptr || op->caches()->size() == 0) {
        return format_error(where, at + " Attend lists no caches");
      }
      if (op->caches()->size() > static_cast<flatbuffers::uoffset_t>(AttendPlan::kMaxCaches)) {
        return format_error(where,
                            at + " Attend lists more than " + std::to_string(AttendPlan::kMaxCaches) + " caches");
      }
      for (flatbuffers::uoffset_t k = 0; k < op->caches()->size(); ++k) {
        r.caches.push_back(op->caches()->Get(k));
        TRTX_CHECK_OK(
            check_binding(r.caches.back(), is_input, 1, where, at + " Attend.caches[" + std::to_string(k) + "]"));
      }
      r.a = op->query();
      r.b = op->output();
      TRTX_CHECK_OK(check_binding(r.a, is_input, -1, where, at + " Attend.query"));
      TRTX_CHECK_OK(check_binding(r.b, is_input, 0, where, at + " Attend.output"));
      break;
    }
    case rfb::Op::RingShift: {
      const auto* op = step->op_as_RingShift();
      r.kind = StandinStep::Kind::RingShift;
      r.a = op->state_in();
      r.b = op->source();
      r.c = op->state_out();
      TRTX_CHECK_OK(check_binding(r.a, is_input, 1, where, at + " RingShift.state_in"));
      TRTX_CHECK_OK(check_binding(r.b, is_input, -1, where, at + " RingShift.source"));
      TRTX_CHECK_OK(check_binding(r.c, is_input, 0, where, at + " RingShift.state_out"));
      break;
    }
    default:
      return format_error(where, at + " has no operation or one this runner does not know (" +
                                     std::to_string(static_cast<int>(step->op_type())) + ")");
  }
  return r;
}

}  // namespace

Result<StandinEngine> parse_standin_engine(const uint8_t* data, size_t size, const std::vector<bool>& is_input,
                                           const std::string& where) {
  if (size < 8 || !rfb::EngineBufferHasIdentifier(data)) {
    return format_error(where, "engine bytes are not a trtx reference engine (identifier TRXE)");
  }
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    return format_error(where, "engine bytes are not 8-byte aligned");
  }
  flatbuffers::Verifier verifier(data, size);
  if (!rfb::VerifyEngineBuffer(verifier)) {
    return format_error(where, "reference engine fails verification against its schema: truncated or corrupt");
  }
  const rfb::Engine* e = rfb::GetEngine(data);
  const uint32_t version = e->version();
  if (version != kSyntheticVersion && version != kProgramVersion && version != kExternalWeightsVersion) {
    return format_error(where, "reference engine version " + std::to_string(version) +
                                   " is not one this runner knows (it reads versions 1, synthetic, 2, a program, and "
                                   "3, a program whose weights are the program's named data)");
  }
  const bool has_program = version != kSyntheticVersion;
  const size_t n_steps = e->steps() != nullptr ? e->steps()->size() : 0;
  const size_t n_program = e->program() != nullptr ? e->program()->size() : 0;
  if (!has_program && n_program != 0) {
    return format_error(where, "reference engine version 1 (synthetic steps) carries a " + std::to_string(n_program) +
                                   "-byte program; only versions 2 and 3 may");
  }
  const std::string v = "reference engine version " + std::to_string(version);
  if (has_program && n_program == 0) {
    return format_error(where, v + " has no program (the partition's ExecuTorch program)");
  }
  if (has_program && n_steps != 0) {
    return format_error(where, v + " carries " + std::to_string(n_steps) + " synthetic steps; a version-" +
                                   std::to_string(version) + " engine computes its program only");
  }
  StandinEngine out;
  out.version = version;
  if (has_program) {
    // The program is copied into aligned memory of the engine's own: the
    // processed bytes go back to ExecuTorch when init returns. A version-3
    // program is the graph only (its weights are the outer program's named
    // data), so this copies no weight.
    TRTX_ASSIGN_OR_RETURN(out.program, AlignedBytes::copy_of(e->program()->data(), n_program));
  }
  out.streamable_weight_bytes = e->streamable_weight_bytes();
  out.weight_streaming = e->weight_streaming();
  if (const auto* s = e->scratch()) {
    out.scratch_base = s->base_bytes();
    out.scratch_per_unit = s->per_unit_bytes();
    out.scratch_unit_binding = s->unit_binding();
    out.scratch_unit_dim = s->unit_dim();
    if (out.scratch_per_unit != 0) {
      TRTX_CHECK_OK(check_binding(out.scratch_unit_binding, is_input, -1, where, "scratch.unit_binding"));
    }
  }
  if (e->steps() != nullptr && e->steps()->size() > kMaxSteps) {
    return format_error(where, "reference engine has " + std::to_string(e->steps()->size()) +
                                   " steps; this runner runs at most " + std::to_string(kMaxSteps));
  }
  if (e->steps() != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < e->steps()->size(); ++i) {
      const rfb::Step* step = e->steps()->Get(i);
      std::string at = "steps[" + std::to_string(i) + "]";
      TRTX_ASSIGN_OR_RETURN(StandinStep r, read_step(step, at, is_input, where));
      out.steps.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace trtx::engine
