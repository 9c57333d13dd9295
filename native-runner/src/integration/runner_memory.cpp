#include "runner_memory.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "trtx/runtime/json.h"

namespace trtx::integration {

namespace {

// A PrivateScratch that adds what it holds to the run's tally.
class TrackedPrivateScratch final : public runtime::ScratchProvider {
 public:
  explicit TrackedPrivateScratch(std::shared_ptr<PrivateScratchTally> tally) : tally_(std::move(tally)) {
    std::lock_guard<std::mutex> lock(tally_->mutex);
    ++tally_->providers;
  }
  ~TrackedPrivateScratch() override {
    const uint64_t held = inner_.capacity();
    std::lock_guard<std::mutex> lock(tally_->mutex);
    tally_->current_bytes -= held;
    if (held > 0) --tally_->live_buffers;
  }

  Result<void*> acquire(const runtime::DeviceContext& device, size_t bytes, runtime::StreamRef stream) override {
    const uint64_t before = inner_.capacity();
    Result<void*> got = inner_.acquire(device, bytes, stream);
    const uint64_t after = inner_.capacity();
    if (after != before) {
      std::lock_guard<std::mutex> lock(tally_->mutex);
      tally_->current_bytes = tally_->current_bytes - before + after;
      if (before == 0 && after > 0) ++tally_->live_buffers;
      tally_->peak_bytes = std::max(tally_->peak_bytes, tally_->current_bytes);
      tally_->peak_buffers = std::max(tally_->peak_buffers, tally_->live_buffers);
    }
    return got;
  }
  void release_after(runtime::EventRef event) override { inner_.release_after(event); }
  size_t capacity() const override { return inner_.capacity(); }

