// The executor of a version-2 or version-3 reference engine: the partition Torch-TensorRT
// would take, lowered to an ExecuTorch program whose method "forward" takes
// the engine's input bindings in order and returns its output bindings in
// order (docs/reference-lowering.md section 1). It runs that program with
// ExecuTorch's own Program and Method on the CPU kernels the runner links,
// inside the delegate's execute (the program has no delegates, so the nested
// execution never re-enters a backend).
#pragma once

#include <executorch/runtime/core/named_data_map.h>

#include <memory>
#include <string>
#include <vector>

#include "trtx/engine/engine_executor.h"
#include "trtx/engine/standin_engine.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::engine {

/// The kind() of a program executor.
constexpr const char* kProgramExecutorKind = "reference-program";

/// Loads `engine.program` (version 2 or 3) for a delegate whose io bindings
/// have the roles `binding_is_input` (the blob's io_bindings). Version 3
/// resolves the program's EXTERNAL constants by key from `named_data`, the
/// outer program's named data map (BackendInitContext::get_named_data_map,
/// runtime/backend/backend_init_context.h), which must outlive the executor.
/// Refused at init, at `where`.engine: a program ExecuTorch will not load
/// (an operator without a kernel is OperatorMissing), one whose forward's
/// input or output count, or value kinds, differ from the bindings; version
/// 3 without a named data map, a constant whose key the map lacks or whose
/// entry is not its size (EngineFormat, naming the key). With `aten` the
/// program runs on ATen's kernels (trtx/aten/aten_program.h) on the device
/// context's target; otherwise on ExecuTorch's CPU kernels.
Result<std::unique_ptr<EngineExecutor>> make_program_executor(
    StandinEngine engine, const runtime::DeviceContext& device, const std::vector<bool>& binding_is_input,
    const std::string& where, const executorch::runtime::NamedDataMap* named_data = nullptr, bool aten = false);

}  // namespace trtx::engine
