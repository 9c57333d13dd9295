// Planned memory of one method: an arena per entry of non_const_buffer_sizes
// (arena 0 is reserved and never allocated), placed on the device its
// non_const_buffer_device entry names (no entry: the CPU). CUDA arenas are
// device memory allocated stream-ordered on the load stream; every arena
// starts zeroed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "program_generated.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::executor {

struct Arena {
  uint64_t size = 0;
  runtime::Placement placement = runtime::Placement::Host;
  int device_index = 0;
  void* base = nullptr;
};

class MemoryManager {
 public:
  /// Arenas larger than this are refused before any allocation is tried.
  static constexpr uint64_t kMaxArenaBytes = uint64_t(1) << 40;

  static Result<std::unique_ptr<MemoryManager>> create(const executorch_flatbuffer::ExecutionPlan* plan,
                                                       const runtime::DeviceContext& device,
                                                       runtime::StreamRef stream, const std::string& where);
  ~MemoryManager();

  size_t num_arenas() const { return arenas_.size(); }
  const Arena& arena(size_t i) const { return arenas_[i]; }

  /// The address of [offset, offset + nbytes) in arena `memory_id`, checked.
  Result<void*> address(uint32_t memory_id, uint64_t offset, uint64_t nbytes, const std::string& where) const;

 private:
  MemoryManager(runtime::DeviceContext device, runtime::StreamRef stream) : device_(device), stream_(stream) {}
  runtime::DeviceContext device_;
  runtime::StreamRef stream_;
  std::vector<Arena> arenas_;
};

}  // namespace trtx::executor
