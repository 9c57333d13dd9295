// The device allocator trtx registers with ExecuTorch for DeviceType::CUDA
// (runtime/core/device_allocator.h): Module allocates every arena that
// non_const_buffer_device places on CUDA through it (extension/module/
// module.cpp), and the et_copy kernels copy through it (kernels/portable/cpu/
// op__device_copy.cpp). On a GPU it is stream-ordered (cudaMallocAsync and
// cudaFreeAsync on the caller stream, from the default pool the warm pool
// keeps warm: the runner's `before_first_allocation` hook); without one it
// hands out host memory for the CUDA device type, so every program still runs.
// Like cudaMalloc it never clears memory; ArenaFill::Poison (what `trtx
// verify` uses) writes 0xFF, a NaN in every float type, so a program that
// reads a device buffer before writing it fails visibly. It never accepts
// more than the real one: a copy whose device side is not an allocation it
// made (a tensor tagged CUDA in a host arena) is refused on both targets.
#pragma once

#include <executorch/runtime/core/device_allocator.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::et {

enum class ArenaFill : uint8_t { Poison, None };
constexpr uint8_t kPoisonByte = 0xFF;
const char* arena_fill_name(ArenaFill f);

struct DeviceAllocatorStats {
  uint64_t allocations = 0;
  uint64_t deallocations = 0;
  uint64_t live_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t filled_bytes = 0;    // poisoned at allocation
  uint64_t zeroed_bytes = 0;    // initialised by the application (zero())
  uint64_t refused_copies = 0;  // copies whose device side was not device memory
  /// Wall time of each allocation call alone (cudaMallocAsync / malloc), us.
  std::vector<double> allocate_call_us;
};

class RunnerDeviceAllocator final : public executorch::runtime::DeviceAllocator {
 public:
  using DeviceIndex = executorch::runtime::etensor::DeviceIndex;

  struct Config {
    runtime::Target target = runtime::Target::Host;
    ArenaFill fill = ArenaFill::Poison;
    /// Called once per device, before its first allocation (the warm pool).
    std::function<void(int device)> before_first_allocation;
  };

  /// Set before the first allocation; a later call applies to later ones.
  void configure(Config config);

  executorch::runtime::Result<void*> allocate(size_t nbytes, DeviceIndex index, size_t alignment) override;
  void deallocate(void* ptr, DeviceIndex index) override;
  executorch::runtime::Error copy_host_to_device(void* dst, const void* src, size_t nbytes, DeviceIndex index) override;
  executorch::runtime::Error copy_device_to_host(void* dst, const void* src, size_t nbytes, DeviceIndex index) override;
  executorch::runtime::etensor::DeviceType device_type() const override {
    return executorch::runtime::etensor::DeviceType::CUDA;
  }

  runtime::Target target() const;
  ArenaFill fill() const;
  /// True when [p, p + n) lies inside one live allocation; its device in `device`.
  bool owns(const void* p, size_t n, int* device = nullptr) const;
  /// Zeroes device memory this allocator handed out: what an application
  /// does to initialise a device-resident buffer before the first execute.
  Status zero(void* p, size_t n);
  /// Copies device memory to the host for the runner's own reading (digests);
  /// not counted as program traffic. Synchronizes.
  Status read(void* host_dst, const void* src, size_t n) const;

  /// Host<->device bytes the program moved: the et_copy kernels (through
  /// this allocator) and the TensorRT delegate's own staging add to it.
  /// A snapshot taken under the lock: the counters move while a delegate
  /// or a copy kernel runs on another thread.
  runtime::CopyCounters traffic() const;
  /// The part of traffic() that ExecuTorch's copy kernels moved through
  /// copy_host_to_device / copy_device_to_host (et_copy::_h2d_copy.out and
  /// _d2h_copy.out, kernels/portable/cpu/op__device_copy.cpp): the program's
  /// own staging, without the delegate's.
  runtime::CopyCounters kernel_traffic() const;
  /// Adds `moved` to the counters, under the lock.
  void add_traffic(const runtime::CopyCounters& moved);
  DeviceAllocatorStats stats() const;

 private:
  struct Live {
    size_t size = 0;
    int device = 0;
  };
  runtime::DeviceContext context(int device) const { return runtime::DeviceContext(config_.target, device); }
  bool owns_locked(const void* p, size_t n, int* device) const;
  executorch::runtime::Error copy(void* dst, const void* src, size_t n, bool to_device);

  Config config_;
  mutable std::mutex mutex_;
  std::map<uintptr_t, Live> live_;
  std::vector<int> seen_devices_;
  DeviceAllocatorStats stats_;
  runtime::CopyCounters traffic_;
  runtime::CopyCounters kernel_traffic_;
};

/// The process's allocator (static lifetime, as the registry requires).
RunnerDeviceAllocator& device_allocator();

/// Registers device_allocator() for DeviceType::CUDA with ExecuTorch, once.
void register_device_allocator();

}  // namespace trtx::et
