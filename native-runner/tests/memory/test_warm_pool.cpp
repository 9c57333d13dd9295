// CPU tests of the warm pool's bookkeeping against a fake that records every
// CUDA-shaped call and the current device at the time of each.
#include <cstdint>
#include <limits>
#include <thread>

#include "fake_cuda_api.h"
#include "support/check.h"
#include "trtx/memory/warm_pool.h"

using namespace trtx_test;
using trtx::memory::PoolState;
using trtx::memory::WarmPool;
using trtx::memory::WarmPoolOptions;

namespace {
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::size_t countOp(const std::vector<CudaCall>& calls, const std::string& op, int device = -2) {
  std::size_t n = 0;
  for (const CudaCall& c : calls) n += (c.op == op && (device == -2 || c.device == device)) ? 1 : 0;
  return n;
}
}  // namespace

TEST(raises_threshold_to_max_and_remembers_previous) {
  FakeCudaApi api(1);
  api.thresholds()[0] = 4096;
  WarmPool pool(api);
  std::vector<PoolState> states = pool.acquire({0});
  CHECK_EQ(states.size(), 1u);
  CHECK(states[0] == PoolState::kRaised);
  CHECK_EQ(api.thresholds()[0], kMax);
  auto report = pool.report();
  CHECK_EQ(report.devices.size(), 1u);
  CHECK_EQ(report.devices[0].previousThreshold, 4096u);
  CHECK(report.devices[0].ownsRestore);
  // Every call the fake saw is counted (the report's memory.pool.api_calls).
  CHECK_EQ(report.apiCalls, static_cast<std::uint64_t>(api.calls().size()));
}

TEST(threshold_already_max_is_left_alone_and_not_trimmed) {
  FakeCudaApi api(1);
  api.thresholds()[0] = kMax;
  {
    WarmPool pool(api);
    CHECK(pool.acquire({0})[0] == PoolState::kAlreadyMax);
    CHECK(pool.release().ok());
  }
  std::vector<CudaCall> calls = api.calls();
  CHECK_EQ(countOp(calls, "setThreshold"), 0u);
  CHECK_EQ(countOp(calls, "trim"), 0u);
  CHECK_EQ(api.thresholds()[0], kMax);
}

TEST(threshold_only_raised_never_lowered_while_held) {
  FakeCudaApi api(2);
  api.thresholds()[0] = 1u << 30;
  api.thresholds()[1] = 0;
  WarmPool pool(api);
  pool.acquire({0, 1});
  pool.acquire({1, 0});
  pool.acquire({0});
  CHECK(pool.release().ok());
  CHECK(pool.release().ok());
  // Every write made while any handle is held is the maximum.
  for (const CudaCall& c : api.calls()) {
    if (c.op == "setThreshold") CHECK_EQ(c.value, kMax);
  }
  CHECK_EQ(countOp(api.calls(), "setThreshold"), 2u);  // one raise per device, no re-raise
  CHECK_EQ(api.thresholds()[0], kMax);
  CHECK_EQ(api.thresholds()[1], kMax);
}

TEST(refcount_restores_only_when_last_handle_goes) {
  FakeCudaApi api(1);
  WarmPool pool(api);
  pool.acquire({0});
  pool.acquire({0});
  CHECK(pool.release().ok());
  CHECK_EQ(api.thresholds()[0], kMax);
  CHECK_EQ(countOp(api.calls(), "trim"), 0u);
  CHECK(pool.release().ok());
  CHECK_EQ(api.thresholds()[0], 0u);
  CHECK_EQ(countOp(api.calls(), "trim", 0), 1u);
  CHECK(pool.report().devices[0].state == PoolState::kRestored);
}

