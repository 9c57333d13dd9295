// CPU tests of the shared scratch policy: growth, reuse, per-device buffers,
// event hand-off, failure handling. Reclamation has its own file.
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
StreamHandle streamA = reinterpret_cast<StreamHandle>(0xA);
StreamHandle streamB = reinterpret_cast<StreamHandle>(0xB);

SharedScratchOptions growOnly() {
  SharedScratchOptions options;
  options.reclaim = false;
  return options;
}

// acquire + handOff on one stream; returns the lease (pointer nullptr on failure).
ScratchLease run(SharedScratchPool& pool, int device, std::size_t bytes, StreamHandle stream, bool* ok = nullptr) {
  auto lease = pool.acquire(device, bytes, stream);
  if (ok) *ok = lease.ok();
  if (!lease.ok()) return ScratchLease();
  (void)pool.handOff(lease.get(), stream);
  return lease.get();
}
}  // namespace

TEST(first_acquire_allocates_the_need_on_the_caller_stream) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake, growOnly());
  auto lease = pool.acquire(0, 1000, streamA);
  CHECK(lease.ok());
  CHECK(lease.get().pointer != nullptr);
  CHECK_EQ(lease.get().capacity, 1000u);
  long at = fake.indexOf("allocate");
  CHECK(at >= 0);
  CHECK_EQ(fake.calls()[at].bytes, 1000u);
  CHECK(fake.calls()[at].stream == streamA);
  CHECK_EQ(fake.calls()[at].device, 0);
  CHECK(pool.handOff(lease.get(), streamA).ok());
}

TEST(smaller_or_equal_need_reuses_the_buffer) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake, growOnly());
  ScratchLease first = run(pool, 0, 1000, streamA);
  ScratchLease second = run(pool, 0, 400, streamB);
  ScratchLease third = run(pool, 0, 1000, streamA);
  CHECK(first.pointer == second.pointer);
  CHECK(first.pointer == third.pointer);
  CHECK_EQ(second.capacity, 1000u);
  CHECK_EQ(fake.count("allocate"), 1u);
  CHECK_EQ(fake.count("free"), 0u);
}

TEST(grows_monotonically_to_the_largest_need) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake, growOnly());
  run(pool, 0, 100, streamA);
  run(pool, 0, 300, streamA);
  run(pool, 0, 200, streamA);
  run(pool, 0, 50, streamA);
  CHECK_EQ(pool.capacity(0), 300u);
  CHECK_EQ(fake.liveBytes(), 300u);
  auto events = pool.capacityEvents();
  CHECK_EQ(events.size(), 2u);
  CHECK(events[1].reason == CapacityReason::kGrow);
  CHECK_EQ(events[1].from, 100u);
  CHECK_EQ(events[1].to, 300u);
  CHECK_EQ(events[1].executeIndex, 1u);
}

TEST(growth_allocates_new_before_syncing_and_freeing_old) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake, growOnly());
  ScratchLease small = run(pool, 0, 100, streamA);
  fake.clearCalls();
  auto big = pool.acquire(0, 500, streamB);
  CHECK(big.ok());
  long allocAt = fake.indexOf("allocate");
  long syncAt = fake.indexOf("sync");
  long freeAt = fake.indexOf("free");
  CHECK(allocAt >= 0);
  CHECK(syncAt > allocAt);
  CHECK(freeAt > syncAt);
  CHECK(fake.calls()[freeAt].pointer == small.pointer);
  CHECK(fake.calls()[allocAt].stream == streamB);
  CHECK(big.get().pointer != small.pointer);
}

TEST(failed_growth_keeps_the_old_buffer_usable) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake, growOnly());
  ScratchLease small = run(pool, 0, 100, streamA);
  fake.failNextAllocations = 1;
  auto big = pool.acquire(0, 500, streamA);
  CHECK(!big.ok());
  CHECK(big.error() == trtx::Error::MemoryAllocationFailed);
  CHECK_EQ(fake.count("free"), 0u);
  CHECK_EQ(fake.live.count(small.pointer), 1u);
  CHECK_EQ(pool.capacity(0), 100u);
  auto events = pool.capacityEvents();
  CHECK(events.back().reason == CapacityReason::kGrowFailed);
  CHECK_EQ(events.back().to, 100u);
  // The device is not left leased by the failure, and the old buffer serves.
  auto again = pool.acquire(0, 80, streamA);
  CHECK(again.ok());
  CHECK(again.get().pointer == small.pointer);
}

