// A run's memory set-up (internal): the runner's device memory (the warm
// pool and the delegates' scratch, runner_memory.h), the process's device
// allocator that ExecuTorch plans arenas through, and --caller-stream's
// streams, torn down in the order the pool needs.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "run_command.h"
#include "runner_memory.h"
#include "runner_module.h"
#include "trtx/et/caller_stream.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::cli {

class RunMemory {
 public:
  explicit RunMemory(const RunOptions& options) : options_(options) {}
  /// The caller streams go after teardown: the guards first, then the
  /// streams, each on its device.
  ~RunMemory();
  RunMemory(const RunMemory&) = delete;
  RunMemory& operator=(const RunMemory&) = delete;

  /// No device was chosen: nothing is set up, the report says why.
  void without_device();

  /// The pool and scratch of `device`'s target, and the process's device
  /// allocator configured for it (--arena-fill, the pool kept warm from the
  /// first arena a program plans on a device) and registered.
  void set_up(const runtime::DeviceContext& device);

  /// One caller stream per device the chosen methods plan memory on, and
  /// the run's own device (trtx/et/caller_stream.h); set before any method
  /// is loaded, so the arenas' poison fill and every copy are ordered on them.
  Status set_caller_streams(integration::RunnerModule& module, const std::vector<std::string>& methods);

  /// A step ends when every caller stream has drained.
  Status synchronize_caller_streams() const;

  runtime::ScratchProviderFactory scratch_factory(uint64_t delegate_calls_per_step) {
    return memory_->scratch_factory(delegate_calls_per_step);
  }

  /// After every method is closed: the scratch freed, the pool handed back.
  Status teardown() { return memory_ ? memory_->teardown() : ok_status(); }

  const integration::RunnerMemory* runner_memory() const { return memory_.get(); }

 private:
  const RunOptions& options_;
  runtime::Target target_ = runtime::Target::Host;
  int own_device_ = 0;
  std::unique_ptr<integration::RunnerMemory> memory_;
  std::vector<std::pair<int, runtime::StreamRef>> streams_;  // (device, caller stream)
  std::vector<std::unique_ptr<trtx::et::CallerStreamGuard>> guards_;
};

}  // namespace trtx::cli