TEST(release_from_thread_on_other_device_restores_and_trims_both) {
  FakeCudaApi api(2);
  api.thresholds()[0] = 0;
  api.thresholds()[1] = 8192;
  api.reserved()[0] = 1u << 20;
  api.reserved()[1] = 1u << 21;
  WarmPool pool(api);
  api.setCurrentOf(std::this_thread::get_id(), 0);
  pool.acquire({0});
  pool.acquire({1});
  CHECK(pool.release().ok());

  trtx::Status released;
  int currentAfter = -1;
  std::thread other([&] {
    api.setCurrentOf(std::this_thread::get_id(), 1);
    released = pool.release();
    currentAfter = api.currentOf(std::this_thread::get_id());
  });
  other.join();

  CHECK(released.ok());
  CHECK_EQ(api.thresholds()[0], 0u);
  CHECK_EQ(api.thresholds()[1], 8192u);
  CHECK_EQ(api.reserved()[0], 0u);
  CHECK_EQ(api.reserved()[1], 0u);
  CHECK_EQ(currentAfter, 1);  // the releasing thread's device is put back

  // Each device is synchronized and trimmed while it is current, sync first.
  std::vector<CudaCall> calls = api.calls();
  for (int device = 0; device < 2; ++device) {
    long syncAt = -1;
    long trimAt = -1;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].op == "sync" && calls[i].device == device) syncAt = static_cast<long>(i);
      if (calls[i].op == "trim" && calls[i].device == device) {
        trimAt = static_cast<long>(i);
        CHECK_EQ(calls[i].current, device);
        CHECK_EQ(calls[i].value, 0u);
      }
    }
    CHECK(syncAt >= 0);
    CHECK(trimAt > syncAt);
  }
}

TEST(release_trims_the_model_device_and_puts_the_callers_device_back) {
  FakeCudaApi api(2);
  api.thresholds()[1] = 0;
  api.reserved()[1] = 1u << 20;
  WarmPool pool(api);
  std::thread loader([&] {
    api.setCurrentOf(std::this_thread::get_id(), 1);
    pool.acquire({1});
  });
  loader.join();
  // This thread (current device 0) never touched device 1.
  api.setCurrentOf(std::this_thread::get_id(), 0);
  CHECK(pool.release().ok());
  CHECK_EQ(api.thresholds()[1], 0u);
  CHECK_EQ(api.reserved()[1], 0u);
  CHECK_EQ(countOp(api.calls(), "trim", 0), 0u);
  for (const CudaCall& c : api.calls()) {
    if (c.op == "trim" || c.op == "sync") CHECK_EQ(c.current, 1);
  }
  CHECK_EQ(api.currentOf(std::this_thread::get_id()), 0);
}

TEST(configure_failure_is_reported_cleared_and_execution_goes_on) {
  FakeCudaApi api(2);
  api.failOps.insert("setThreshold:0");
  WarmPool pool(api);
  std::vector<PoolState> states = pool.acquire({0, 1});
  CHECK(states[0] == PoolState::kFailed);
  CHECK(states[1] == PoolState::kRaised);
  CHECK(!api.errorLatched);  // the CUDA error was cleared
  auto report = pool.report();
  CHECK(!report.devices[0].configureStatus.ok());
  CHECK(report.devices[0].configureStatus.failure().message.find("setThreshold") != std::string::npos);
  CHECK(pool.reportJson().find("\"configure_error\":{\"code\":\"device_error\"") != std::string::npos);
  CHECK_EQ(report.handles, 1);
  // The failed device is not restored (nothing of ours to put back); the other is.
  CHECK(pool.release().ok());
  CHECK_EQ(countOp(api.calls(), "trim", 0), 0u);
  CHECK_EQ(countOp(api.calls(), "trim", 1), 1u);
  CHECK_EQ(api.thresholds()[1], 0u);
}

TEST(read_failure_is_reported_and_cleared) {
  FakeCudaApi api(1);
  api.failOps.insert("getThreshold:0");
  WarmPool pool(api);
  CHECK(pool.acquire({0})[0] == PoolState::kFailed);
  CHECK(!api.errorLatched);
  CHECK_EQ(countOp(api.calls(), "setThreshold"), 0u);
  CHECK_EQ(countOp(api.calls(), "clearError"), 1u);
}

TEST(failed_device_is_retried_by_a_later_acquire) {
  FakeCudaApi api(1);
  api.failOps.insert("getThreshold:0");
  WarmPool pool(api);
  pool.acquire({0});
  api.failOps.clear();
  CHECK(pool.acquire({0})[0] == PoolState::kRaised);
  CHECK_EQ(api.thresholds()[0], kMax);
}

