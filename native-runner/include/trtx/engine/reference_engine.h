// The trtx reference engine (schemas/reference_engine.fbs, identifier TRXE):
// a small deterministic computation over a blob's io bindings that stands
// where a TensorRT plan stands in a real program, so the delegate contract
// (binding, aliasing, elision, streams, scratch, budgets) runs end to end
// without TensorRT. It is executed on the CPU or by CUDA kernels; the same
// inputs give the same bits on one device, whatever the elision mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trtx/engine/engine_executor.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::engine {

/// What an engine's bytes are.
enum class EngineKind { Reference, TensorRTPlan, Unknown };

/// Classifies engine bytes from their first 8: a TensorRT plan starts with
/// "ftrt" (Torch-TensorRT's runtime tells a raw plan by that prefix); a
/// reference engine carries the flatbuffer identifier "TRXE" at byte 4.
EngineKind classify_engine(const uint8_t* head, size_t n);

struct RefStep {
  enum class Kind { Affine, KvWrite, Attend, RingShift } kind = Kind::Affine;
  // Binding indices; meaning per kind (see the schema).
  uint32_t a = 0, b = 0, c = 0;
  std::vector<uint32_t> caches;  // Attend
  uint32_t seq_dim = 0;          // KvWrite
  float scale = 1.0f, bias = 0.0f, salt = 0.5f;
};

struct RefEngine {
  std::vector<RefStep> steps;
  uint64_t scratch_base = 0;
  uint64_t scratch_per_unit = 0;
  uint32_t scratch_unit_binding = 0;
  uint32_t scratch_unit_dim = 0;
  uint64_t streamable_weight_bytes = 0;
  bool weight_streaming = false;
};

/// Verifies the engine flatbuffer, refuses unknown versions and checks every
/// binding index against `binding_is_input` (the blob's io_bindings).
Result<RefEngine> parse_reference_engine(const uint8_t* data, size_t size, const std::vector<bool>& binding_is_input,
                                         const std::string& where);

/// An executor for the device context's target (CPU or CUDA).
Result<std::unique_ptr<EngineExecutor>> make_reference_executor(RefEngine engine, const runtime::DeviceContext& device);

}  // namespace trtx::engine
