// The runner's device-memory wiring (src/integration/runner_memory.cpp) on the CPU,
// against the fake CUDA runtime of tests/memory/: the warm pool is raised at program load
// and restored and trimmed at teardown; --cold-pool makes no pool call at
// all; no pool is "unavailable", never "failed"; a pool that cannot be
// configured is reported with its message and costs nothing else; shared
// scratch is one provider per device whose buffer is freed before the pool is
// trimmed; private scratch is tallied across engines. Each case reads the
// report section the runner writes.
#include "runner_memory.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include "fake_cuda_api.h"
#include "support/check.h"
#include "trtx/et/device_allocator.h"
#include "trtx/runtime/json.h"

using trtx::integration::JsonWriter;
using trtx::integration::RunnerMemory;
using trtx::integration::RunnerMemoryOptions;
using trtx_test::FakeCudaApi;
namespace rt = trtx::runtime;

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

trtx::json::Value memory_report(const RunnerMemory& m) {
  JsonWriter w;
  w.begin_object();
  m.write_sections(w);
  w.end_object();
  auto parsed = trtx::json::parse(w.str());
  return parsed.ok() ? parsed.get() : trtx::json::Value();
}

const trtx::json::Value& member(const trtx::json::Value& v, const char* key) {
  static const trtx::json::Value missing;
  const trtx::json::Value* found = v.find(key);
  return found == nullptr ? missing : *found;
}

std::string str(const trtx::json::Value& v) { return v.is(trtx::json::Type::String) ? v.string : "<not a string>"; }
std::int64_t num(const trtx::json::Value& v) { return v.int_ok ? v.integer : -1; }

// Trims only once no scratch buffer is live: otherwise the trim would keep
// the scratch's memory mapped.
class TrimWatch final : public FakeCudaApi {
 public:
  TrimWatch() : FakeCudaApi(1) {}
  trtx::Status pool_trim_to(int device, std::size_t keep) override {
    if (!live.empty()) trimmedWhileLive = true;
    return FakeCudaApi::pool_trim_to(device, keep);
  }
  bool trimmedWhileLive = false;
};

}  // namespace

TEST(warm_pool_is_raised_at_load_and_restored_and_trimmed_at_teardown) {
  FakeCudaApi api(1);
  api.reserved()[0] = 64u << 20;
  RunnerMemory m(rt::Target::Cuda, RunnerMemoryOptions{false, false}, &api, "");
  m.program_loaded({0});
  CHECK_EQ(api.thresholds()[0], kMax);
  CHECK(m.teardown().ok());
  CHECK_EQ(api.thresholds()[0], std::uint64_t{0});
  CHECK_EQ(api.reserved()[0], std::uint64_t{0});
  const auto pool = member(memory_report(m), "pool");
  CHECK_EQ(str(member(pool, "mode")), std::string("warm"));
  CHECK(member(pool, "unavailable_reason").is(trtx::json::Type::Null));
  CHECK(num(member(pool, "api_calls")) > 0);
  CHECK_EQ(num(member(pool, "api_calls")), static_cast<std::int64_t>(api.calls().size()));
  const auto& devices = member(pool, "devices").array;
  CHECK_EQ(devices.size(), std::size_t{1});
  CHECK_EQ(str(member(devices[0], "state_at_load")), std::string("raised"));
  CHECK_EQ(str(member(devices[0], "state")), std::string("restored"));
  CHECK_EQ(str(member(devices[0], "previous_release_threshold")), std::string("0"));
  CHECK_EQ(str(member(devices[0], "raised_to")), std::string("18446744073709551615"));
  CHECK(member(devices[0], "restored").boolean);
  CHECK(member(devices[0], "trimmed").boolean);
  CHECK(member(devices[0], "configure_error").is(trtx::json::Type::Null));
}