TEST(restore_failure_on_one_device_still_restores_the_other) {
  FakeCudaApi api(2);
  api.thresholds()[0] = 111;
  api.thresholds()[1] = 222;
  WarmPool pool(api);
  pool.acquire({0, 1});
  api.failOps.insert("setDevice:1");
  api.failOps.insert("trim:1");
  trtx::Status status = pool.release();
  CHECK(!status.ok());
  CHECK(!api.errorLatched);
  CHECK_EQ(api.thresholds()[0], 111u);
  CHECK_EQ(api.thresholds()[1], 222u);  // the threshold needs no device switch
  CHECK_EQ(countOp(api.calls(), "trim", 0), 1u);
  CHECK_EQ(countOp(api.calls(), "sync"), 1u);  // no sync issued on the wrong device
  auto report = pool.report();
  CHECK(report.devices[0].releaseStatus.ok());
  CHECK(report.devices[0].trimmed);
  CHECK(!report.devices[1].releaseStatus.ok());
  CHECK(!report.devices[1].trimmed);
  CHECK_EQ(api.currentOf(std::this_thread::get_id()), 0);
}

TEST(cold_pool_makes_no_pool_calls) {
  FakeCudaApi api(2);
  {
    WarmPoolOptions options;
    options.enabled = false;
    WarmPool pool(api, options);
    std::vector<PoolState> states = pool.acquire({0, 1});
    CHECK(states[0] == PoolState::kDisabled);
    CHECK(pool.release().ok());
    CHECK(pool.reportJson().find("\"mode\":\"cold\"") != std::string::npos);
    CHECK_EQ(pool.report().apiCalls, 0u);
  }
  CHECK_EQ(api.calls().size(), 0u);
  CHECK_EQ(api.thresholds()[0], 0u);
}

TEST(release_without_acquire_is_an_error) {
  FakeCudaApi api(1);
  WarmPool pool(api);
  CHECK(pool.release().error() == trtx::Error::InvalidArgument);
  pool.acquire({0});
  CHECK(pool.release().ok());
  CHECK(!pool.release().ok());
}

TEST(reacquire_after_full_release_raises_again_from_current_value) {
  FakeCudaApi api(1);
  WarmPool pool(api);
  pool.acquire({0});
  (void)pool.release();
  api.thresholds()[0] = 77;  // another user changed it in between
  CHECK(pool.acquire({0})[0] == PoolState::kRaised);
  CHECK_EQ(pool.report().devices[0].previousThreshold, 77u);
  (void)pool.release();
  CHECK_EQ(api.thresholds()[0], 77u);
}

TEST(leaked_handles_are_restored_by_the_destructor) {
  FakeCudaApi api(1);
  api.thresholds()[0] = 5;
  {
    WarmPool pool(api);
    pool.acquire({0});
  }
  CHECK_EQ(api.thresholds()[0], 5u);
  CHECK_EQ(countOp(api.calls(), "trim", 0), 1u);
}

TEST(report_json_names_state_and_previous_threshold_as_string) {
  FakeCudaApi api(1);
  api.thresholds()[0] = 0;
  WarmPool pool(api);
  pool.acquire({0});
  const std::string json = pool.reportJson();
  CHECK(json.find("\"mode\":\"warm\"") != std::string::npos);
  CHECK(json.find("\"state\":\"raised\"") != std::string::npos);
  CHECK(json.find("\"previous_release_threshold\":\"0\"") != std::string::npos);
  CHECK(json.find("\"configure_error\":null") != std::string::npos);
  (void)pool.release();
}

TEST(report_codes_name_each_kind_of_memory_failure) {
  // The report's memory_error.code (schemas/runner-report.schema.json) for
  // the runner codes the memory units fail with; any other is a device error.
  CHECK_EQ(std::string(trtx::memory::report_code(trtx::Error::InvalidArgument)), std::string("invalid_argument"));
  CHECK_EQ(std::string(trtx::memory::report_code(trtx::Error::MemoryAllocationFailed)), std::string("out_of_memory"));
  CHECK_EQ(std::string(trtx::memory::report_code(trtx::Error::InvalidState)), std::string("busy"));
  CHECK_EQ(std::string(trtx::memory::report_code(trtx::Error::CudaError)), std::string("device_error"));
  CHECK_EQ(std::string(trtx::memory::report_code(trtx::Error::DeviceUnavailable)), std::string("device_error"));
  CHECK_EQ(trtx::memory::describe(trtx::fail(trtx::Error::CudaError, "cudaMemPoolTrimTo", "invalid argument")),
           std::string("cudaMemPoolTrimTo: invalid argument"));
  CHECK_EQ(trtx::memory::describe(trtx::fail(trtx::Error::CudaError, "", "fake trim failed")),
           std::string("fake trim failed"));
}

int main() { return trtx::test::run_all(); }
