// (d) Reclamation on the shared pool: after a warm-up execute that freezes the
// floor (64 MiB), cycles of a burst of 3 large executes (1 GiB) followed by M
// small ones (32..64 MiB). Checked: capacity returns to the floor exactly at
// the 3rd underfilled execute of every cycle. Measured: time of the whole
// sequence with reclamation on vs off (grow-only), interleaved trials, warm
// pool; plus one informational cold-pool pair, where a shrink hands the
// memory to the driver and the next burst maps it again.
// Each execute: acquire, a kernel writing the need's bytes, handOff, stream
// synchronize (a delegate execute without a caller stream).
#include <cstdio>
#include <memory>
#include <vector>

#include "bench_common.h"
#include "trtx/memory/shared_scratch_pool.h"
#include "trtx/memory/warm_pool.h"
#include "trtx/runtime/cuda_api.h"

using namespace bench;
using trtx::memory::CapacityReason;
using trtx::memory::SharedScratchOptions;
using trtx::memory::SharedScratchPool;

namespace {
constexpr std::size_t kFloor = 64 * kMiB;
constexpr std::size_t kLarge = 1024 * kMiB;
constexpr int kBurst = 3;

__global__ void touchKernel(uint4* scratch, std::size_t vectors, unsigned salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < vectors;
       i += std::size_t(gridDim.x) * blockDim.x) {
    scratch[i] = make_uint4(unsigned(i) ^ salt, salt, unsigned(i >> 32), ~salt);
  }
}

std::size_t smallNeed(int k) { return kFloor - std::size_t((k * 7) % 9) * 4 * kMiB; }  // 32..64 MiB

struct Trial {
  double totalUs = 0;
  std::vector<double> stepUs;
  int shrinks = 0;
  int grows = 0;
  bool floorEachCycle = true;
};

Trial runTrial(bool reclaim, int cycles, int smalls, cudaStream_t stream, trtx::cuda::Api& api) {
  SharedScratchOptions options;
  options.reclaim = reclaim;
  options.warmupExecutes = 1;
  SharedScratchPool pool(api, options);
  Trial trial;
  std::uint64_t executeIndex = 0;
  auto execute = [&](std::size_t need) {
    const double t0 = nowUs();
    auto lease = pool.acquire(0, need, stream);
    if (!lease.ok()) {
      BENCH_EXPECT(false, "acquire %zu: %s", need, trtx::memory::describe(lease.failure()).c_str());
      return;
    }
    touchKernel<<<1056, 256, 0, stream>>>(static_cast<uint4*>(lease.get().pointer), need / sizeof(uint4),
                                          unsigned(executeIndex));
    BENCH_LAUNCHED();
    BENCH_EXPECT(pool.handOff(lease.get(), stream).ok(), "handOff");
    BENCH_CUDA(cudaStreamSynchronize(stream));
    trial.stepUs.push_back(nowUs() - t0);
    ++executeIndex;
  };

  const double start = nowUs();
  execute(kFloor);  // warm-up: the floor
  for (int c = 0; c < cycles; ++c) {
    for (int b = 0; b < kBurst; ++b) execute(kLarge);
    for (int k = 0; k < smalls; ++k) {
      execute(smallNeed(k));
      if (reclaim) {
        const std::size_t expected = k < 2 ? kLarge : kFloor;
        if (pool.capacity(0) != expected) trial.floorEachCycle = false;
      }
    }
  }
  trial.totalUs = nowUs() - start;

  for (const auto& e : pool.capacityEvents()) {
    if (e.reason == CapacityReason::kShrink) {
      ++trial.shrinks;
      if (e.to != kFloor) trial.floorEachCycle = false;
    }
    if (e.reason == CapacityReason::kGrow) ++trial.grows;
    if (e.reason == CapacityReason::kGrowFailed || e.reason == CapacityReason::kShrinkFailed) {
      BENCH_EXPECT(false, "capacity change refused: %s", e.detail.c_str());
    }
  }
  if (reclaim) {
    // The shrink of cycle c lands on its 3rd small execute.
    const auto events = pool.capacityEvents();
    int c = 0;
    for (const auto& e : events) {
      if (e.reason != CapacityReason::kShrink) continue;
      const std::uint64_t expectedIndex = 1 + std::uint64_t(c) * (kBurst + smalls) + kBurst + 2;
      if (e.executeIndex != expectedIndex) trial.floorEachCycle = false;
      ++c;
    }
  }
  BENCH_EXPECT(pool.shutdown().ok(), "shutdown");
  return trial;
}

