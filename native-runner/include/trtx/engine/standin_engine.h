// The trtx reference engine (schemas/reference_engine.fbs, identifier TRXE):
// what stands where a TensorRT plan stands in a real program, so the
// delegate contract (binding, aliasing, elision, streams, scratch, budgets)
// runs end to end without TensorRT. Version 1 is synthetic: a few
// deterministic steps over the bindings (not the model), run on the CPU or by
// CUDA kernels. Version 2 carries the partition itself as an ExecuTorch
// program, run by program_executor.h (docs/reference-lowering.md section 1).
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

/// Version 1: synthetic steps. Version 2: the partition as an ExecuTorch
/// program, weights included. Version 3: the same program with its constants
/// EXTERNAL, their bytes in the outer program's named data
/// (schemas/reference_engine.fbs, docs/reference-lowering.md section 1).
constexpr uint32_t kSyntheticVersion = 1;
constexpr uint32_t kProgramVersion = 2;
constexpr uint32_t kExternalWeightsVersion = 3;

/// What an engine's bytes are.
enum class EngineKind { Reference, TensorRTPlan, Unknown };

/// Classifies engine bytes from their first 8: a TensorRT plan starts with
/// "ftrt" (Torch-TensorRT's runtime tells a raw plan by that prefix); a
/// reference engine carries the flatbuffer identifier "TRXE" at byte 4.
EngineKind classify_engine(const uint8_t* head, size_t n);

struct StandinStep {
  enum class Kind { Affine, KvWrite, Attend, RingShift } kind = Kind::Affine;
  // Binding indices; meaning per kind (see the schema).
  uint32_t a = 0, b = 0, c = 0;
  std::vector<uint32_t> caches;  // Attend
  uint32_t seq_dim = 0;          // KvWrite
  float scale = 1.0f, bias = 0.0f, salt = 0.5f;
};

/// Owned bytes at a 64-byte aligned address. A version-2 engine's program is
/// copied into one: ExecuTorch's BufferDataLoader hands out pointers into it
/// (extension/data_loader/buffer_data_loader.h), the program's flatbuffer
/// verifier and its constant tensors need aligned data, and the blob keeps the
/// engine only 16-aligned (docs/file-format.md).
class AlignedBytes {
 public:
  static constexpr size_t kAlignment = 64;
  static Result<std::shared_ptr<AlignedBytes>> copy_of(const uint8_t* data, size_t size);
  ~AlignedBytes();
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  AlignedBytes(uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t* data_;
  size_t size_;
};

struct StandinEngine {
  /// 1: synthetic steps; 2: an ExecuTorch program (`program`); 3: a program
  /// whose weights are the outer program's named data.
  uint32_t version = 1;
  std::vector<StandinStep> steps;
  /// Versions 2 and 3: the whole .pte, shared by copies of the engine.
  std::shared_ptr<const AlignedBytes> program;
  uint64_t scratch_base = 0;
  uint64_t scratch_per_unit = 0;
  uint32_t scratch_unit_binding = 0;
  uint32_t scratch_unit_dim = 0;
  uint64_t streamable_weight_bytes = 0;
  bool weight_streaming = false;
};

/// Verifies the engine flatbuffer, refuses unknown versions and checks every
/// binding index against `binding_is_input` (the blob's io_bindings). Reads
/// version 1 (steps, no program) and versions 2 and 3 (a program, no steps);
/// any other combination is EngineFormat at `where`.engine.
Result<StandinEngine> parse_standin_engine(const uint8_t* data, size_t size, const std::vector<bool>& binding_is_input,
                                           const std::string& where);

/// The activation scratch the engine declares for these bindings (its
/// ScratchNeed: base + per_unit * the unit binding's extent), as both
/// executors compute it.
Result<uint64_t> declared_scratch_bytes(const StandinEngine& engine, const std::vector<BindingView>& bindings,
                                        const std::string& where);

/// A version-1 (synthetic) executor for the device context's target (CPU or
/// CUDA).
Result<std::unique_ptr<EngineExecutor>> make_standin_executor(StandinEngine engine,
                                                              const runtime::DeviceContext& device);

}  // namespace trtx::engine