 private:
  std::shared_ptr<PrivateScratchTally> tally_;
  runtime::PrivateScratch inner_;
};

const char* kMaxThreshold = "18446744073709551615";

void write_status_or_null(JsonWriter& w, const char* key, const Status& s) {
  if (s.ok()) {
    w.field_null(key);
    return;
  }
  w.key(key);
  w.begin_object();
  w.field("code", memory::report_code(s.error()));
  w.field("message", memory::describe(s.failure()));
  w.end_object();
}

}  // namespace

std::unique_ptr<RunnerMemory> RunnerMemory::create(runtime::Target target, RunnerMemoryOptions options) {
  cuda::Api& api = cuda::runtime_api();
  if (!api.built()) {
    return std::unique_ptr<RunnerMemory>(
        new RunnerMemory(target, options, nullptr, "this trtx-runner was built without CUDA"));
  }
  if (target != runtime::Target::Cuda) {
    return std::unique_ptr<RunnerMemory>(
        new RunnerMemory(target, options, nullptr, "the run is on the CPU: there is no device pool"));
  }
  return std::unique_ptr<RunnerMemory>(new RunnerMemory(target, options, &api, std::string()));
}

RunnerMemory::RunnerMemory(runtime::Target target, RunnerMemoryOptions options, cuda::Api* api, std::string unavailable)
    : target_(target), options_(options), unavailable_(std::move(unavailable)), api_(api) {
  if (api_ != nullptr) {
    warm_ = std::make_unique<memory::WarmPool>(*api_, memory::WarmPoolOptions{!options_.cold_pool});
  }
}

RunnerMemory::~RunnerMemory() {
  if (!torn_down_) (void)teardown();
}

void RunnerMemory::program_loaded(const std::vector<int>& devices) {
  if (!warm_) return;
  // The allocator reports each device as its first arena is allocated, so a
  // program across two devices arrives here twice: every new device is
  // raised, each under an acquire the teardown releases; the last release
  // restores and trims every device raised (warm_pool.h).
  std::vector<int> fresh;
  for (int d : devices) {
    if (std::find(devices_.begin(), devices_.end(), d) == devices_.end() &&
        std::find(fresh.begin(), fresh.end(), d) == fresh.end()) {
      fresh.push_back(d);
    }
  }
  if (fresh.empty()) return;
  const std::vector<memory::PoolState> states = warm_->acquire(fresh);
  ++acquisitions_;
  devices_.insert(devices_.end(), fresh.begin(), fresh.end());
  state_at_load_.insert(state_at_load_.end(), states.begin(), states.end());
}

runtime::ScratchProviderFactory RunnerMemory::scratch_factory(uint64_t delegate_calls_per_step) {
  if (!options_.shared_scratch) {
    std::shared_ptr<PrivateScratchTally> tally = tally_;
    return [tally](const runtime::DeviceContext&, const std::string&) -> std::shared_ptr<runtime::ScratchProvider> {
      return std::make_shared<TrackedPrivateScratch>(tally);
    };
  }
  if (!shared_) {
    memory::SharedScratchOptions so;
    so.warmupExecutes = std::max<uint64_t>(1, delegate_calls_per_step);
    warmup_executes_ = so.warmupExecutes;
    shared_ = std::make_unique<memory::SharedScratchRegistry>(target_, so, api_);
  }
  return shared_->factory();
}

RunnerMemory::SharedSnapshot RunnerMemory::snapshot_shared() const {
  SharedSnapshot snap;
  if (!shared_) return snap;
  // The registry's report is the one place that lists its devices and the
  // hand-off failures its providers saw.
  auto parsed = json::parse(shared_->reportJson());
  if (parsed.ok()) {
    if (const json::Value* devices = parsed->find("devices"); devices != nullptr && devices->is(json::Type::Array)) {
      for (const json::Value& d : devices->array) {
        const json::Value* index = d.find("device");
        if (index != nullptr && index->int_ok)
          snap.devices.push_back(shared_->pool().stats(static_cast<int>(index->integer)));
      }
    }
    if (const json::Value* n = parsed->find("handoff_failures"); n != nullptr && n->int_ok && n->integer >= 0) {
      snap.handoff_failures = static_cast<uint64_t>(n->integer);
    }
  }
  snap.events = shared_->pool().capacityEvents();
  return snap;
}

Status RunnerMemory::teardown() {
  if (torn_down_) return ok_status();
  torn_down_ = true;
  Status result = ok_status();
  if (shared_) {
    shared_final_ = snapshot_shared();
    Status freed = shared_->shutdown();
    if (!freed.ok()) result = std::move(freed);
  }
  // After the scratch is freed, so that the trim returns it to the driver. A
  // failure here costs nothing but the report line.
  if (warm_) {
    for (; acquisitions_ > 0; --acquisitions_) (void)warm_->release();
  }
  return result;
}

void RunnerMemory::write_sections(JsonWriter& w) const {
  write_pool(w);
  w.key("scratch");
  w.begin_object();
  if (!options_.shared_scratch || !shared_) {
    write_private_scratch(w);
  } else {
    write_shared_scratch(w);
  }
  w.end_object();
}

void RunnerMemory::write_pool(JsonWriter& w) const {
  w.key("pool");
  w.begin_object();
  if (!warm_) {
    w.field("mode", "unavailable");
    w.field("unavailable_reason", unavailable_);
  } else {
    w.field("mode", options_.cold_pool ? "cold" : "warm");
    w.field_null("unavailable_reason");
  }
  w.field("api_calls", pool_api_calls());
  w.key("devices");
  w.begin_array();
  if (warm_) {
    for (const memory::WarmPoolDeviceRecord& d : warm_->report().devices) {
      memory::PoolState at_load = d.state;
      for (size_t i = 0; i < devices_.size() && i < state_at_load_.size(); ++i) {
        if (devices_[i] == d.device) at_load = state_at_load_[i];
      }
      const bool ours = d.state == memory::PoolState::kRaised || d.state == memory::PoolState::kRestored;
      w.begin_object();
      w.field("device", d.device);
      w.field("state_at_load", memory::toString(at_load));
      w.field("state", memory::toString(d.state));
      if (ours) {
        w.field("previous_release_threshold", std::to_string(d.previousThreshold));
        w.field("raised_to", kMaxThreshold);
      } else {
        w.field_null("previous_release_threshold");
        w.field_null("raised_to");
      }
      w.field("restored", d.restored);
      w.field("trimmed", d.trimmed);
      write_status_or_null(w, "configure_error", d.configureStatus);
      write_status_or_null(w, "release_error", d.releaseStatus);
      w.end_object();
    }
  }
  w.end_array();
  w.end_object();
}

void RunnerMemory::write_private_scratch(JsonWriter& w) const {
  PrivateScratchTally& t = *tally_;
  std::lock_guard<std::mutex> lock(t.mutex);
  // Shared scratch asked for but never built (the run stopped before any
  // method loaded) reports what was asked, holding nothing.
  w.field("mode", options_.shared_scratch ? "shared" : "private");
  w.field("reclaim", options_.shared_scratch);
  w.field_null("warmup_executes");
  w.field_null("shrink_after");
  w.field("peak_bytes", t.peak_bytes);
  w.field("peak_buffers", t.peak_buffers);
  w.key("devices");
  w.begin_array();
  w.end_array();
  w.key("capacity_events");
  w.begin_array();
  w.end_array();
  w.field("handoff_failures", uint64_t{0});
}

void RunnerMemory::write_shared_scratch(JsonWriter& w) const {
  const SharedSnapshot snap = shared_final_.has_value() ? *shared_final_ : snapshot_shared();
  uint64_t peak = 0, buffers = 0;
  for (const auto& d : snap.devices) {
    peak += d.peakCapacity;
    if (d.peakCapacity > 0) ++buffers;
  }
  w.field("mode", "shared");
  w.field("reclaim", true);
  w.field("warmup_executes", warmup_executes_);
  w.field("shrink_after", uint64_t{memory::SharedScratchOptions().shrinkAfter});
  w.field("peak_bytes", peak);
  w.field("peak_buffers", buffers);
  w.key("devices");
  w.begin_array();
  for (const auto& d : snap.devices) {
    w.begin_object();
    w.field("device", d.device);
    w.field("capacity", uint64_t{d.capacity});
    w.field("peak_capacity", uint64_t{d.peakCapacity});
    if (d.floorFrozen) {
      w.field("floor", uint64_t{d.floor});
    } else {
      w.field_null("floor");
    }
    w.field("executes", d.executes);
    w.end_object();
  }
  w.end_array();
  w.key("capacity_events");
  w.begin_array();
  for (const auto& e : snap.events) {
    w.begin_object();
    w.field("device", e.device);
    w.field("execute_index", e.executeIndex);
    w.field("from", uint64_t{e.from});
    w.field("to", uint64_t{e.to});
    w.field("reason", memory::toString(e.reason));
    if (e.detail.empty()) {
      w.field_null("detail");
    } else {
      w.field("detail", e.detail);
    }
    w.end_object();
  }
  w.end_array();
  w.field("handoff_failures", snap.handoff_failures);
}

}  // namespace trtx::integration
