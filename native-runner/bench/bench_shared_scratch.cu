// (c) Six engines with equal activation scratch (281,018,368 B each, the
// per-engine figure of pytorch/TensorRT#4600's six-engine measurement),
// alternating between two streams: peak device memory with a private buffer
// per engine vs one trtx::memory::SharedScratchPool buffer on the device, and
// every engine's output compared bit for bit between modes.
// Each engine fills its whole scratch from its input, then reduces it to a
// checksum: an engine that overlapped another on the shared buffer would read
// the other's bytes and change its checksum.
#include <cstdio>
#include <memory>
#include <vector>

#include "bench_common.h"
#include "trtx/memory/shared_scratch_pool.h"
#include "trtx/memory/warm_pool.h"
#include "trtx/runtime/cuda_api.h"

using namespace bench;
using trtx::memory::SharedScratchOptions;
using trtx::memory::SharedScratchPool;

namespace {
constexpr int kEngines = 6;
constexpr int kSteps = 3;
constexpr std::size_t kScratchBytes = 281018368;
constexpr int kInputWords = 4096;

__device__ __forceinline__ unsigned mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__global__ void fillKernel(unsigned* scratch, std::size_t words, const unsigned* input, unsigned salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x) {
    scratch[i] = mix(input[i % kInputWords] ^ unsigned(i) ^ salt);
  }
}

__global__ void reduceKernel(const unsigned* scratch, std::size_t words, unsigned long long* out) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x) {
    local += (unsigned long long)scratch[i] * (unsigned long long)((i & 1023) + 1);
  }
  atomicAdd(out, local);  // integer sums: the order does not change the result
}

struct ModeResult {
  std::uint64_t usedHigh = 0;
  std::uint64_t reservedHigh = 0;
  std::size_t deviceUsedPeak = 0;  // cudaMemGetInfo, minus the baseline before the mode
  std::vector<unsigned long long> outputs;
  std::string report;
};

std::size_t usedSince(std::size_t baseline) {
  const std::size_t used = deviceUsedBytes();
  return used > baseline ? used - baseline : 0;
}

ModeResult runMode(bool shared, cudaStream_t streams[2], unsigned* inputs, unsigned long long* outputs,
                   trtx::cuda::Api& api) {
  coldStart();
  const std::size_t baseline = deviceUsedBytes();
  SharedScratchOptions options;
  options.warmupExecutes = kEngines;  // one program execute
  std::vector<std::unique_ptr<SharedScratchPool>> pools;
  for (int e = 0; e < (shared ? 1 : kEngines); ++e) {
    pools.push_back(std::make_unique<SharedScratchPool>(api, options));
  }
  ModeResult result;
  BENCH_CUDA(cudaMemset(outputs, 0, sizeof(unsigned long long) * kEngines * kSteps));
  const std::size_t words = kScratchBytes / sizeof(unsigned);
  for (int step = 0; step < kSteps; ++step) {
    for (int e = 0; e < kEngines; ++e) {
      cudaStream_t stream = streams[e % 2];
      SharedScratchPool& pool = *pools[shared ? 0 : e];
      auto lease = pool.acquire(0, kScratchBytes, stream);
      if (!lease.ok()) {
        BENCH_EXPECT(false, "acquire: %s", trtx::memory::describe(lease.failure()).c_str());
        continue;
      }
      result.deviceUsedPeak = std::max(result.deviceUsedPeak, usedSince(baseline));
      unsigned* scratch = static_cast<unsigned*>(lease.get().pointer);
      fillKernel<<<1056, 256, 0, stream>>>(scratch, words, inputs + e * kInputWords, unsigned(step * 131 + e));
      BENCH_LAUNCHED();
      reduceKernel<<<1056, 256, 0, stream>>>(scratch, words, outputs + step * kEngines + e);
      BENCH_LAUNCHED();
      BENCH_EXPECT(pool.handOff(lease.get(), stream).ok(), "handOff");
    }
    BENCH_CUDA(cudaStreamSynchronize(streams[0]));
    BENCH_CUDA(cudaStreamSynchronize(streams[1]));
    result.deviceUsedPeak = std::max(result.deviceUsedPeak, usedSince(baseline));
  }
  result.usedHigh = poolAttr(cudaMemPoolAttrUsedMemHigh);
  result.reservedHigh = poolAttr(cudaMemPoolAttrReservedMemHigh);
  result.outputs.resize(kEngines * kSteps);
  BENCH_CUDA(cudaMemcpy(result.outputs.data(), outputs, sizeof(unsigned long long) * kEngines * kSteps,
                        cudaMemcpyDeviceToHost));
  result.report = pools[0]->reportJson();
  for (auto& pool : pools) BENCH_EXPECT(pool->shutdown().ok(), "shutdown");
  return result;
}
}  // namespace

