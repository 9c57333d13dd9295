// Builds ET12 programs, TensorRT blobs and reference engines in memory for
// the unit tests (the generated flatbuffers builders do the encoding).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trtx/runtime/scalar_type.h"

namespace trtx::test {

struct TensorSpec {
  ScalarType dtype = ScalarType::Float;
  std::vector<int32_t> sizes;
  std::optional<std::pair<uint32_t, uint64_t>> alloc;  // memory_id, offset
  uint32_t data_buffer_idx = 0;
  bool cuda = false;  // extra_tensor_info.device_type
  int device_index = 0;
  std::string fqn;
};

struct ValueSpec {
  enum class Kind { Null, Int, Bool, Double, Tensor } kind = Kind::Null;
  int64_t i = 0;
  bool b = false;
  double d = 0;
  TensorSpec tensor;

  static ValueSpec null() { return ValueSpec{}; }
  static ValueSpec integer(int64_t v) {
    ValueSpec s;
    s.kind = Kind::Int;
    s.i = v;
    return s;
  }
  static ValueSpec boolean(bool v) {
    ValueSpec s;
    s.kind = Kind::Bool;
    s.b = v;
    return s;
  }
  static ValueSpec of(TensorSpec t) {
    ValueSpec s;
    s.kind = Kind::Tensor;
    s.tensor = std::move(t);
    return s;
  }
};

struct InstrSpec {
  enum class Kind { Kernel, Delegate, Move, JumpFalse, Free } kind = Kind::Kernel;
  int32_t index = 0;  // op index / delegate index
  std::vector<int32_t> args;
  int32_t a = 0, b = 0;
  static InstrSpec kernel(int32_t op, std::vector<int32_t> args) {
    InstrSpec s;
    s.index = op;
    s.args = std::move(args);
    return s;
  }
  static InstrSpec delegate(int32_t d, std::vector<int32_t> args) {
    InstrSpec s;
    s.kind = Kind::Delegate;
    s.index = d;
    s.args = std::move(args);
    return s;
  }
};

struct DelegateSpec {
  std::string id = "TensorRTBackend";
  uint32_t inline_index = 0;
  std::vector<std::pair<std::string, std::string>> compile_specs;
};

struct PlanSpec {
  std::string name = "forward";
  std::vector<ValueSpec> values;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<InstrSpec> instructions;
  std::vector<std::pair<std::string, std::string>> operators;  // name, overload
  std::vector<DelegateSpec> delegates;
  std::vector<int64_t> arena_sizes{0};
  std::vector<int32_t> cuda_arenas;  // buffer indices placed on cuda:0
};

struct ProgramSpec {
  std::vector<PlanSpec> plans;
  std::vector<std::vector<uint8_t>> constant_buffers;  // legacy inline constants (index 0 is the placeholder)
  std::vector<std::vector<uint8_t>> inline_blobs;
};

std::vector<uint8_t> build_program(const ProgramSpec& spec);

/// A TensorRT blob: header, metadata JSON, engine at a 16-aligned offset.
std::vector<uint8_t> make_trt_blob(const std::string& magic, const std::string& metadata,
                                   const std::vector<uint8_t>& engine);

struct RefStepSpec {
  enum class Kind { Affine, KvWrite, Attend, RingShift } kind = Kind::Affine;
  uint32_t a = 0, b = 0, c = 0;
  std::vector<uint32_t> caches;
  uint32_t seq_dim = 0;
  float scale = 1.0f, bias = 0.0f, salt = 0.5f;
};

struct RefEngineSpec {
  uint32_t version = 1;
  std::vector<RefStepSpec> steps;
  uint64_t scratch_base = 0, scratch_per_unit = 0;
  uint32_t scratch_unit_binding = 0, scratch_unit_dim = 0;
  uint64_t streamable = 0;
  bool streaming = false;
};

std::vector<uint8_t> build_reference_engine(const RefEngineSpec& spec);

/// The KV decode fixture: a delegate writing a [1,4,8] float cache at the
/// decode position (KvWrite), attending over it (Attend -> logits [1,8]),
/// and ring-shifting a [1,4] conv_state that is copied back. Staged: the
/// cache is host-planned and staged in/out around the delegate. Zero-copy:
/// the cache is planned in a CUDA arena, is the delegate's argument, and its
/// aliased output and copy-back are gone.
struct KvOptions {
  bool zero_copy = false;
  bool stamp_spec = true;       // zero_copy_kv on the zero-copy delegate
  std::string budget_spec;      // weight_streaming_budget, empty: absent
  uint64_t streamable = 4096;
  bool streaming = true;
  int drop_delegate_args = 0;   // remove trailing args (arity tests)
};
ProgramSpec make_kv_program(const KvOptions& options);

}  // namespace trtx::test
