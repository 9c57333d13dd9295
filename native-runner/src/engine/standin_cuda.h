// CUDA launchers for the reference engine's steps (internal). All launches
// are asynchronous on `stream`; faults go to the mapped `fault` words
// (uint32 code at byte 0, int64 detail at byte 8).
#pragma once

#include "standin_plan.h"
#include "trtx/runtime/result.h"

namespace trtx::engine::cuda_kernels {

Status affine(const AffinePlan& p, void* stream);
Status kv_write(const KvWritePlan& p, void* fault, void* stream);
/// Partial sums go to `scratch` (n_caches * n floats), then the combine.
Status attend(const AttendPlan& p, float* scratch, void* stream);
Status ring_shift(const RingShiftPlan& p, void* stream);

}  // namespace trtx::engine::cuda_kernels
