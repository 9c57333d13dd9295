// A reference engine's program run on ATen's kernels: the kernels eager
// PyTorch runs, from the libtorch the runner was built against, on the device
// the engine runs on (docs/reference-lowering.md section 1, "Kernel sets").
//
// The program is the partition's ExecuTorch program (version 2 or 3); this
// interprets its execution plan the way ExecuTorch's Method does
// (runtime/executor/method.cpp: values, a chain of KernelCall / MoveCall /
// JumpFalseCall / FreeCall instructions, memory-planned arenas) but calls each
// operator through ATen's dispatcher (c10::Dispatcher) instead of ExecuTorch's
// kernel registry, so a bfloat16 addmm is eager's addmm, and a CUDA tensor runs
// CUDA's kernel.
//
// This header includes neither ATen's nor ExecuTorch's headers: both ship a
// `c10` namespace of their own, so no translation unit includes the two
// (native-runner/CMakeLists.txt builds src/aten/ apart).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::aten_kernels {

/// True when this runner was built against libtorch (TRTX_LIBTORCH_DIR).
bool built();
/// True when that libtorch has CUDA and this runner its CUDA half.
bool cuda_built();

/// Whether a run on `target` uses ATen's kernels unless told otherwise: where
/// this runner has them for it (a CPU-only libtorch cannot read device memory).
bool default_for(runtime::Target target);

/// The kernel set's name in reports: "aten-cpu" or "aten-cuda".
const char* kernel_set(runtime::Target target);

/// One constant of the program: its plan value and where its bytes are.
struct ConstantRef {
  size_t value_index = 0;
  uint32_t buffer_index = 0;  // data_buffer_idx (inside the program); 0 for EXTERNAL
  std::string key;            // EXTERNAL: fully_qualified_name (the outer program's named data)
  uint64_t nbytes = 0;
};
/// Host bytes of a constant; they outlive the program (the loader's mapping).
struct ConstantBytes {
  const void* data = nullptr;
  uint64_t nbytes = 0;
};
using ConstantResolver = std::function<Result<ConstantBytes>(const ConstantRef&)>;

/// Where the weights are after place_weights, and what streaming moved.
struct WeightPlacement {
  // Of the weights the budget covers (version 3: the EXTERNAL ones, the
  // engine's streamable_weight_bytes; the program's own literals stay resident
  // and are not counted):
  uint64_t total_bytes = 0;                 // their bytes, once
  uint64_t resident_bytes = 0;              // kept in device memory (host target: in place)
  uint64_t streamed_bytes_per_execute = 0;  // copied in per execute, as placed
  uint64_t window_bytes = 0;                // the device memory the streamed weights are copied into
  uint64_t streamed_bytes = 0;              // counted: bytes actually copied, every execute so far
  uint64_t streamed_copies = 0;             // counted: copies issued
};

class Program {
 public:
  virtual ~Program() = default;

  /// Keeps weights in device memory up to `budget` bytes (in order of first
  /// use, each whole) and the rest in host memory (pinned on a GPU), copied
  /// per execute into a window just before the operator that reads them, as
  /// TensorRT's weight streaming does. No budget: every weight resident.
  virtual Status place_weights(std::optional<uint64_t> budget) = 0;

  /// Runs the method once on `stream` with the engine's bindings in the
  /// method's order: `inputs` are read in place, every output is written into
  /// its binding (an output bound to the memory of an input it updates, a KV
  /// cache, is updated in place). Device pointers on a CUDA target.
  /// The method's memory-planned arenas (its activations) are laid in
  /// `scratch` when they fit in `scratch_bytes` (the delegate's scratch, shared
  /// and reclaimed by the runner's pool), else in device memory of its own.
  virtual Status run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* scratch,
                     uint64_t scratch_bytes, runtime::StreamRef stream, const std::string& at) = 0;

  virtual WeightPlacement weights() const = 0;
  /// Output copies the engine made beyond a TensorRT engine's (an output it
  /// could not compute in its binding): device to device.
  virtual runtime::CopyCounters copies() const = 0;
  /// Whether the last run laid the activations in the delegate's scratch.
  virtual bool activations_in_scratch() const = 0;
};

/// Reads the plan of `method` in the program `pte` (the .pte bytes, its
/// flatbuffer at offset 0; ExecuTorch has verified them) and resolves each
/// operator in ATen's dispatcher. Refused at `at`: a delegate call
/// (EngineFormat), an operator neither ATen nor this interpreter has
/// (OperatorMissing, named), a value kind it cannot hold.
/// `internal_weights_stream`: the constants inside the program count against
/// the budget (version 2, whose weights are all inside); otherwise only the
/// EXTERNAL ones do (version 3: the engine's streamable_weight_bytes are
/// theirs), and the program's own literals stay resident.
Result<std::unique_ptr<Program>> load(const uint8_t* pte, size_t size, const std::string& method,
                                      const runtime::DeviceContext& device, const ConstantResolver& constants,
                                      bool internal_weights_stream, const std::string& at);

}  // namespace trtx::aten_kernels
