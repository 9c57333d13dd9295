// (b) A decode step split into 25 delegates, each allocating its scratch with
// cudaMallocAsync, running one small kernel on it, freeing it and
// synchronizing (a delegate execute with no caller stream). Median step time
// with the pool cold (threshold 0) vs warm (trtx::memory::WarmPool), two
// passes each, and the step's output compared bit for bit between them.
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "bench_common.h"
#include "trtx/memory/warm_pool.h"
#include "trtx/runtime/cuda_api.h"

using namespace bench;

namespace {
constexpr int kDelegates = 25;
constexpr int kSteps = 200;
constexpr int kWarmupSteps = 20;
constexpr int kWidth = 1 << 16;  // activation floats each delegate reads and writes

// Stages the activation through the delegate's scratch, as a layer would.
__global__ void layerKernel(float* act, float* scratch, int n, int layer) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = act[i];
  scratch[i] = x * 0.5f + 0.25f * float(layer + 1);
  scratch[n + i] = x * x * 1e-3f;
  act[i] = scratch[i] - scratch[n + i];
}

std::size_t scratchBytes(int layer) {
  // 2 to 32 MiB, a mix like the per-layer workspaces of a small decoder.
  return (std::size_t(2) << (layer % 5)) * kMiB;
}

std::vector<double> runSteps(float* act, cudaStream_t stream, int steps) {
  std::vector<double> times;
  for (int s = 0; s < steps; ++s) {
    const double t0 = nowUs();
    for (int layer = 0; layer < kDelegates; ++layer) {
      void* scratch = nullptr;
      BENCH_CUDA(cudaMallocAsync(&scratch, scratchBytes(layer), stream));
      layerKernel<<<(kWidth + 255) / 256, 256, 0, stream>>>(act, static_cast<float*>(scratch), kWidth, layer);
      BENCH_LAUNCHED();
      BENCH_CUDA(cudaFreeAsync(scratch, stream));
      BENCH_CUDA(cudaStreamSynchronize(stream));
    }
    times.push_back(nowUs() - t0);
  }
  return times;
}

void resetActivation(float* act) {
  std::vector<float> host(kWidth);
  for (int i = 0; i < kWidth; ++i) host[i] = 0.001f * float((i * 7919) % 1000) - 0.5f;
  BENCH_CUDA(cudaMemcpy(act, host.data(), kWidth * sizeof(float), cudaMemcpyHostToDevice));
}

std::vector<float> readActivation(const float* act) {
  std::vector<float> host(kWidth);
  BENCH_CUDA(cudaMemcpy(host.data(), act, kWidth * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}
}  // namespace

int main(int argc, char** argv) {
  JsonLines json(argc > 1 ? argv[1] : nullptr);
  BENCH_CUDA(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float* act = nullptr;
  BENCH_CUDA(cudaMalloc(&act, kWidth * sizeof(float)));
  trtx::cuda::Api* api = &trtx::cuda::runtime_api();

  std::printf(
      "\n(b) decode step of %d delegates (scratch 2..32 MiB each, alloc/kernel/free/sync), %d steps after %d\n\n",
      kDelegates, kSteps, kWarmupSteps);
  std::printf(
      "| pass | cold median step us | warm median step us | ratio | cold p90 | warm p90 | outputs identical |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---|\n");
  for (int pass = 1; pass <= 2; ++pass) {
    setThreshold(0);
    coldStart();
    resetActivation(act);
    runSteps(act, stream, kWarmupSteps);
    resetActivation(act);
    std::vector<double> cold = runSteps(act, stream, kSteps);
    std::vector<float> coldOut = readActivation(act);

    trtx::memory::WarmPool pool(*api);
    pool.acquire({0});
    resetActivation(act);
    runSteps(act, stream, kWarmupSteps);
    resetActivation(act);
    std::vector<double> warm = runSteps(act, stream, kSteps);
    std::vector<float> warmOut = readActivation(act);
    BENCH_EXPECT(pool.release().ok(), "warm pool release");

    const bool same = std::memcmp(coldOut.data(), warmOut.data(), kWidth * sizeof(float)) == 0;
    BENCH_EXPECT(same, "cold and warm outputs differ");
    std::printf("| %d | %.1f | %.1f | %.2fx | %.1f | %.1f | %s |\n", pass, median(cold), median(warm),
                median(cold) / median(warm), percentile(cold, 0.9), percentile(warm, 0.9), same ? "yes" : "NO");
    json.line(
        "{\"bench\":\"decode\",\"pass\":%d,\"delegates\":%d,\"cold_median_us\":%.2f,\"warm_median_us\":%.2f,"
        "\"cold_p90_us\":%.2f,\"warm_p90_us\":%.2f,\"identical\":%s}",
        pass, kDelegates, median(cold), median(warm), percentile(cold, 0.9), percentile(warm, 0.9),
        same ? "true" : "false");
  }
  BENCH_CUDA(cudaFree(act));
  BENCH_CUDA(cudaStreamDestroy(stream));
  return finish("bench_decode");
}
