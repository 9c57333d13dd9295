// The per-device memory bookkeeping on two real GPUs (CUDA builds, at least
// two devices; exit 77 otherwise):
//   two_device_check > lines.jsonl
// 1. The warm pool through the registered device allocator, wired as
//    trtx-runner wires it (RunnerMemory, the allocator's first-use hook):
//    one arena on cuda:0 and one on cuda:1 raise both default pools' release
//    thresholds; the teardown runs on a thread whose current device is the
//    other one (cuda:1 while the arenas were made from cuda:0); both
//    thresholds must come back to what they were (0 and 1 MiB, set
//    beforehand so a restore is told apart from a reset), both pools must be
//    trimmed (no reserved memory left), and that thread's current device must
//    still be cuda:1. The allocation call is timed per device while warm and
//    after the restore (cold), with a synchronize between, as
//    pytorch/executorch#22312 measured its per-allocation figures.
// 2. Shared scratch per device with reclamation (SharedScratchPool on the
//    CUDA runtime wrapper the runner uses): each device's default pool
//    must hold exactly its one scratch buffer after every phase, and a shrink
//    on one device must leave the other's buffer alone.
// Each line is a JSON object; the last says whether every check passed.
#include <cuda_runtime_api.h>
#include <executorch/runtime/core/device_memory_buffer.h>
#include <executorch/runtime/platform/runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "runner_memory.h"
#include "trtx/et/device_allocator.h"
#include "trtx/memory/shared_scratch_pool.h"
#include "trtx/runtime/cuda_api.h"

namespace et = executorch::runtime;
namespace mem = trtx::memory;

namespace {

constexpr std::uint64_t kMiB = 1u << 20;
int g_failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) ++g_failures;
  std::printf("{\"check\":\"%s\",\"ok\":%s}\n", what.c_str(), ok ? "true" : "false");
}

cudaMemPool_t pool_of(int device) {
  cudaMemPool_t pool = nullptr;
  BENCH_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
  return pool;
}

std::uint64_t pool_attr(int device, cudaMemPoolAttr attr) {
  std::uint64_t v = 0;
  BENCH_CUDA(cudaMemPoolGetAttribute(pool_of(device), attr, &v));
  return v;
}

void set_threshold(int device, std::uint64_t v) {
  BENCH_CUDA(cudaMemPoolSetAttribute(pool_of(device), cudaMemPoolAttrReleaseThreshold, &v));
}

void sync_device(int device) {
  int previous = 0;
  BENCH_CUDA(cudaGetDevice(&previous));
  BENCH_CUDA(cudaSetDevice(device));
  BENCH_CUDA(cudaDeviceSynchronize());
  BENCH_CUDA(cudaSetDevice(previous));
}

