// The warm pool inside the registered device allocator (CUDA builds):
//   bench_registered_alloc [ITERATIONS] > lines.jsonl
// Each allocation goes the way ExecuTorch's Module allocates a device arena:
// DeviceMemoryBuffer::create -> the DeviceAllocator registry -> trtx's
// allocator (cudaMallocAsync from the default pool), then the buffer is
// destroyed (cudaFreeAsync) and the legacy stream synchronized, which is when
// a cold pool (release threshold 0) hands the memory back to the driver.
// Warm: the allocator's first-use hook raised the threshold (the runner's
// RunnerMemory, as trtx-runner wires it); cold: --cold-pool, no pool call.
// Per size, the median of the allocation call alone (the allocator's own
// timing) and of the whole round trip (create, destroy, synchronize): the
// round trip has a floor of a launch plus a synchronize that is not the
// allocator's, so each is reported (bench/device-memory.md).
#include <executorch/runtime/core/device_memory_buffer.h>
#include <executorch/runtime/platform/runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runner_memory.h"
#include "trtx/et/device_allocator.h"

namespace et = executorch::runtime;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
  et::runtime_init();
  if (!trtx::runtime::cuda_built() || trtx::runtime::cuda_device_count() == 0) {
    std::fprintf(stderr, "bench_registered_alloc: needs a CUDA build and a GPU\n");
    return 2;
  }
  trtx::et::register_device_allocator();
  const trtx::runtime::DeviceContext device(trtx::runtime::Target::Cuda, 0);
  for (const bool warm : {false, true}) {
    auto memory = trtx::integration::RunnerMemory::create(trtx::runtime::Target::Cuda, {/*cold_pool=*/!warm, false});
    trtx::integration::RunnerMemory* m = memory.get();
    trtx::et::device_allocator().configure(
        {trtx::runtime::Target::Cuda, trtx::et::ArenaFill::None, [m](int d) { m->program_loaded({d}); }});
    // The first-use hook runs once per device per process; call it here for
    // the second configuration too.
    m->program_loaded({0});
    for (const size_t mib : {1, 64, 256, 1024}) {
      const size_t bytes = mib << 20;
      std::vector<double> round_trip;
      const size_t before = trtx::et::device_allocator().stats().allocate_call_us.size();
      for (int i = 0; i < iterations; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        {
          auto b = et::DeviceMemoryBuffer::create(bytes, et::etensor::DeviceType::CUDA, 0);
          if (!b.ok()) {
            std::fprintf(stderr, "allocation of %zu MiB failed\n", mib);
            return 1;
          }
        }
        (void)device.synchronize(trtx::runtime::StreamRef{});
        round_trip.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      const auto all = trtx::et::device_allocator().stats().allocate_call_us;
      std::vector<double> calls(all.begin() + static_cast<long>(before), all.end());
      std::printf(
          "{\"pool\":\"%s\",\"mib\":%zu,\"iterations\":%d,\"allocate_call_us_median\":%.3f,"
          "\"round_trip_us_median\":%.3f}\n",
          warm ? "warm" : "cold", mib, iterations, median(calls), median(round_trip));
    }
    (void)memory->teardown();
  }
  return 0;
}
