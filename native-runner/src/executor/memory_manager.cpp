#include "trtx/executor/memory_manager.h"

namespace trtx::executor {

namespace fb = executorch_flatbuffer;
using runtime::Placement;

Result<std::unique_ptr<MemoryManager>> MemoryManager::create(const fb::ExecutionPlan* plan,
                                                             const runtime::DeviceContext& device,
                                                             runtime::StreamRef stream, const std::string& where) {
  std::unique_ptr<MemoryManager> mm(new MemoryManager(device, stream));
  const auto* sizes = plan->non_const_buffer_sizes();
  size_t n = sizes == nullptr ? 0 : sizes->size();
  mm->arenas_.resize(n);
  for (size_t i = 1; i < n; ++i) {
    int64_t s = sizes->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (s < 0) {
      return fail(Error::InvalidProgram, where + ".non_const_buffer_sizes[" + std::to_string(i) + "]",
                  "arena size " + std::to_string(s) + " is negative");
    }
    if (static_cast<uint64_t>(s) > kMaxArenaBytes) {
      return fail(Error::MemoryAllocationFailed, where + ".non_const_buffer_sizes[" + std::to_string(i) + "]",
                  "arena of " + std::to_string(s) + " bytes exceeds the runner's limit of " +
                      std::to_string(kMaxArenaBytes) + " bytes");
    }
    mm->arenas_[i].size = static_cast<uint64_t>(s);
  }
  const auto* devices = plan->non_const_buffer_device();
  if (devices != nullptr) {
    std::vector<bool> seen(n, false);
    for (flatbuffers::uoffset_t k = 0; k < devices->size(); ++k) {
      const auto* d = devices->Get(k);
      std::string at = where + ".non_const_buffer_device[" + std::to_string(k) + "]";
      if (d->buffer_idx() < 1 || static_cast<size_t>(d->buffer_idx()) >= n) {
        return fail(Error::IndexOutOfRange, at + ".buffer_idx",
                    "arena index " + std::to_string(d->buffer_idx()) + " but the plan has arenas 1.." +
                        std::to_string(n == 0 ? 0 : n - 1) + " (arena 0 is reserved)");
      }
      auto idx = static_cast<size_t>(d->buffer_idx());
      if (seen[idx]) return fail(Error::InvalidProgram, at, "arena " + std::to_string(idx) + " has two device entries");
      seen[idx] = true;
      if (d->device_type() != fb::DeviceType::CPU && d->device_type() != fb::DeviceType::CUDA) {
        return fail(Error::InvalidProgram, at + ".device_type",
                    "unknown device type " + std::to_string(static_cast<int>(d->device_type())));
      }
      if (d->device_index() < 0) {
        return fail(Error::InvalidProgram, at + ".device_index", "negative device index");
      }
      if (d->device_type() == fb::DeviceType::CUDA) {
        mm->arenas_[idx].placement = Placement::Device;
        mm->arenas_[idx].device_index = d->device_index();
        if (device.target() == runtime::Target::Cuda && d->device_index() != device.device_index()) {
          return fail(Error::DeviceUnavailable, at,
                      "arena " + std::to_string(idx) + " is on cuda:" + std::to_string(d->device_index()) +
                          " but this run executes on cuda:" + std::to_string(device.device_index()));
        }
      }
    }
  }
  for (size_t i = 1; i < n; ++i) {
    Arena& a = mm->arenas_[i];
    if (a.size == 0) continue;
    std::string at = where + ".arena[" + std::to_string(i) + "]";
    Result<void*> p = a.placement == Placement::Device
                          ? device.allocate(static_cast<size_t>(a.size), stream)
                          : runtime::DeviceContext::allocate_host(static_cast<size_t>(a.size));
    if (!p.ok()) {
      Failure f = p.take_failure();
      f.location = at;
      return f;
    }
    a.base = p.get();
  }
  return mm;
}

MemoryManager::~MemoryManager() {
  for (auto& a : arenas_) {
    if (a.base == nullptr) continue;
    if (a.placement == Placement::Device) {
      device_.release(a.base, stream_);
    } else {
      runtime::DeviceContext::release_host(a.base);
    }
  }
}

Result<void*> MemoryManager::address(uint32_t memory_id, uint64_t offset, uint64_t nbytes, const std::string& where) const {
  if (memory_id == 0 || memory_id >= arenas_.size()) {
    return fail(Error::IndexOutOfRange, where + ".allocation_info.memory_id",
                "arena " + std::to_string(memory_id) + " but the plan has arenas 1.." +
                    std::to_string(arenas_.empty() ? 0 : arenas_.size() - 1) + " (arena 0 is reserved)");
  }
  const Arena& a = arenas_[memory_id];
  if (offset > a.size || nbytes > a.size - offset) {
    return fail(Error::ExtentOutOfRange, where + ".allocation_info",
                "tensor of " + std::to_string(nbytes) + " bytes at offset " + std::to_string(offset) +
                    " runs past arena " + std::to_string(memory_id) + " (" + std::to_string(a.size) + " bytes)");
  }
  if (a.base == nullptr) return static_cast<void*>(nullptr);
  return static_cast<void*>(static_cast<uint8_t*>(a.base) + offset);
}

}  // namespace trtx::executor