int current_device() {
  int d = -1;
  BENCH_CUDA(cudaGetDevice(&d));
  return d;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median allocation-call time (the allocator's own timing) of `n` arenas of
// `bytes` on `device`, each freed and the device synchronized before the next.
double alloc_call_median(int device, std::uint64_t bytes, int n) {
  const size_t before = trtx::et::device_allocator().stats().allocate_call_us.size();
  for (int i = 0; i < n; ++i) {
    {
      auto b = et::DeviceMemoryBuffer::create(bytes, et::etensor::DeviceType::CUDA,
                                              static_cast<et::etensor::DeviceIndex>(device));
      if (!b.ok()) return -1;
    }
    sync_device(device);
  }
  const auto all = trtx::et::device_allocator().stats().allocate_call_us;
  return median(std::vector<double>(all.begin() + static_cast<long>(before), all.end()));
}

void warm_pool_across_two_devices() {
  set_threshold(0, 0);
  set_threshold(1, kMiB);
  BENCH_CUDA(cudaSetDevice(0));
  auto memory = trtx::integration::RunnerMemory::create(trtx::runtime::Target::Cuda, {/*cold_pool=*/false, false});
  trtx::integration::RunnerMemory* m = memory.get();
  int first_uses = 0;
  trtx::et::device_allocator().configure(
      {trtx::runtime::Target::Cuda, trtx::et::ArenaFill::Poison, [m, &first_uses](int d) {
         ++first_uses;
         m->program_loaded({d});
       }});
  {
    auto a0 = et::DeviceMemoryBuffer::create(256 * kMiB, et::etensor::DeviceType::CUDA, 0);
    auto a1 = et::DeviceMemoryBuffer::create(256 * kMiB, et::etensor::DeviceType::CUDA, 1);
    expect(a0.ok() && a1.ok(), "an arena on each device");
    expect(current_device() == 0, "allocating on cuda:1 left the caller on cuda:0");
  }
  expect(first_uses == 2, "the allocator's first-use hook ran once per device");
  const std::uint64_t max = UINT64_MAX;
  expect(pool_attr(0, cudaMemPoolAttrReleaseThreshold) == max, "cuda:0 threshold raised");
  expect(pool_attr(1, cudaMemPoolAttrReleaseThreshold) == max, "cuda:1 threshold raised");
  const double warm0 = alloc_call_median(0, 64 * kMiB, 25), warm1 = alloc_call_median(1, 64 * kMiB, 25);
  sync_device(0);
  sync_device(1);
  const std::uint64_t reserved0 = pool_attr(0, cudaMemPoolAttrReservedMemCurrent);
  const std::uint64_t reserved1 = pool_attr(1, cudaMemPoolAttrReservedMemCurrent);
  expect(reserved0 >= 256 * kMiB && reserved1 >= 256 * kMiB, "both warm pools kept the freed arenas");

  int thread_device_after = -1;
  bool torn_down = false;
  std::thread other([&] {
    BENCH_CUDA(cudaSetDevice(1));
    torn_down = m->teardown().ok();
    thread_device_after = current_device();
  });
  other.join();
  expect(torn_down, "teardown from a thread on cuda:1");
  expect(thread_device_after == 1, "the releasing thread's current device put back (cuda:1)");
  expect(current_device() == 0, "the main thread still on cuda:0");
  const std::uint64_t t0 = pool_attr(0, cudaMemPoolAttrReleaseThreshold);
  const std::uint64_t t1 = pool_attr(1, cudaMemPoolAttrReleaseThreshold);
  expect(t0 == 0, "cuda:0 threshold restored to 0");
  expect(t1 == kMiB, "cuda:1 threshold restored to 1 MiB");
  const std::uint64_t after0 = pool_attr(0, cudaMemPoolAttrReservedMemCurrent);
  const std::uint64_t after1 = pool_attr(1, cudaMemPoolAttrReservedMemCurrent);
  expect(after0 == 0 && after1 == 0, "both pools trimmed");
  const double cold0 = alloc_call_median(0, 64 * kMiB, 25), cold1 = alloc_call_median(1, 64 * kMiB, 25);
  std::printf(
      "{\"warm_pool\":{\"reserved_before_trim\":[%llu,%llu],\"reserved_after_trim\":[%llu,%llu],"
      "\"thresholds_after\":[\"%llu\",\"%llu\"],\"alloc_64mib_call_us_median\":{\"warm\":[%.2f,%.2f],"
      "\"cold\":[%.2f,%.2f]}}}\n",
      static_cast<unsigned long long>(reserved0), static_cast<unsigned long long>(reserved1),
      static_cast<unsigned long long>(after0), static_cast<unsigned long long>(after1),
      static_cast<unsigned long long>(t0), static_cast<unsigned long long>(t1), warm0, warm1, cold0, cold1);
  set_threshold(1, 0);
  trtx::et::device_allocator().configure({trtx::runtime::Target::Cuda, trtx::et::ArenaFill::Poison, {}});
}

void shared_scratch_per_device() {
  mem::SharedScratchOptions options;
  options.warmupExecutes = 1;  // floor frozen at each device's first need
  mem::SharedScratchPool pool(trtx::cuda::runtime_api(), options);
  cudaStream_t streams[2] = {nullptr, nullptr};
  for (int d = 0; d < 2; ++d) {
    BENCH_CUDA(cudaSetDevice(d));
    BENCH_CUDA(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
  }
  BENCH_CUDA(cudaSetDevice(0));
  auto exec = [&](int d, std::uint64_t mib) {
    auto lease = pool.acquire(d, mib * kMiB, streams[d]);
    if (!lease.ok()) {
      expect(false, "acquire on cuda:" + std::to_string(d));
      return;
    }
    // Stands for the engine's enqueue: it writes the whole scratch.
    BENCH_CUDA(cudaSetDevice(d));
    BENCH_CUDA(cudaMemsetAsync(lease.get().pointer, 0, mib * kMiB, streams[d]));
    BENCH_CUDA(cudaSetDevice(0));
    (void)pool.handOff(lease.get(), streams[d]);
  };
  auto used = [&](int d) {
    BENCH_CUDA(cudaStreamSynchronize(streams[d]));
    sync_device(d);
    return pool_attr(d, cudaMemPoolAttrUsedMemCurrent) / kMiB;
  };
  auto phase = [&](const char* name, std::uint64_t want0, std::uint64_t want1) {
    const std::uint64_t u0 = used(0), u1 = used(1);
    const std::uint64_t c0 = pool.capacity(0) / kMiB, c1 = pool.capacity(1) / kMiB;
    std::printf("{\"scratch_phase\":\"%s\",\"capacity_mib\":[%llu,%llu],\"pool_used_mib\":[%llu,%llu]}\n", name,
                static_cast<unsigned long long>(c0), static_cast<unsigned long long>(c1),
                static_cast<unsigned long long>(u0), static_cast<unsigned long long>(u1));
    expect(c0 == want0 && c1 == want1, std::string(name) + ": capacities");
    expect(u0 == c0 && u1 == c1, std::string(name) + ": each device's pool holds exactly its one buffer");
  };
  exec(0, 8);
  exec(1, 8);
  phase("first need (floors frozen at 8 MiB)", 8, 8);
  exec(0, 64);
  exec(1, 96);
  phase("grown", 64, 96);
  for (int i = 0; i < 3; ++i) {
    exec(0, 16);
    exec(1, 96);
  }
  phase("cuda:0 reclaimed after 3 underfilled executes, cuda:1 untouched", 16, 96);
  for (int i = 0; i < 3; ++i) exec(1, 8);
  phase("cuda:1 reclaimed to its floor, cuda:0 untouched", 16, 8);
  for (const mem::CapacityEvent& e : pool.capacityEvents()) {
    std::printf(
        "{\"capacity_event\":{\"device\":%d,\"execute\":%llu,\"from_mib\":%llu,\"to_mib\":%llu,\"reason\":\"%s\"}}\n",
        e.device, static_cast<unsigned long long>(e.executeIndex), static_cast<unsigned long long>(e.from / kMiB),
        static_cast<unsigned long long>(e.to / kMiB), mem::toString(e.reason));
  }
  expect(pool.shutdown().ok(), "scratch shut down");
  phase("after shutdown", 0, 0);
  for (int d = 0; d < 2; ++d) {
    BENCH_CUDA(cudaSetDevice(d));
    BENCH_CUDA(cudaStreamDestroy(streams[d]));
  }
  BENCH_CUDA(cudaSetDevice(0));
}

}  // namespace

int main() {
  et::runtime_init();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
    std::printf("{\"skipped\":\"needs two CUDA devices, found %d\"}\n", n);
    return 77;
  }
  trtx::et::register_device_allocator();
  warm_pool_across_two_devices();
  shared_scratch_per_device();
  std::printf("{\"result\":\"%s\",\"failed_checks\":%d}\n", g_failures == 0 ? "passed" : "FAILED", g_failures);
  return g_failures == 0 ? 0 : 1;
}
