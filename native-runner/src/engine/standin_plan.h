// Resolved launch parameters of the reference engine's steps (internal),
// shared by the CPU executor and the CUDA kernels.
#pragma once

#include <cstdint>

#include "trtx/runtime/half.h"
#include "trtx/runtime/scalar_type.h"

namespace trtx::engine {

struct AffinePlan {
  const void* in;
  ScalarType tin;
  void* out;
  ScalarType tout;
  uint64_t n;
  float scale;
  float bias;
};

struct KvWritePlan {
  void* cache;
  ScalarType tcache;
  const void* position;
  ScalarType tposition;
  const void* source;
  ScalarType tsource;
  uint64_t n_source;
  uint64_t outer;
  uint64_t seq;
  uint64_t inner;
  float salt;
};

struct AttendCache {
  const void* data;
  ScalarType type;
  uint64_t numel;
  uint64_t offset;  // position of its first element in the concatenation
};

struct AttendPlan {
  static constexpr int kMaxCaches = 64;
  AttendCache caches[kMaxCaches];
  int n_caches;
  const void* query;
  ScalarType tquery;
  uint64_t n_query;
  void* out;
  ScalarType tout;
  uint64_t n;
};

struct RingShiftPlan {
  const void* in;
  ScalarType tin;
  const void* source;
  ScalarType tsource;
  uint64_t n_source;
  void* out;
  ScalarType tout;
  uint64_t rows;
  uint64_t width;
};

// Arithmetic is float32 with every product and sum rounded on its own (no
// fused multiply-add), so the CPU and CUDA executors agree bit for bit.
#if defined(__CUDA_ARCH__)
TRTX_HD float ref_mul(float a, float b) { return __fmul_rn(a, b); }
TRTX_HD float ref_add(float a, float b) { return __fadd_rn(a, b); }
#else
TRTX_HD float ref_mul(float a, float b) {
  volatile float r = a * b;
  return r;
}
TRTX_HD float ref_add(float a, float b) {
  volatile float r = a + b;
  return r;
}
#endif

TRTX_HD float load_elem(const void* p, ScalarType t, uint64_t i) {
  switch (t) {
    case ScalarType::Half:
      return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case ScalarType::BFloat16:
      return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

TRTX_HD void store_elem(void* p, ScalarType t, uint64_t i, float v) {
  switch (t) {
    case ScalarType::Half:
      static_cast<uint16_t*>(p)[i] = float_to_half(v);
      break;
    case ScalarType::BFloat16:
      static_cast<uint16_t*>(p)[i] = float_to_bf16(v);
      break;
    default:
      static_cast<float*>(p)[i] = v;
  }
}

TRTX_HD int64_t load_position(const void* p, ScalarType t) {
  return t == ScalarType::Int ? static_cast<int64_t>(*static_cast<const int32_t*>(p)) : *static_cast<const int64_t*>(p);
}

/// w(k) = ((k mod 13) - 6) / 64, exact in float32.
TRTX_HD float attend_weight(uint64_t k) { return static_cast<float>(static_cast<int>(k % 13) - 6) * 0.015625f; }

/// The partial sum of one cache for output j: its elements k (global index
/// off + t) with k mod n == j, in increasing k.
TRTX_HD float attend_partial(const AttendCache& c, uint64_t n, uint64_t j) {
  float acc = 0.0f;
  uint64_t first = (j + n - (c.offset % n)) % n;
  for (uint64_t t = first; t < c.numel; t += n) {
    acc = ref_add(acc, ref_mul(load_elem(c.data, c.type, t), attend_weight(c.offset + t)));
  }
  return acc;
}

// Fault codes a kernel leaves in the mapped flag word.
constexpr uint32_t kFaultNone = 0;
constexpr uint32_t kFaultPosition = 1;

}  // namespace trtx::engine
