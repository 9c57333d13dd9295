// What one `trtx-runner run` found, and its JSON rendering
// (schemas/runner-report.schema.json, "trtx.runner-report/2") (internal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run_command.h"
#include "runner_memory.h"
#include "trtx/backend/backend.h"
#include "trtx/runtime/error.h"

namespace trtx::cli {

struct OutputRecord {
  int index = 0;
  std::string kind;  // tensor | int | double | bool | string | none
  bool is_tensor = false;
  std::string dtype;
  std::vector<int64_t> sizes;
  std::string placement;  // host | device (tensors)
  std::string digest;
};

struct BufferRecord {
  std::string name;
  std::string dtype;
  std::vector<int64_t> sizes;
  std::string placement;
  std::string digest;
};

struct DelegateStep {
  size_t index = 0;
  std::string elision;
  uint64_t syncs_performed = 0, syncs_skipped = 0, waits = 0;
  runtime::CopyCounters copies;
  runtime::CopyCounters engine_stand_in;  // inside the engine's enqueues (EngineExecutor::stand_in_copies)
};

/// What delegate `index` did in one step: its counters now less `before`
/// (null: it did not exist before the step).
DelegateStep delegate_step(size_t index, const backend::DelegateInfo& now, const backend::DelegateInfo* before);

struct StepRecord {
  int step = 0;
  double step_us = 0.0;  // the method's execute and its final synchronize
  std::vector<OutputRecord> outputs;
  std::vector<BufferRecord> buffers;
  runtime::CopyCounters copies;           // the program's staging: copy kernels and the delegates' own
  runtime::CopyCounters program_copies;   // the copy kernels alone (et_copy through the allocator)
  runtime::CopyCounters engine_stand_in;  // what the stand-in engines moved inside, summed over delegates
  std::vector<DelegateStep> delegates;
};

struct MethodRecord {
  std::string name;
  std::vector<backend::DelegateInfo> delegates;
  uint64_t initialised_buffers = 0;  // --init-device-buffers, per load
  std::vector<StepRecord> steps;
};

// Whose TensorRTBackend ran: the runner's own ("builtin") or a --backend-lib
// library's ("plugin", its path as given), and the ExecuTorch it was built
// against (empty: the runner's).
struct BackendRecord {
  std::string source = "builtin";
  std::string path;
  std::string executorch;
};

struct Report {
  BackendRecord backend;
  std::string program_path;
  uint64_t program_bytes = 0;
  std::vector<std::string> program_methods;
  std::string device_kind = "cpu";
  std::string device_name = "cpu";
  int device_index = -1;
  std::vector<MethodRecord> methods;
  std::vector<Failure> errors;
};

int exit_code_of(const Report& r);

std::string render_report(const Report& r, const RunOptions& o, int exit_code, const integration::RunnerMemory* memory);

/// Writes beside the target and renames, so a reader never sees half a
/// report; an empty path is stdout.
bool write_report_file(const std::string& path, const std::string& text);

}  // namespace trtx::cli