void compare(const char* label, bool warmPool, int cycles, int smalls, int trials, cudaStream_t stream,
             trtx::cuda::Api& api, JsonLines& json) {
  trtx::memory::WarmPool pool(api, trtx::memory::WarmPoolOptions{warmPool});
  if (!warmPool) setThreshold(0);
  pool.acquire({0});
  std::vector<double> onTotals, offTotals, onSteps, offSteps;
  Trial lastOn;
  runTrial(true, 1, smalls, stream, api);  // untimed: maps the pool once
  for (int t = 0; t < trials; ++t) {
    // Interleaved, alternating which goes first, so drift lands on both.
    for (int order = 0; order < 2; ++order) {
      const bool reclaim = (order == 0) == (t % 2 == 0);
      Trial trial = runTrial(reclaim, cycles, smalls, stream, api);
      (reclaim ? onTotals : offTotals).push_back(trial.totalUs);
      auto& steps = reclaim ? onSteps : offSteps;
      steps.insert(steps.end(), trial.stepUs.begin(), trial.stepUs.end());
      if (reclaim)
        lastOn = trial;
      else
        BENCH_EXPECT(trial.shrinks == 0, "grow-only mode shrank");
    }
  }
  BENCH_EXPECT(pool.release().ok(), "warm pool release");
  BENCH_EXPECT(lastOn.shrinks == cycles, "%s: %d shrinks for %d cycles", label, lastOn.shrinks, cycles);
  BENCH_EXPECT(lastOn.floorEachCycle, "%s: capacity did not return to the floor at the 3rd underfilled execute", label);
  const double overhead = median(onTotals) / median(offTotals) - 1.0;
  const double perExecuteOn = median(onTotals) / (1 + cycles * (kBurst + smalls));
  const double perExecuteOff = median(offTotals) / (1 + cycles * (kBurst + smalls));
  std::printf("| %s | %s | %d x (%d + %d) | %.1f | %.1f | %+.2f%% | %.1f / %.1f | %d / %d | %s |\n", label,
              warmPool ? "warm" : "cold", cycles, kBurst, smalls, median(offTotals) / 1000.0, median(onTotals) / 1000.0,
              overhead * 100.0, median(offSteps), median(onSteps), lastOn.grows, lastOn.shrinks,
              lastOn.floorEachCycle ? "yes" : "NO");
  json.line(
      "{\"bench\":\"reclaim\",\"label\":\"%s\",\"pool\":\"%s\",\"cycles\":%d,\"burst\":%d,\"smalls\":%d,"
      "\"trials\":%d,\"off_total_ms\":%.3f,\"on_total_ms\":%.3f,\"overhead\":%.5f,\"off_mean_execute_us\":%.2f,"
      "\"on_mean_execute_us\":%.2f,\"off_median_step_us\":%.2f,\"on_median_step_us\":%.2f,\"grows\":%d,"
      "\"shrinks\":%d,\"floor_at_third\":%s}",
      label, warmPool ? "warm" : "cold", cycles, kBurst, smalls, trials, median(offTotals) / 1000.0,
      median(onTotals) / 1000.0, overhead, perExecuteOff, perExecuteOn, median(offSteps), median(onSteps), lastOn.grows,
      lastOn.shrinks, lastOn.floorEachCycle ? "true" : "false");
}
}  // namespace

int main(int argc, char** argv) {
  JsonLines json(argc > 1 ? argv[1] : nullptr);
  BENCH_CUDA(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  trtx::cuda::Api* api = &trtx::cuda::runtime_api();

  std::printf("\n(d) reclamation: floor %zu MiB, burst %d x %zu MiB, then M small executes (32..64 MiB)\n\n",
              kFloor / kMiB, kBurst, kLarge / kMiB);
  std::printf(
      "| cycle | pool | executes | grow-only ms | reclaim ms | overhead | median step us off / on | grows / shrinks | "
      "floor at 3rd underfilled |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---|\n");
  compare("low (M=100)", true, 10, 100, 7, stream, *api, json);
  compare("medium (M=10)", true, 30, 10, 7, stream, *api, json);
  compare("medium (M=10)", false, 10, 10, 3, stream, *api, json);

  // The report the runner would embed, from one short reclaiming run.
  {
    trtx::memory::WarmPool pool(*api);
    pool.acquire({0});
    SharedScratchPool scratch(*api);
    for (std::size_t need : {kFloor, kLarge, kLarge, kFloor / 2, kFloor, kFloor / 2}) {
      auto lease = scratch.acquire(0, need, stream);
      if (lease.ok()) (void)scratch.handOff(lease.get(), stream);
    }
    BENCH_CUDA(cudaStreamSynchronize(stream));
    std::printf("\nreport: %s\n", scratch.reportJson().c_str());
    (void)scratch.shutdown();
    (void)pool.release();
  }
  BENCH_CUDA(cudaStreamDestroy(stream));
  return finish("bench_reclaim");
}
