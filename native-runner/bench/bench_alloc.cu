// (a) Per-allocation cost of the stream-ordered allocator, cold pool (release
// threshold 0: every synchronize hands memory back) vs warm pool (raised to
// the maximum by trtx::memory::WarmPool over the runner's CUDA wrapper, cuda::Api).
// One iteration: cudaMallocAsync + 256-byte memset + cudaFreeAsync + stream
// synchronize. Reported: the cudaMallocAsync call alone (host clock around
// it) and the whole round trip, median of 200 after 5 untimed.
#include <cstdio>
#include <memory>
#include <vector>

#include "bench_common.h"
#include "trtx/memory/warm_pool.h"
#include "trtx/runtime/cuda_api.h"

using namespace bench;

namespace {
constexpr int kIterations = 200;
constexpr int kWarmup = 5;

struct Timing {
  double allocUs;
  double tripUs;
  double allocP90;
  double tripP90;
};

Timing measure(std::size_t bytes, cudaStream_t stream) {
  std::vector<double> alloc, trip;
  for (int i = 0; i < kWarmup + kIterations; ++i) {
    void* p = nullptr;
    const double t0 = nowUs();
    BENCH_CUDA(cudaMallocAsync(&p, bytes, stream));
    const double t1 = nowUs();
    BENCH_CUDA(cudaMemsetAsync(p, i & 0xff, 256, stream));
    BENCH_CUDA(cudaFreeAsync(p, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
    const double t2 = nowUs();
    if (i >= kWarmup) {
      alloc.push_back(t1 - t0);
      trip.push_back(t2 - t0);
    }
  }
  return Timing{median(alloc), median(trip), percentile(alloc, 0.9), percentile(trip, 0.9)};
}
}  // namespace

int main(int argc, char** argv) {
  JsonLines json(argc > 1 ? argv[1] : nullptr);
  BENCH_CUDA(cudaSetDevice(0));
  BENCH_CUDA(cudaFree(nullptr));
  cudaStream_t stream = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  trtx::cuda::Api* api = &trtx::cuda::runtime_api();
  const std::uint64_t initialThreshold = poolAttr(cudaMemPoolAttrReleaseThreshold);
  std::printf("initial default-pool release threshold: %llu\n", (unsigned long long)initialThreshold);

  const std::size_t sizes[] = {1 * kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB, 1024 * kMiB};
  std::printf("\n(a) cudaMallocAsync + 256 B memset + cudaFreeAsync + stream sync, median of %d\n\n", kIterations);
  std::printf(
      "| size | cold alloc call us | warm alloc call us | alloc ratio | cold round trip us | warm round trip us | "
      "round-trip ratio |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t bytes : sizes) {
    // Cold: threshold 0, pool emptied first.
    setThreshold(0);
    coldStart();
    const Timing cold = measure(bytes, stream);

    // Warm: the runner's WarmPool raises the threshold; its release restores
    // and trims, which is checked below.
    trtx::memory::WarmPool pool(*api);
    std::vector<trtx::memory::PoolState> states = pool.acquire({0});
    BENCH_EXPECT(states[0] == trtx::memory::PoolState::kRaised, "warm pool state %s",
                 trtx::memory::toString(states[0]));
    BENCH_EXPECT(poolAttr(cudaMemPoolAttrReleaseThreshold) == kMaxThreshold, "threshold not raised");
    const Timing warm = measure(bytes, stream);
    const std::uint64_t reservedHeld = poolAttr(cudaMemPoolAttrReservedMemCurrent);
    BENCH_EXPECT(reservedHeld >= bytes, "warm pool did not retain the block (%llu)", (unsigned long long)reservedHeld);
    trtx::Status released = pool.release();
    BENCH_EXPECT(released.ok(), "release: %s", trtx::memory::describe(released.failure()).c_str());
    BENCH_EXPECT(poolAttr(cudaMemPoolAttrReleaseThreshold) == 0, "threshold not restored");
    const std::uint64_t reservedAfter = poolAttr(cudaMemPoolAttrReservedMemCurrent);
    BENCH_EXPECT(reservedAfter == 0, "pool not trimmed on release (%llu)", (unsigned long long)reservedAfter);

    const double mib = double(bytes) / kMiB;
    std::printf("| %.0f MiB | %.2f | %.2f | %.1fx | %.2f | %.2f | %.1fx |\n", mib, cold.allocUs, warm.allocUs,
                cold.allocUs / warm.allocUs, cold.tripUs, warm.tripUs, cold.tripUs / warm.tripUs);
    json.line(
        "{\"bench\":\"alloc\",\"bytes\":%zu,\"cold_alloc_us\":%.3f,\"warm_alloc_us\":%.3f,\"cold_trip_us\":%.3f,"
        "\"warm_trip_us\":%.3f,\"cold_alloc_p90_us\":%.3f,\"warm_alloc_p90_us\":%.3f,\"cold_trip_p90_us\":%.3f,"
        "\"warm_trip_p90_us\":%.3f,\"warm_reserved_held\":%llu,\"reserved_after_release\":%llu}",
        bytes, cold.allocUs, warm.allocUs, cold.tripUs, warm.tripUs, cold.allocP90, warm.allocP90, cold.tripP90,
        warm.tripP90, (unsigned long long)reservedHeld, (unsigned long long)reservedAfter);
  }
  setThreshold(initialThreshold);
  BENCH_CUDA(cudaStreamDestroy(stream));
  return finish("bench_alloc");
}
