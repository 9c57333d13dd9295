// The runner's device memory for one `trtx-runner run`: the warm
// default pool (on unless --cold-pool) and where each TensorRT delegate gets
// its activation scratch (private per engine, or with --shared-scratch one
// reclaiming buffer per device). It owns the units of src/memory/ and turns
// what they record into the report's `memory` section (internal).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "json_writer.h"
#include "trtx/memory/runtime_scratch_provider.h"
#include "trtx/memory/warm_pool.h"
#include "trtx/runtime/cuda_api.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"
#include "trtx/runtime/scratch_provider.h"

namespace trtx::integration {

struct RunnerMemoryOptions {
  bool cold_pool = false;
  bool shared_scratch = false;
};

/// Bytes held by every private scratch of the run, summed: what --shared-scratch
/// is compared against.
struct PrivateScratchTally {
  std::mutex mutex;
  uint64_t current_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t live_buffers = 0;
  uint64_t peak_buffers = 0;
  uint64_t providers = 0;
};

class RunnerMemory {
 public:
  /// The runner's own wiring: on Target::Cuda in a CUDA build the process's
  /// CUDA runtime (cuda::runtime_api()) for the pool and the shared scratch;
  /// otherwise no pool.
  static std::unique_ptr<RunnerMemory> create(runtime::Target target, RunnerMemoryOptions options);

  /// `api`: the CUDA runtime whose device pool is kept warm and which serves
  /// the shared scratch on Target::Cuda, or null when there is no pool to
  /// touch (a build without CUDA, or a run on the CPU); `unavailable` says
  /// why. It must outlive this. On Target::Host the shared scratch is
  /// cuda::host_api()'s.
  RunnerMemory(runtime::Target target, RunnerMemoryOptions options, cuda::Api* api, std::string unavailable);
  ~RunnerMemory();
  RunnerMemory(const RunnerMemory&) = delete;
  RunnerMemory& operator=(const RunnerMemory&) = delete;

  /// The program's memory reached `devices`: keep their pools warm until
  /// teardown(). Called again for a device not seen before (a program across
  /// devices), it raises that one too; a device already held is left alone.
  /// Never fails the run (a failed device is reported).
  void program_loaded(const std::vector<int>& devices);

  /// The factory every method load passes to its delegates. With shared
  /// scratch the pool freezes its floor after `delegate_calls_per_step`
  /// executes on a device (one program step), so a steady program never
  /// shrinks and regrows inside a step.
  runtime::ScratchProviderFactory scratch_factory(uint64_t delegate_calls_per_step);

  /// After every method is closed: frees the shared scratch, then hands the
  /// pool back (restore and trim), so the trim returns the scratch too. A
  /// failure to free scratch is returned; a pool that could not be restored is
  /// only reported.
  Status teardown();

  /// The report's `memory.pool` and `memory.scratch` members.
  void write_sections(JsonWriter& w) const;

  uint64_t pool_api_calls() const { return warm_ ? warm_->report().apiCalls : 0; }

 private:
  // The steps of write_sections: the pool member, then the scratch member of
  // private scratch (or shared scratch asked for but never built) or shared.
  void write_pool(JsonWriter& w) const;
  void write_private_scratch(JsonWriter& w) const;
  void write_shared_scratch(JsonWriter& w) const;

  const runtime::Target target_;
  const RunnerMemoryOptions options_;
  const std::string unavailable_;
  std::unique_ptr<memory::WarmPool> warm_;
  int acquisitions_ = 0;  // warm pool acquires to release at teardown
  std::vector<int> devices_;
  std::vector<memory::PoolState> state_at_load_;
  cuda::Api* api_;
  uint64_t warmup_executes_ = 0;
  std::unique_ptr<memory::SharedScratchRegistry> shared_;
  struct SharedSnapshot {
    std::vector<memory::ScratchDeviceStats> devices;
    std::vector<memory::CapacityEvent> events;
    uint64_t handoff_failures = 0;
  };
  SharedSnapshot snapshot_shared() const;
  // Taken at teardown, before the buffers are freed: the report shows the
  // capacity the run ended with.
  std::optional<SharedSnapshot> shared_final_;
  bool torn_down_ = false;
  std::shared_ptr<PrivateScratchTally> tally_ = std::make_shared<PrivateScratchTally>();
};

}  // namespace trtx::integration
