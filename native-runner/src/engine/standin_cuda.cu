// CUDA kernels of the reference engine. Every reduction runs in a fixed
// order inside one thread (no float atomics, no tree whose shape depends on
// the launch), so an engine gives the same bits on every run on one device.
#include <cuda_runtime.h>

#include "standin_cuda.h"
#include "trtx/runtime/cuda_api.h"

namespace trtx::engine::cuda_kernels {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(uint64_t n) {
  uint64_t b = (n + kThreads - 1) / kThreads;
  if (b == 0) b = 1;
  if (b > 65535u * 32u) b = 65535u * 32u;
  return static_cast<unsigned>(b);
}

__global__ void affine_kernel(AffinePlan p) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < p.n; i += uint64_t(gridDim.x) * blockDim.x) {
    float x = load_elem(p.in, p.tin, i);
    store_elem(p.out, p.tout, i, ref_add(ref_mul(x, p.scale), p.bias));
  }
}

__global__ void kv_write_kernel(KvWritePlan p, uint32_t* fault) {
  int64_t pos = load_position(p.position, p.tposition);
  uint64_t total = p.outer * p.inner;
  if (pos < 0 || static_cast<uint64_t>(pos) >= p.seq) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      *reinterpret_cast<volatile int64_t*>(reinterpret_cast<char*>(fault) + 8) = pos;
      __threadfence_system();
      *reinterpret_cast<volatile uint32_t*>(fault) = kFaultPosition;
    }
    return;
  }
  for (uint64_t e = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; e < total; e += uint64_t(gridDim.x) * blockDim.x) {
    uint64_t o = e / p.inner;
    uint64_t i = e % p.inner;
    float factor = ref_add(1.0f, ref_mul(p.salt, static_cast<float>(o)));
    float v = ref_mul(load_elem(p.source, p.tsource, (o * p.inner + i) % p.n_source), factor);
    store_elem(p.cache, p.tcache, (o * p.seq + static_cast<uint64_t>(pos)) * p.inner + i, v);
  }
}

__global__ void attend_partial_kernel(AttendCache c, uint64_t n, float* partial) {
  for (uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; j < n; j += uint64_t(gridDim.x) * blockDim.x) {
    partial[j] = attend_partial(c, n, j);
  }
}

__global__ void attend_combine_kernel(AttendPlan p, const float* partials) {
  for (uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; j < p.n; j += uint64_t(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int c = 0; c < p.n_caches; ++c) sum = ref_add(sum, partials[uint64_t(c) * p.n + j]);
    float q = load_elem(p.query, p.tquery, j % p.n_query);
    store_elem(p.out, p.tout, j, ref_add(q, sum));
  }
}

__global__ void ring_shift_kernel(RingShiftPlan p) {
  uint64_t total = p.rows * p.width;
  for (uint64_t e = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; e < total; e += uint64_t(gridDim.x) * blockDim.x) {
    uint64_t r = e / p.width;
    uint64_t t = e % p.width;
    float v =
        t + 1 < p.width ? load_elem(p.in, p.tin, r * p.width + t + 1) : load_elem(p.source, p.tsource, r % p.n_source);
    store_elem(p.out, p.tout, e, v);
  }
}

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

Status affine(const AffinePlan& p, void* stream) {
  affine_kernel<<<blocks_for(p.n), kThreads, 0, as_stream(stream)>>>(p);
  return trtx::cuda::runtime_api().last_launch_error("reference Affine kernel");
}

Status kv_write(const KvWritePlan& p, void* fault, void* stream) {
  kv_write_kernel<<<blocks_for(p.outer * p.inner), kThreads, 0, as_stream(stream)>>>(p, static_cast<uint32_t*>(fault));
  return trtx::cuda::runtime_api().last_launch_error("reference KvWrite kernel");
}

Status attend(const AttendPlan& p, float* scratch, void* stream) {
  for (int c = 0; c < p.n_caches; ++c) {
    attend_partial_kernel<<<blocks_for(p.n), kThreads, 0, as_stream(stream)>>>(p.caches[c], p.n,
                                                                               scratch + uint64_t(c) * p.n);
    TRTX_CHECK_OK(trtx::cuda::runtime_api().last_launch_error("reference Attend partial kernel"));
  }
  attend_combine_kernel<<<blocks_for(p.n), kThreads, 0, as_stream(stream)>>>(p, scratch);
  return trtx::cuda::runtime_api().last_launch_error("reference Attend combine kernel");
}

Status ring_shift(const RingShiftPlan& p, void* stream) {
  ring_shift_kernel<<<blocks_for(p.rows * p.width), kThreads, 0, as_stream(stream)>>>(p);
  return trtx::cuda::runtime_api().last_launch_error("reference RingShift kernel");
}

}  // namespace trtx::engine::cuda_kernels
