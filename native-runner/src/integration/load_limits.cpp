#include "load_limits.h"

#include <unistd.h>

#include <algorithm>

#include "program_generated.h"

namespace trtx::integration {

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

namespace {

// method_meta.cpp memory_planned_buffer_device: non_const_buffer_device is
// sparse, keyed by the arena's index in non_const_buffer_sizes; an arena
// without an entry is on the CPU.
bool host_arena(const trtx_pte::ExecutionPlan& plan, uint32_t arena, runtime::Target target) {
  if (target == runtime::Target::Host || plan.non_const_buffer_device() == nullptr) return true;
  for (const trtx_pte::NonConstBufferDevice* d : *plan.non_const_buffer_device()) {
    if (d->buffer_idx() == static_cast<int32_t>(arena)) return d->device_type() == trtx_pte::DeviceType::CPU;
  }
  return true;
}

}  // namespace

Status check_planned_memory(const trtx_pte::Program& program, const PlannedCap& cap) {
  uint64_t total = 0;
  std::string largest;
  uint64_t largest_bytes = 0;
  for (const trtx_pte::ExecutionPlan* plan : *program.execution_plan()) {
    const std::string name = plan->name()->str();
    if (!cap.methods.empty() && std::find(cap.methods.begin(), cap.methods.end(), name) == cap.methods.end()) continue;
    const auto* sizes = plan->non_const_buffer_sizes();
    if (sizes == nullptr) continue;
    // Arena 0 is reserved and never allocated (method_meta.cpp).
    for (uint32_t k = 1; k < sizes->size(); ++k) {
      const int64_t size = sizes->Get(k);
      if (size < 0 || !host_arena(*plan, k, cap.target)) continue;  // a negative size is refused before
      const auto bytes = static_cast<uint64_t>(size);
      total = bytes > UINT64_MAX - total ? UINT64_MAX : total + bytes;
      if (bytes > largest_bytes) {
        largest_bytes = bytes;
        largest = name + " arena " + std::to_string(k);
      }
    }
  }
  if (total <= cap.limit) return ok_status();
  return fail(Error::PlannedMemoryLimit, largest,
              "the chosen methods plan " + std::to_string(total) + " bytes of host memory (the largest arena, " +
                  largest + ", " + std::to_string(largest_bytes) + " bytes) and the limit is " +
                  std::to_string(cap.limit) +
                  " bytes (--max-planned-bytes; default the machine's physical memory): ExecuTorch's Module "
                  "would allocate and zero all of it at method load (extension/module/module.cpp), so the run "
                  "stops before it does");
}

}  // namespace trtx::integration
