// CPU tests of scratch reclamation (the policy of NVIDIA/TensorRT-LLM#19051's
// WorkspaceShrinkPolicy; docs/runtime-contracts.md) on the shared pool: warm-up
// floor, shrink after the 3rd consecutive underfilled execute to
// max(floor, window max), what resets the count, and that shrinking never
// frees a buffer an enqueue may still read.
#include <cstdint>

#include "fake_cuda_api.h"
#include "support/check.h"
#include "trtx/memory/shared_scratch_pool.h"

using namespace trtx_test;
using trtx::memory::CapacityReason;
using trtx::memory::ScratchLease;
using trtx::memory::SharedScratchOptions;
using trtx::memory::SharedScratchPool;

namespace {
StreamHandle stream = reinterpret_cast<StreamHandle>(0x5);

// One execute: acquire, (the enqueue), hand-off. Returns the capacity it ran with.
std::size_t execute(SharedScratchPool& pool, std::size_t bytes, bool* ok = nullptr) {
  auto lease = pool.acquire(0, bytes, stream);
  if (ok) *ok = lease.ok();
  if (!lease.ok()) return 0;
  (void)pool.handOff(lease.get(), stream);
  return lease.get().capacity;
}
}  // namespace

TEST(floor_is_frozen_at_capacity_after_warmup) {
  FakeCudaApi fake(2);
  SharedScratchOptions options;
  options.warmupExecutes = 2;
  SharedScratchPool pool(fake, options);
  execute(pool, 100);
  CHECK(!pool.stats(0).floorFrozen);
  execute(pool, 300);
  CHECK(!pool.stats(0).floorFrozen);
  execute(pool, 50);  // the execute after warm-up freezes what warm-up reached
  CHECK(pool.stats(0).floorFrozen);
  CHECK_EQ(pool.stats(0).floor, 300u);
  execute(pool, 900);
  CHECK_EQ(pool.stats(0).floor, 300u);  // frozen: later growth does not move it
}

TEST(shrinks_exactly_after_the_third_underfilled_execute_to_window_max) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);  // warm-up 1, shrink after 3
  execute(pool, 16);             // warm-up: floor will be 16
  execute(pool, 1024);           // burst
  CHECK_EQ(pool.capacity(0), 1024u);
  execute(pool, 40);
  CHECK_EQ(pool.capacity(0), 1024u);
  execute(pool, 64);
  CHECK_EQ(pool.capacity(0), 1024u);
  std::size_t ranWith = execute(pool, 50);
  CHECK_EQ(pool.capacity(0), 64u);  // max(floor 16, window max 64)
  CHECK_EQ(ranWith, 64u);
  CHECK_EQ(fake.liveBytes(), 64u);
  auto events = pool.capacityEvents();
  CHECK(events.back().reason == CapacityReason::kShrink);
  CHECK_EQ(events.back().from, 1024u);
  CHECK_EQ(events.back().to, 64u);
  CHECK_EQ(events.back().executeIndex, 4u);
}

TEST(shrink_target_never_goes_below_the_floor) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 100);  // floor 100
  execute(pool, 1000);
  execute(pool, 10);
  execute(pool, 20);
  execute(pool, 30);
  CHECK_EQ(pool.capacity(0), 100u);
  CHECK(fake.violations.empty());
}

TEST(capacity_returns_to_the_floor_after_a_burst) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 64);
  for (int i = 0; i < 4; ++i) execute(pool, 4096 + i);
  for (int i = 0; i < 3; ++i) execute(pool, 64);  // exact floor need, but under capacity
  CHECK_EQ(pool.capacity(0), 64u);
  for (int i = 0; i < 10; ++i) execute(pool, 64);
  CHECK_EQ(pool.capacity(0), 64u);
  CHECK_EQ(pool.capacityEvents().size(), 6u);  // grow 64, 4 grows, 1 shrink
}

TEST(exact_fit_resets_the_count) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 10);
  execute(pool, 1000);
  execute(pool, 10);
  execute(pool, 10);
  execute(pool, 1000);  // exact fit
  execute(pool, 10);
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 1000u);
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 10u);
}

// Only an exact fit resets the count: one byte under the capacity is underfilled.
TEST(one_byte_under_the_capacity_counts_as_underfilled) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 16);    // warm-up: floor will be 16
  execute(pool, 1024);  // burst
  execute(pool, 1023);
  execute(pool, 1023);
  CHECK_EQ(pool.capacity(0), 1024u);
  execute(pool, 1023);
  CHECK_EQ(pool.capacity(0), 1023u);
}

TEST(growth_resets_the_count) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 10);
  execute(pool, 1000);
  execute(pool, 10);
  execute(pool, 10);
  execute(pool, 2000);  // growth
  execute(pool, 10);
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 2000u);
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 10u);
}

TEST(failure_resets_the_count) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 10);
  execute(pool, 1000);
  execute(pool, 10);
  execute(pool, 10);
  fake.failNextAllocations = 1;
  bool ok = true;
  execute(pool, 5000, &ok);  // failed growth
  CHECK(!ok);
  execute(pool, 10);
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 1000u);
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 10u);
}

