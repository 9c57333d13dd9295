// What the trtx TensorRT delegate reports about each of its handles, and how
// a weight-streaming budget resolves for one engine (docs/file-format.md,
// docs/runtime-contracts.md). The backend itself is an ExecuTorch BackendInterface
// (tensorrt_backend.h); ExecuTorch loads, inits, executes and destroys it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trtx/aten/aten_program.h"
#include "trtx/runtime/device.h"

namespace trtx::backend {

/// How a budget was resolved for one engine (docs/runtime-contracts.md).
struct BudgetResolution {
  std::string source = "automatic";  // option | spec | automatic
  std::optional<uint64_t> requested;
  std::optional<uint64_t> effective;
  bool clamped = false;
  std::string ignored;  // why a requested budget does not apply; empty if it does
  bool streaming = false;
  uint64_t streamable_bytes = 0;
  // What the resolution means for each execute (TensorRT's
  // setWeightStreamingBudgetV2: the budget is the weight bytes kept on the
  // device): min(effective, streamable_bytes) stay resident, the rest is
  // streamed in every execute; an engine that does not stream keeps them all.
  uint64_t resident_bytes = 0;
  uint64_t streamed_bytes_per_execute = 0;
};

BudgetResolution resolve_budget(std::optional<uint64_t> option, std::optional<uint64_t> spec, bool engine_streams,
                                uint64_t streamable_bytes);

/// Everything a report says about one delegate handle; counters are totals
/// since init.
struct DelegateInfo {
  std::string method;
  size_t index = 0;  // the delegate's place among its method's delegates
  std::string backend_id;
  std::string engine;   // synthetic-cpu | synthetic-cuda | reference-program (EngineExecutor::kind)
  std::string kernels;  // aten-cpu | aten-cuda | executorch-cpu | synthetic-* (EngineExecutor::kernels)
  // Where the engine's weights are and what streaming copied (ATen's kernels).
  std::optional<aten_kernels::WeightPlacement> weights;
  int target_device = 0;
  std::string elision;  // staged | zero-copy | none; empty before the first execute
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> aliased_outputs;
  std::optional<std::vector<std::string>> zero_copy_kv;
  BudgetResolution budget;
  uint64_t scratch_bytes = 0;     // last enqueue's need
  uint64_t scratch_capacity = 0;  // what its provider holds
  uint64_t executes = 0;
  uint64_t syncs_performed = 0;
  uint64_t syncs_skipped = 0;
  uint64_t waits = 0;            // executes that waited on the previous enqueue's event
  uint64_t drains = 0;           // teardowns that waited on an enqueue still in flight
  runtime::CopyCounters copies;  // staging and reflect traffic of this delegate
  // What the stand-in engine moved inside its enqueues (EngineExecutor::
  // stand_in_copies): never part of `copies` or the program's traffic.
  runtime::CopyCounters engine_stand_in;
};

}  // namespace trtx::backend
