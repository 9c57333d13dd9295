// Functional checks of the CUDA wiring on a real GPU (one device): the warm
// pool against the driver's default pool, and the shared scratch hand-off,
// growth and shrink with cudaMallocAsync / events. Also run under
// compute-sanitizer memcheck by run_all.sh.
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "trtx/memory/shared_scratch_pool.h"
#include "trtx/memory/warm_pool.h"
#include "trtx/runtime/cuda_api.h"

using namespace bench;
using trtx::memory::PoolState;
using trtx::memory::SharedScratchPool;
using trtx::memory::WarmPool;

namespace {
constexpr std::size_t kWords = std::size_t(1) << 20;
constexpr unsigned long long kSpinNs = 5ull * 1000 * 1000;

__device__ unsigned long long globalNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Writes `value` over the buffer, waits, then copies what is there to `out`:
// anything else that wrote the buffer meanwhile shows up in `out`.
__global__ void holdKernel(unsigned* buf, std::size_t n, unsigned value, unsigned long long spinNs, unsigned* out) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    buf[i] = value;
  }
  const unsigned long long start = globalNs();
  while (globalNs() - start < spinNs) {
  }
  __threadfence();
  volatile unsigned* v = buf;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    out[i] = v[i];
  }
}

std::size_t countNot(const unsigned* devOut, std::size_t n, unsigned value) {
  std::vector<unsigned> host(n);
  BENCH_CUDA(cudaMemcpy(host.data(), devOut, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::size_t bad = 0;
  for (unsigned x : host) bad += x != value;
  return bad;
}

void checkWarmPool(trtx::cuda::Api& api) {
  std::printf("-- warm pool against the default pool\n");
  setThreshold(0);
  coldStart();
  cudaStream_t s = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  {
    WarmPool pool(api);
    BENCH_EXPECT(pool.acquire({0})[0] == PoolState::kRaised, "state not raised");
    BENCH_EXPECT(poolAttr(cudaMemPoolAttrReleaseThreshold) == kMaxThreshold, "threshold not max");
    void* p = nullptr;
    BENCH_CUDA(cudaMallocAsync(&p, 64 * kMiB, s));
    BENCH_CUDA(cudaFreeAsync(p, s));
    BENCH_CUDA(cudaStreamSynchronize(s));
    const std::uint64_t held = poolAttr(cudaMemPoolAttrReservedMemCurrent);
    BENCH_EXPECT(held >= 64 * kMiB, "warm pool kept %llu B", (unsigned long long)held);
    // Released from another host thread, as a teardown on another thread would.
    trtx::Status released;
    std::thread other([&] { released = pool.release(); });
    other.join();
    BENCH_EXPECT(released.ok(), "release: %s", trtx::memory::describe(released.failure()).c_str());
    BENCH_EXPECT(poolAttr(cudaMemPoolAttrReleaseThreshold) == 0, "threshold not restored");
    const std::uint64_t after = poolAttr(cudaMemPoolAttrReservedMemCurrent);
    BENCH_EXPECT(after == 0, "pool not trimmed: %llu B", (unsigned long long)after);
    std::printf("   raised, held %llu B, released from another thread: threshold 0, reserved %llu B\n",
                (unsigned long long)held, (unsigned long long)after);
    std::printf("   report: %s\n", pool.reportJson().c_str());
  }
  {
    // Someone else already keeps the pool at the maximum: left alone, not trimmed.
    setThreshold(kMaxThreshold);
    WarmPool pool(api);
    BENCH_EXPECT(pool.acquire({0})[0] == PoolState::kAlreadyMax, "state not already_max");
    void* p = nullptr;
    BENCH_CUDA(cudaMallocAsync(&p, 16 * kMiB, s));
    BENCH_CUDA(cudaFreeAsync(p, s));
    BENCH_CUDA(cudaStreamSynchronize(s));
    BENCH_EXPECT(pool.release().ok(), "release");
    BENCH_EXPECT(poolAttr(cudaMemPoolAttrReleaseThreshold) == kMaxThreshold, "someone else's maximum was lowered");
    BENCH_EXPECT(poolAttr(cudaMemPoolAttrReservedMemCurrent) >= 16 * kMiB, "someone else's pool was trimmed");
    setThreshold(0);
    coldStart();
  }
  {
    // --cold-pool: nothing touched.
    WarmPool pool(api, trtx::memory::WarmPoolOptions{false});
    pool.acquire({0});
    BENCH_EXPECT(poolAttr(cudaMemPoolAttrReleaseThreshold) == 0, "cold pool changed the threshold");
    (void)pool.release();
  }
  {
    // A device that does not exist: reported, error cleared, execution goes on.
    WarmPool pool(api);
    std::vector<PoolState> states = pool.acquire({0, 99});
    BENCH_EXPECT(states[1] == PoolState::kFailed, "device 99 not reported failed");
    BENCH_EXPECT(cudaGetLastError() == cudaSuccess, "CUDA error left latched");
    std::printf("   bad device report: %s\n", pool.reportJson().c_str());
    BENCH_EXPECT(pool.release().ok(), "release");
  }
  BENCH_CUDA(cudaStreamDestroy(s));
}

void checkHandOff(trtx::cuda::Api& api) {
  std::printf("-- hand-off between two streams on one buffer\n");
  cudaStream_t s1 = nullptr, s2 = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  BENCH_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  unsigned *outA = nullptr, *outB = nullptr, *raw = nullptr;
  BENCH_CUDA(cudaMalloc(&outA, kWords * sizeof(unsigned)));
  BENCH_CUDA(cudaMalloc(&outB, kWords * sizeof(unsigned)));
  BENCH_CUDA(cudaMalloc(&raw, kWords * sizeof(unsigned)));

  // Negative control: the same two enqueues with no ordering overlap.
  holdKernel<<<64, 256, 0, s1>>>(raw, kWords, 0xAAAAAAAAu, kSpinNs, outA);
  BENCH_LAUNCHED();
  holdKernel<<<64, 256, 0, s2>>>(raw, kWords, 0xBBBBBBBBu, 0, outB);
  BENCH_LAUNCHED();
  BENCH_CUDA(cudaDeviceSynchronize());
  const std::size_t raced = countNot(outA, kWords, 0xAAAAAAAAu);
  std::printf("   negative control (no hand-off): %zu of %zu words of A overwritten by B\n", raced, kWords);

  SharedScratchPool pool(api);
  auto a = pool.acquire(0, kWords * sizeof(unsigned), s1);
  if (!a.ok()) {
    BENCH_EXPECT(false, "acquire A: %s", trtx::memory::describe(a.failure()).c_str());
    return;
  }
  holdKernel<<<64, 256, 0, s1>>>(static_cast<unsigned*>(a.get().pointer), kWords, 0xAAAAAAAAu, kSpinNs, outA);
  BENCH_LAUNCHED();
  BENCH_EXPECT(pool.handOff(a.get(), s1).ok(), "handOff A");
  auto b = pool.acquire(0, kWords * sizeof(unsigned), s2);
  if (!b.ok()) {
    BENCH_EXPECT(false, "acquire B: %s", trtx::memory::describe(b.failure()).c_str());
    return;
  }
  BENCH_EXPECT(b.get().pointer == a.get().pointer, "B did not get the shared buffer");
  holdKernel<<<64, 256, 0, s2>>>(static_cast<unsigned*>(b.get().pointer), kWords, 0xBBBBBBBBu, 0, outB);
  BENCH_LAUNCHED();
  BENCH_EXPECT(pool.handOff(b.get(), s2).ok(), "handOff B");
  BENCH_CUDA(cudaDeviceSynchronize());
  const std::size_t badA = countNot(outA, kWords, 0xAAAAAAAAu);
  const std::size_t badB = countNot(outB, kWords, 0xBBBBBBBBu);
  BENCH_EXPECT(badA == 0 && badB == 0, "hand-off let enqueues overlap (%zu, %zu)", badA, badB);
  std::printf("   with the pool's event hand-off: A intact (%zu bad), B intact (%zu bad)\n", badA, badB);

  // Growth while A's enqueue may still be reading the old buffer on s1.
  auto a2 = pool.acquire(0, kWords * sizeof(unsigned), s1);
  if (!a2.ok()) {
    BENCH_EXPECT(false, "acquire A2: %s", trtx::memory::describe(a2.failure()).c_str());
    return;
  }
  holdKernel<<<64, 256, 0, s1>>>(static_cast<unsigned*>(a2.get().pointer), kWords, 0xCCCCCCCCu, kSpinNs, outA);
  BENCH_LAUNCHED();
  (void)pool.handOff(a2.get(), s1);
  auto grown = pool.acquire(0, 64 * kMiB, s2);
  if (!grown.ok()) {
    BENCH_EXPECT(false, "growth: %s", trtx::memory::describe(grown.failure()).c_str());
    return;
  }
  BENCH_EXPECT(grown.get().pointer != a2.get().pointer, "growth kept the pointer");
  holdKernel<<<64, 256, 0, s2>>>(static_cast<unsigned*>(grown.get().pointer), kWords, 0xDDDDDDDDu, 0, outB);
  BENCH_LAUNCHED();
  (void)pool.handOff(grown.get(), s2);
  BENCH_CUDA(cudaDeviceSynchronize());
  BENCH_EXPECT(countNot(outA, kWords, 0xCCCCCCCCu) == 0, "enqueue on the old buffer was disturbed by the growth");
  BENCH_EXPECT(countNot(outB, kWords, 0xDDDDDDDDu) == 0, "enqueue on the new buffer wrong");
  std::printf("   growth 4 MiB -> 64 MiB across streams with the old buffer in use: both outputs intact\n");
  std::printf("   report: %s\n", pool.reportJson().c_str());
  BENCH_EXPECT(pool.shutdown().ok(), "shutdown");

  BENCH_CUDA(cudaFree(outA));
  BENCH_CUDA(cudaFree(outB));
  BENCH_CUDA(cudaFree(raw));
  BENCH_CUDA(cudaStreamDestroy(s1));
  BENCH_CUDA(cudaStreamDestroy(s2));
}

void checkShrink(trtx::cuda::Api& api) {
  std::printf("-- shrink returns the pool's used memory to the floor\n");
  coldStart();
  cudaStream_t s = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  SharedScratchPool pool(api);
  unsigned* out = nullptr;
  BENCH_CUDA(cudaMalloc(&out, kWords * sizeof(unsigned)));
  std::uint64_t usedAfter[6] = {};
  const std::size_t needs[6] = {64 * kMiB, 1024 * kMiB, 32 * kMiB, 48 * kMiB, 40 * kMiB, 32 * kMiB};
  for (int i = 0; i < 6; ++i) {
    auto lease = pool.acquire(0, needs[i], s);
    if (!lease.ok()) {
      BENCH_EXPECT(false, "acquire %d: %s", i, trtx::memory::describe(lease.failure()).c_str());
      return;
    }
    holdKernel<<<64, 256, 0, s>>>(static_cast<unsigned*>(lease.get().pointer), kWords, 0x1111u * (i + 1), 0, out);
    BENCH_LAUNCHED();
    (void)pool.handOff(lease.get(), s);
    BENCH_CUDA(cudaStreamSynchronize(s));
    usedAfter[i] = poolAttr(cudaMemPoolAttrUsedMemCurrent);
  }
  BENCH_EXPECT(pool.capacity(0) == 64 * kMiB, "capacity %zu after the 3rd underfilled execute", pool.capacity(0));
  BENCH_EXPECT(usedAfter[3] >= 1024 * kMiB, "shrunk too early");
  BENCH_EXPECT(usedAfter[4] < 128 * kMiB, "pool still uses %llu B", (unsigned long long)usedAfter[4]);
  std::printf("   pool used MiB after each execute: ");
  for (std::uint64_t u : usedAfter) std::printf("%.0f ", u / double(kMiB));
  std::printf("\n   report: %s\n", pool.reportJson().c_str());
  BENCH_EXPECT(pool.shutdown().ok(), "shutdown");
  BENCH_CUDA(cudaFree(out));
  BENCH_CUDA(cudaStreamDestroy(s));
}
}  // namespace

int main() {
  BENCH_CUDA(cudaSetDevice(0));
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  int pools = 0;
  BENCH_CUDA(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
  int count = 0;
  BENCH_CUDA(cudaGetDeviceCount(&count));
  std::printf("device 0: %s, sm_%d%d, %d device(s), memory pools supported: %d\n", prop.name, prop.major, prop.minor,
              count, pools);
  trtx::cuda::Api* api = &trtx::cuda::runtime_api();
  checkWarmPool(*api);
  checkHandOff(trtx::cuda::runtime_api());
  checkShrink(trtx::cuda::runtime_api());
  int current = -1;
  BENCH_CUDA(cudaGetDevice(&current));
  BENCH_EXPECT(current == 0, "current device changed to %d", current);
  return finish("gpu_check");
}