TEST(failed_sync_during_growth_keeps_old_and_releases_new) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake, growOnly());
  ScratchLease small = run(pool, 0, 100, streamA);
  fake.failNextSyncs = 1;
  auto big = pool.acquire(0, 500, streamA);
  CHECK(!big.ok());
  CHECK_EQ(fake.live.size(), 1u);
  CHECK_EQ(fake.live.count(small.pointer), 1u);
  CHECK_EQ(pool.capacity(0), 100u);
}

TEST(no_free_while_the_old_buffers_event_is_pending) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake, growOnly());
  auto first = pool.acquire(0, 100, streamA);
  CHECK(first.ok());
  CHECK(pool.handOff(first.get(), streamA).ok());
  EventHandle event = fake.calls()[fake.indexOf("record")].event;
  CHECK(fake.pending(event));  // the enqueue may still be reading the buffer
  auto bigger = pool.acquire(0, 200, streamB);
  CHECK(bigger.ok());
  CHECK_EQ(fake.count("free"), 1u);
  CHECK(fake.violations.empty());
}

TEST(hand_off_records_an_event_on_the_enqueue_stream) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  auto lease = pool.acquire(0, 64, streamA);
  CHECK(lease.ok());
  CHECK_EQ(fake.count("record"), 0u);
  CHECK(pool.handOff(lease.get(), streamB).ok());
  long at = fake.indexOf("record");
  CHECK(at >= 0);
  CHECK(fake.calls()[at].stream == streamB);
  CHECK(fake.pending(fake.calls()[at].event));
}

TEST(next_acquire_waits_on_the_event_even_on_the_same_stream) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  run(pool, 0, 64, streamA);
  EventHandle recorded = fake.calls()[fake.indexOf("record")].event;
  CHECK_EQ(fake.count("wait"), 0u);  // nothing to wait for on the first acquire

  run(pool, 0, 64, streamA);  // same handle: still waits, never compared
  CHECK_EQ(fake.count("wait"), 1u);
  CHECK(fake.calls()[fake.indexOf("wait", 0)].stream == streamA);
  CHECK(fake.calls()[fake.indexOf("wait", 0)].event == recorded);

  run(pool, 0, 64, streamB);
  CHECK_EQ(fake.count("wait"), 2u);
  CHECK(fake.calls()[fake.indexOf("wait", 1)].stream == streamB);

  run(pool, 0, 64, nullptr);  // the NULL stream is a legal caller stream
  CHECK_EQ(fake.count("wait"), 3u);
  CHECK(fake.calls()[fake.indexOf("wait", 2)].stream == nullptr);
}

TEST(wait_precedes_recording_of_the_next_enqueue) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  run(pool, 0, 64, streamA);
  run(pool, 0, 64, streamB);
  long secondRecord = fake.indexOf("record", 1);
  long wait = fake.indexOf("wait", 0);
  CHECK(wait >= 0);
  CHECK(wait < secondRecord);
}

TEST(failed_wait_falls_back_to_draining_the_device) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  run(pool, 0, 64, streamA);
  fake.failNextWaits = 1;
  fake.clearCalls();
  auto lease = pool.acquire(0, 64, streamB);
  CHECK(lease.ok());
  CHECK(fake.indexOf("sync") > fake.indexOf("wait"));
}

TEST(failed_record_drains_the_device_and_reports) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  auto lease = pool.acquire(0, 64, streamA);
  fake.failNextRecords = 1;
  CHECK(!pool.handOff(lease.get(), streamA).ok());
  CHECK(fake.indexOf("sync") > fake.indexOf("record"));
  // The device is free again, and there is no stale event to wait on.
  fake.clearCalls();
  CHECK(pool.acquire(0, 64, streamB).ok());
  CHECK_EQ(fake.count("wait"), 0u);
}