int main(int argc, char** argv) {
  JsonLines json(argc > 1 ? argv[1] : nullptr);
  BENCH_CUDA(cudaSetDevice(0));
  cudaStream_t streams[2];
  for (auto& s : streams) BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned* inputs = nullptr;
  unsigned long long* outputs = nullptr;
  BENCH_CUDA(cudaMalloc(&inputs, sizeof(unsigned) * kInputWords * kEngines));
  BENCH_CUDA(cudaMalloc(&outputs, sizeof(unsigned long long) * kEngines * kSteps));
  std::vector<unsigned> host(kInputWords * kEngines);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = unsigned(i * 2654435761u + 12345u);
  BENCH_CUDA(cudaMemcpy(inputs, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice));

  trtx::cuda::Api* api = &trtx::cuda::runtime_api();
  trtx::memory::WarmPool warm(*api);
  warm.acquire({0});

  ModeResult priv = runMode(false, streams, inputs, outputs, trtx::cuda::runtime_api());
  ModeResult shared = runMode(true, streams, inputs, outputs, trtx::cuda::runtime_api());
  BENCH_EXPECT(warm.release().ok(), "warm pool release");

  const bool identical = priv.outputs == shared.outputs;
  BENCH_EXPECT(identical, "engine outputs differ between private and shared scratch");
  const double scratchTotal = double(kScratchBytes) * kEngines;
  const double reclaimedOfScratch = (double(priv.usedHigh) - double(shared.usedHigh)) / scratchTotal;
  const double target = double(kEngines - 1) / kEngines;
  BENCH_EXPECT(reclaimedOfScratch >= target - 1e-9, "reclaimed %.4f < %.4f", reclaimedOfScratch, target);

  std::printf("\n(c) %d engines x %zu B scratch, 2 streams, %d program executes\n\n", kEngines, kScratchBytes, kSteps);
  std::printf("| mode | pool used high MiB | pool reserved high MiB | device used peak MiB (cudaMemGetInfo) |\n");
  std::printf("|---|---:|---:|---:|\n");
  std::printf("| private | %.1f | %.1f | %.1f |\n", priv.usedHigh / double(kMiB), priv.reservedHigh / double(kMiB),
              priv.deviceUsedPeak / double(kMiB));
  std::printf("| shared | %.1f | %.1f | %.1f |\n", shared.usedHigh / double(kMiB), shared.reservedHigh / double(kMiB),
              shared.deviceUsedPeak / double(kMiB));
  std::printf(
      "\nreclaimed: %.4f of the private scratch (target (N-1)/N = %.4f); private/shared %.2fx; outputs identical: %s\n",
      reclaimedOfScratch, target, double(priv.usedHigh) / double(shared.usedHigh), identical ? "yes" : "NO");
  std::printf("shared pool report: %s\n", shared.report.c_str());
  json.line(
      "{\"bench\":\"shared_scratch\",\"engines\":%d,\"scratch_bytes\":%zu,\"private_used_high\":%llu,"
      "\"shared_used_high\":%llu,\"private_reserved_high\":%llu,\"shared_reserved_high\":%llu,"
      "\"private_device_peak\":%zu,\"shared_device_peak\":%zu,\"reclaimed_fraction\":%.5f,\"identical\":%s}",
      kEngines, kScratchBytes, (unsigned long long)priv.usedHigh, (unsigned long long)shared.usedHigh,
      (unsigned long long)priv.reservedHigh, (unsigned long long)shared.reservedHigh, priv.deviceUsedPeak,
      shared.deviceUsedPeak, reclaimedOfScratch, identical ? "true" : "false");

  BENCH_CUDA(cudaFree(inputs));
  BENCH_CUDA(cudaFree(outputs));
  for (auto& s : streams) BENCH_CUDA(cudaStreamDestroy(s));
  return finish("bench_shared_scratch");
}