TEST(window_max_is_of_the_current_window_only) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 10);
  execute(pool, 1000);
  execute(pool, 900);
  execute(pool, 1000);  // exact fit: the 900 leaves the window with the count
  execute(pool, 20);
  execute(pool, 30);
  execute(pool, 25);
  CHECK_EQ(pool.capacity(0), 30u);
}

TEST(no_shrink_during_warmup) {
  FakeCudaApi fake(2);
  SharedScratchOptions options;
  options.warmupExecutes = 5;
  SharedScratchPool pool(fake, options);
  execute(pool, 1000);
  execute(pool, 10);
  execute(pool, 10);
  execute(pool, 10);
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 1000u);
  // Floor frozen at 1000 now: nothing under it is ever reclaimed.
  for (int i = 0; i < 6; ++i) execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 1000u);
  CHECK_EQ(fake.count("free"), 0u);
}

TEST(shrink_allocates_the_smaller_buffer_then_drains_then_frees) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 10);
  ScratchLease big;
  {
    auto lease = pool.acquire(0, 1000, stream);
    big = lease.get();
    (void)pool.handOff(big, stream);
  }
  execute(pool, 10);
  execute(pool, 10);
  fake.clearCalls();
  EventHandle event = nullptr;
  {
    auto lease = pool.acquire(0, 10, stream);  // third underfilled
    CHECK(lease.ok());
    CHECK(lease.get().pointer != big.pointer);
    (void)pool.handOff(lease.get(), stream);
  }
  long allocAt = fake.indexOf("allocate");
  long syncAt = fake.indexOf("sync");
  long freeAt = fake.indexOf("free");
  CHECK(allocAt >= 0);
  CHECK(syncAt > allocAt);
  CHECK(freeAt > syncAt);
  CHECK(fake.calls()[freeAt].pointer == big.pointer);
  CHECK_EQ(fake.calls()[allocAt].bytes, 10u);
  (void)event;
}

TEST(shrink_never_frees_while_the_old_buffers_event_is_pending) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 10);
  execute(pool, 1000);
  execute(pool, 10);
  execute(pool, 10);
  // The last hand-off's event is still pending: that enqueue may read the big buffer.
  CHECK(fake.pending(fake.calls()[fake.indexOf("record", 3)].event));
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 10u);
  CHECK(fake.violations.empty());
}

TEST(refused_shrink_keeps_the_buffer_records_and_resets) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 10);
  execute(pool, 1000);
  execute(pool, 10);
  execute(pool, 10);
  const std::size_t freesBefore = fake.count("free");
  fake.failNextAllocations = 1;
  bool ok = false;
  std::size_t ranWith = execute(pool, 10, &ok);
  CHECK(ok);  // the execute still runs, on the larger buffer
  CHECK_EQ(ranWith, 1000u);
  CHECK_EQ(pool.capacity(0), 1000u);
  CHECK(pool.capacityEvents().back().reason == CapacityReason::kShrinkFailed);
  CHECK_EQ(fake.count("free"), freesBefore);
  execute(pool, 10);
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 1000u);  // the count restarted after the failure
  execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 10u);
}

TEST(grow_only_mode_never_shrinks) {
  FakeCudaApi fake(2);
  SharedScratchOptions options;
  options.reclaim = false;
  SharedScratchPool pool(fake, options);
  execute(pool, 10);
  execute(pool, 1000);
  const std::size_t freesBefore = fake.count("free");  // the growth's
  for (int i = 0; i < 10; ++i) execute(pool, 10);
  CHECK_EQ(pool.capacity(0), 1000u);
  CHECK_EQ(fake.count("free"), freesBefore);
}

TEST(floor_and_counts_are_per_device) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  auto on = [&](int device, std::size_t bytes) {
    auto lease = pool.acquire(device, bytes, stream);
    (void)pool.handOff(lease.get(), stream);
  };
  on(0, 10);
  on(1, 500);
  on(0, 1000);
  on(1, 5000);
  on(0, 10);
  on(1, 10);
  on(0, 10);
  on(1, 10);
  on(0, 10);  // third underfilled on device 0 only
  CHECK_EQ(pool.capacity(0), 10u);
  CHECK_EQ(pool.capacity(1), 5000u);
  on(1, 10);
  CHECK_EQ(pool.capacity(1), 500u);  // device 1's own floor
  auto events = pool.capacityEvents();
  CHECK_EQ(events.back().device, 1);
  CHECK_EQ(events.back().executeIndex, 4u);
}

TEST(report_json_carries_shrink_events_and_floor) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  execute(pool, 16);
  execute(pool, 256);
  execute(pool, 16);
  execute(pool, 16);
  execute(pool, 16);
  const std::string json = pool.reportJson();
  CHECK(json.find("\"floor\":16") != std::string::npos);
  CHECK(json.find("{\"device\":0,\"execute_index\":4,\"from\":256,\"to\":16,\"reason\":\"shrink\",\"detail\":null}") !=
        std::string::npos);
}

int main() { return trtx::test::run_all(); }