// The registered device allocator tells the runner about each device as its
// first arena is allocated; a program across cuda:0 and cuda:1 must have both
// pools raised, and a teardown from a thread current on the other device
// must restore both thresholds, trim both pools and put that thread's device
// back (the allocator is the real one, on its host stand-in).
TEST(two_devices_are_raised_by_their_first_arenas_and_restored_from_a_thread_on_the_other) {
  FakeCudaApi api(2);
  api.thresholds()[1] = 4096;
  api.reserved()[0] = 1u << 20;
  api.reserved()[1] = 2u << 20;
  RunnerMemory m(rt::Target::Cuda, RunnerMemoryOptions{false, false}, &api, "");
  auto& allocator = trtx::et::device_allocator();
  int first_uses = 0;
  allocator.configure({rt::Target::Host, trtx::et::ArenaFill::None, [&](int device) {
                         ++first_uses;
                         m.program_loaded({device});
                       }});
  auto a0 = allocator.allocate(256, 0, 16);
  auto a1 = allocator.allocate(256, 1, 16);
  auto b1 = allocator.allocate(512, 1, 16);
  CHECK(a0.ok() && a1.ok() && b1.ok());
  CHECK_EQ(first_uses, 2);
  CHECK_EQ(api.thresholds()[0], kMax);
  CHECK_EQ(api.thresholds()[1], kMax);
  for (auto* r : {&a0, &a1, &b1}) {
    if (r->ok()) allocator.deallocate(r->get(), 0);
  }

  bool torn_down = false;
  int current_after = -1;
  std::thread other([&] {
    api.setCurrentOf(std::this_thread::get_id(), 1);
    torn_down = m.teardown().ok();
    current_after = api.currentOf(std::this_thread::get_id());
  });
  other.join();
  allocator.configure({rt::Target::Host, trtx::et::ArenaFill::Poison, {}});
  CHECK(torn_down);
  CHECK_EQ(current_after, 1);
  CHECK_EQ(api.thresholds()[0], std::uint64_t{0});
  CHECK_EQ(api.thresholds()[1], std::uint64_t{4096});
  CHECK_EQ(api.reserved()[0], std::uint64_t{0});
  CHECK_EQ(api.reserved()[1], std::uint64_t{0});
  // Each pool is trimmed while its own device is current.
  for (const auto& c : api.calls()) {
    if (c.op == "trim") CHECK_EQ(c.current, c.device);
  }
  const auto report = memory_report(m);
  const auto& devices = member(member(report, "pool"), "devices").array;
  CHECK_EQ(devices.size(), std::size_t{2});
  for (std::size_t d = 0; d < devices.size() && d < 2; ++d) {
    CHECK_EQ(num(member(devices[d], "device")), static_cast<std::int64_t>(d));
    CHECK_EQ(str(member(devices[d], "state_at_load")), std::string("raised"));
    CHECK_EQ(str(member(devices[d], "state")), std::string("restored"));
    CHECK(member(devices[d], "restored").boolean);
    CHECK(member(devices[d], "trimmed").boolean);
  }
  CHECK_EQ(str(member(devices[1], "previous_release_threshold")), std::string("4096"));
}

TEST(cold_pool_makes_no_pool_call) {
  FakeCudaApi api(1);
  api.thresholds()[0] = 123;
  {
    RunnerMemory m(rt::Target::Cuda, RunnerMemoryOptions{true, false}, &api, "");
    m.program_loaded({0});
    CHECK(m.teardown().ok());
    const auto pool = member(memory_report(m), "pool");
    CHECK_EQ(str(member(pool, "mode")), std::string("cold"));
    CHECK_EQ(num(member(pool, "api_calls")), std::int64_t{0});
    CHECK_EQ(str(member(member(pool, "devices").array.at(0), "state")), std::string("disabled"));
  }
  CHECK_EQ(api.calls().size(), std::size_t{0});
  CHECK_EQ(api.thresholds()[0], std::uint64_t{123});
}

TEST(no_pool_is_unavailable_not_failed) {
  RunnerMemory m(rt::Target::Host, RunnerMemoryOptions{false, false}, nullptr,
                 "this trtx-runner was built without CUDA");
  m.program_loaded({0});
  CHECK(m.teardown().ok());
  const auto pool = member(memory_report(m), "pool");
  CHECK_EQ(str(member(pool, "mode")), std::string("unavailable"));
  CHECK_EQ(str(member(pool, "unavailable_reason")), std::string("this trtx-runner was built without CUDA"));
  CHECK_EQ(num(member(pool, "api_calls")), std::int64_t{0});
  CHECK_EQ(member(pool, "devices").array.size(), std::size_t{0});
}