TEST(second_lease_before_hand_off_is_busy) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  auto first = pool.acquire(0, 64, streamA);
  CHECK(first.ok());
  auto second = pool.acquire(0, 64, streamB);
  CHECK(!second.ok());
  CHECK(second.error() == trtx::Error::InvalidState);
  CHECK(pool.handOff(first.get(), streamA).ok());
  CHECK(pool.acquire(0, 64, streamB).ok());
}

TEST(hand_off_of_a_stale_lease_is_rejected) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  auto first = pool.acquire(0, 64, streamA);
  CHECK(pool.handOff(first.get(), streamA).ok());
  CHECK(pool.handOff(first.get(), streamA).error() == trtx::Error::InvalidArgument);
  auto second = pool.acquire(0, 64, streamA);
  CHECK(pool.handOff(first.get(), streamA).error() == trtx::Error::InvalidArgument);
  CHECK(pool.handOff(second.get(), streamA).ok());
}

TEST(one_buffer_per_device_shared_by_every_engine_on_it) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake, growOnly());
  // Six engines with equal need on device 0, two on device 1.
  void* device0 = nullptr;
  for (int engine = 0; engine < 6; ++engine) {
    ScratchLease lease = run(pool, 0, 4096, engine % 2 ? streamA : streamB);
    if (engine == 0) device0 = lease.pointer;
    CHECK(lease.pointer == device0);
  }
  ScratchLease d1a = run(pool, 1, 4096, streamA);
  ScratchLease d1b = run(pool, 1, 4096, streamA);
  CHECK(d1a.pointer == d1b.pointer);
  CHECK(d1a.pointer != device0);
  CHECK_EQ(fake.count("allocate"), 2u);
  CHECK_EQ(fake.liveBytes(), 2u * 4096u);
  // A lease on one device does not block the other.
  auto l0 = pool.acquire(0, 10, streamA);
  auto l1 = pool.acquire(1, 10, streamB);
  CHECK(l0.ok());
  CHECK(l1.ok());
}

TEST(events_are_per_device_and_waits_use_the_devices_own_event) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  run(pool, 0, 64, streamA);
  run(pool, 1, 64, streamA);
  run(pool, 1, 64, streamA);
  long wait = fake.indexOf("wait", 0);
  CHECK(wait >= 0);
  CHECK_EQ(fake.calls()[wait].device, 1);
  CHECK(fake.calls()[wait].event == fake.calls()[fake.indexOf("record", 1)].event);
  CHECK(fake.calls()[wait].event != fake.calls()[fake.indexOf("record", 0)].event);
}

TEST(zero_need_allocates_nothing) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  auto lease = pool.acquire(0, 0, streamA);
  CHECK(lease.ok());
  CHECK(lease.get().pointer == nullptr);
  CHECK_EQ(fake.count("allocate"), 0u);
  CHECK(fake.violations.empty());
}

TEST(event_create_failure_is_an_error_and_not_a_lease) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  fake.failNextCreates = 1;
  CHECK(!pool.acquire(0, 64, streamA).ok());
  CHECK(pool.acquire(0, 64, streamA).ok());
}

TEST(shutdown_drains_then_frees_everything) {
  FakeCudaApi fake(2);
  {
    SharedScratchPool pool(fake);
    run(pool, 0, 64, streamA);
    run(pool, 1, 128, streamA);
    CHECK(pool.shutdown().ok());
    CHECK(fake.live.empty());
    CHECK(fake.violations.empty());
    CHECK_EQ(fake.count("destroyEvent"), 2u);
    CHECK_EQ(pool.capacity(0), 0u);
    // Usable again afterwards, from nothing.
    run(pool, 0, 32, streamA);
    CHECK_EQ(pool.capacity(0), 32u);
  }
  CHECK(fake.live.empty());  // the destructor shut it down again
}

TEST(report_json_lists_devices_and_capacity_events) {
  FakeCudaApi fake(2);
  SharedScratchPool pool(fake);
  run(pool, 0, 64, streamA);
  const std::string json = pool.reportJson();
  CHECK(json.find("\"mode\":\"shared\"") != std::string::npos);
  CHECK(json.find("{\"device\":0,\"execute_index\":0,\"from\":0,\"to\":64,\"reason\":\"grow\",\"detail\":null}") !=
        std::string::npos);
}

int main() { return trtx::test::run_all(); }
