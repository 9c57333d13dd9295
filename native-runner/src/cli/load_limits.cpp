#include "load_limits.h"

#include <unistd.h>

namespace trtx::cli {

namespace et = executorch::runtime;

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

Status check_planned_memory(executorch::extension::Module& module, const std::vector<std::string>& methods,
                            runtime::Target target, uint64_t limit) {
  uint64_t total = 0;
  std::string largest;
  uint64_t largest_bytes = 0;
  for (const auto& name : methods) {
    auto meta = module.method_meta(name);
    if (!meta.ok()) continue;  // the caller reports an unknown method
    for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
      auto size = meta->memory_planned_buffer_size(i);
      // A negative size is the runtime's own refusal at method load
      // (method_meta.cpp: InvalidProgram); leave it to report.
      if (!size.ok() || size.get() < 0) continue;
      auto device = meta->memory_planned_buffer_device(i);
      const bool host = !device.ok() || device->is_cpu() || target == runtime::Target::Host;
      if (!host) continue;
      const auto bytes = static_cast<uint64_t>(size.get());
      total = bytes > UINT64_MAX - total ? UINT64_MAX : total + bytes;
      if (bytes > largest_bytes) {
        largest_bytes = bytes;
        // memory_planned_buffer_size(i) is arena i + 1 of non_const_buffer_sizes (arena 0 is reserved).
        largest = name + " arena " + std::to_string(i + 1);
      }
    }
  }
  if (total <= limit) return ok_status();
  return fail(Error::PlannedMemoryLimit, largest,
              "the chosen methods plan " + std::to_string(total) + " bytes of host memory (the largest arena, " +
                  largest + ", " + std::to_string(largest_bytes) + " bytes) and the limit is " + std::to_string(limit) +
                  " bytes (--max-planned-bytes; default the machine's physical memory): ExecuTorch's Module "
                  "would allocate and zero all of it at method load (extension/module/module.cpp), so the run "
                  "stops before it does");
}

}  // namespace trtx::cli