TEST(a_pool_that_cannot_be_configured_is_reported_with_its_message) {
  FakeCudaApi api(1);
  api.failOps.insert("setThreshold:0");
  RunnerMemory m(rt::Target::Cuda, RunnerMemoryOptions{false, false}, &api, "");
  m.program_loaded({0});
  CHECK(!api.errorLatched);  // cleared, so no later launch check sees it
  CHECK(m.teardown().ok());
  const auto d = member(member(memory_report(m), "pool"), "devices").array.at(0);
  CHECK_EQ(str(member(d, "state_at_load")), std::string("failed"));
  CHECK_EQ(str(member(d, "state")), std::string("failed"));
  CHECK_EQ(str(member(member(d, "configure_error"), "message")), std::string("fake setThreshold failed"));
  CHECK(member(d, "previous_release_threshold").is(trtx::json::Type::Null));
}

TEST(shared_scratch_is_one_provider_per_device_freed_before_the_trim) {
  TrimWatch api;
  RunnerMemory m(rt::Target::Cuda, RunnerMemoryOptions{false, true}, &api, "");
  m.program_loaded({0});
  auto factory = m.scratch_factory(3);
  const rt::DeviceContext dev(rt::Target::Cuda, 0);
  auto a = factory(dev, "forward.delegates[0]");
  auto b = factory(dev, "forward.delegates[1]");
  auto c = factory(dev, "forward.delegates[2]");
  CHECK(a == b && b == c);
  int x = 0;
  const rt::StreamRef stream{&x};
  for (int step = 0; step < 2; ++step) {
    auto need = {std::size_t{1} << 20, std::size_t{2} << 20, std::size_t{3} << 20};
    for (std::size_t bytes : need) {
      auto got = a->acquire(dev, bytes, stream);
      CHECK(got.ok());
      a->release_after(rt::EventRef{});
    }
  }
  CHECK_EQ(a->capacity(), std::size_t{3} << 20);
  a.reset();
  b.reset();
  c.reset();
  CHECK(m.teardown().ok());
  CHECK(api.live.empty());
  CHECK(!api.trimmedWhileLive);
  CHECK(api.violations.empty());

  const auto s = member(memory_report(m), "scratch");
  CHECK_EQ(str(member(s, "mode")), std::string("shared"));
  CHECK(member(s, "reclaim").boolean);
  CHECK_EQ(num(member(s, "warmup_executes")), std::int64_t{3});
  CHECK_EQ(num(member(s, "peak_bytes")), std::int64_t{3} << 20);
  CHECK_EQ(num(member(s, "peak_buffers")), std::int64_t{1});
  const auto& devices = member(s, "devices").array;
  CHECK_EQ(devices.size(), std::size_t{1});
  // The capacity the run ended with, not the zero left after teardown.
  CHECK_EQ(num(member(devices[0], "capacity")), std::int64_t{3} << 20);
  CHECK_EQ(num(member(devices[0], "floor")), std::int64_t{3} << 20);
  CHECK_EQ(num(member(devices[0], "executes")), std::int64_t{6});
  const auto& events = member(s, "capacity_events").array;
  CHECK_EQ(events.size(), std::size_t{3});
  CHECK_EQ(num(member(events[2], "execute_index")), std::int64_t{2});
  CHECK_EQ(num(member(events[2], "from")), std::int64_t{2} << 20);
  CHECK_EQ(num(member(events[2], "to")), std::int64_t{3} << 20);
  CHECK_EQ(str(member(events[2], "reason")), std::string("grow"));
}

TEST(private_scratch_is_tallied_across_engines) {
  RunnerMemory m(rt::Target::Host, RunnerMemoryOptions{false, false}, nullptr, "cpu");
  auto factory = m.scratch_factory(2);
  const rt::DeviceContext dev(rt::Target::Host, 0);
  auto a = factory(dev, "forward.delegates[0]");
  auto b = factory(dev, "forward.delegates[1]");
  CHECK(a != b);
  CHECK(a->acquire(dev, 1 << 20, rt::StreamRef{}).ok());
  a->release_after(rt::EventRef{});
  CHECK(b->acquire(dev, 2 << 20, rt::StreamRef{}).ok());
  b->release_after(rt::EventRef{});
  a.reset();
  b.reset();
  CHECK(m.teardown().ok());
  const auto s = member(memory_report(m), "scratch");
  CHECK_EQ(str(member(s, "mode")), std::string("private"));
  CHECK_EQ(num(member(s, "peak_bytes")), std::int64_t{3} << 20);
  CHECK_EQ(num(member(s, "peak_buffers")), std::int64_t{2});
  CHECK_EQ(member(s, "devices").array.size(), std::size_t{0});
}

int main() { return trtx::test::run_all(); }
