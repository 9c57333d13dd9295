// `trtx-runner run`: load a program with ExecuTorch's Module, run its methods
// for N steps with deterministic inputs, and build the report (internal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trtx/backend/tensorrt_backend.h"
#include "trtx/et/device_allocator.h"

namespace trtx::cli {

enum class DeviceChoice { Auto, Cpu, Cuda };

struct RunOptions {
  std::string program;
  std::vector<std::string> methods;  // empty: every method, in plan order
  int steps = 1;
  bool caller_stream = false;
  std::optional<uint64_t> budget;
  bool fresh_state = false;
  bool cold_pool = false;       // --cold-pool: leave the device pool's release threshold alone
  bool shared_scratch = false;  // --shared-scratch: one reclaiming scratch buffer per device
  DeviceChoice device = DeviceChoice::Auto;
  et::ArenaFill arena_fill = et::ArenaFill::Poison;  // --arena-fill poison|none
  bool init_device_buffers = false;                  // --init-device-buffers: zero device-resident buffers after load
  bool share_arenas = false;                         // --share-arenas: Module(share_memory_arenas = true)
  backend::TrtContract contract = backend::TrtContract::ZeroCopy;  // --trt-runtime zero-copy|stock
  bool minimal_verification =
      false;  // --verification minimal: Module's default (the runner's own validation still runs)
  std::optional<uint64_t> max_planned_bytes;  // --max-planned-bytes: default the machine's physical memory
  bool file_loader = false;  // --loader file: FileDataLoader (reads every segment into memory) instead of mmap
  std::string report_path;   // empty: stdout
  std::string inputs_path;   // --inputs FILE: recorded step inputs (TRXT) instead of the pattern
  std::string outputs_path;  // --outputs FILE: every output of every executed step (TRXT)
  std::string backend_lib;   // --backend-lib PATH: its TensorRTBackend instead of the runner's (backend_plugin.h)
  // --engine-kernels aten|executorch: what computes a version-2/3 engine;
  // default ATen's where the runner has libtorch.
  std::optional<bool> aten_kernels;
  bool progress = false;  // --progress: "trtx-runner progress: step N of S" on stderr after each step
};

/// Runs and writes the report; returns the process exit code.
int run_command(const RunOptions& options);

}  // namespace trtx::cli
