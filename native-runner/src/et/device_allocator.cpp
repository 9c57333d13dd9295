#include "trtx/et/device_allocator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "trtx/et/caller_stream.h"
#include "trtx/et/recorded_failure.h"

namespace trtx::et {

using executorch::runtime::Error;

namespace {

std::string hex_ptr(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// The caller stream of the device the memory is on: a stream of another
// device cannot order this device's work.
runtime::StreamRef current_stream(int device) {
  auto s = caller_stream(device);
  return s.has_value() ? *s : runtime::StreamRef{};
}

}  // namespace

const char* arena_fill_name(ArenaFill f) { return f == ArenaFill::Poison ? "poison" : "none"; }

void RunnerDeviceAllocator::configure(Config config) {
  std::lock_guard<std::mutex> lock(mutex_);
  config_ = std::move(config);
}

runtime::Target RunnerDeviceAllocator::target() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return config_.target;
}

ArenaFill RunnerDeviceAllocator::fill() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return config_.fill;
}

executorch::runtime::Result<void*> RunnerDeviceAllocator::allocate(size_t nbytes, DeviceIndex index, size_t alignment) {
  const std::string where = "device allocator";
  // The same limits as ExecuTorch's CUDA allocator (backends/cuda/runtime/
  // cuda_allocator.cpp): a power-of-two alignment of at most 256 bytes, which
  // cudaMalloc (and the host stand-in) always satisfy.
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return record_failure(
        fail(trtx::Error::InvalidArgument, where, "alignment " + std::to_string(alignment) + " is not a power of two"),
        Error::InvalidArgument);
  }
  if (alignment > 256) {
    return record_failure(
        fail(trtx::Error::NotSupported, where,
             "alignment " + std::to_string(alignment) + " exceeds the 256 bytes cudaMalloc guarantees"),
        Error::NotSupported);
  }
  const int device = index < 0 ? 0 : index;
  // A program planned for more GPUs than the machine has (an arena on cuda:1
  // of a one-GPU host): said before the warm-pool hook touches the device.
  Status present = runtime::require_device(target(), device, "the program plans memory");
  if (!present.ok()) return record_failure(present.take_failure(), Error::NotSupported);
  std::function<void(int)> first_use;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::find(seen_devices_.begin(), seen_devices_.end(), device) == seen_devices_.end()) {
      seen_devices_.push_back(device);
      first_use = config_.before_first_allocation;
    }
  }
  if (first_use) first_use(device);

  const runtime::StreamRef stream = current_stream(device);
  const runtime::DeviceContext ctx = context(device);
  const auto t0 = std::chrono::steady_clock::now();
  Result<void*> got = ctx.allocate_uninitialized(nbytes, stream);
  const auto t1 = std::chrono::steady_clock::now();
  if (!got.ok()) return record_failure(got.take_failure(), Error::MemoryAllocationFailed);
  void* p = got.get();
  const ArenaFill fill_mode = this->fill();
  if (fill_mode == ArenaFill::Poison) {
    Status filled = ctx.fill(p, kPoisonByte, nbytes, stream);
    if (!filled.ok()) {
      ctx.release(p, stream);
      return record_failure(filled.take_failure(), Error::Internal);
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  live_[reinterpret_cast<uintptr_t>(p)] = Live{nbytes, device};
  ++stats_.allocations;
  stats_.live_bytes += nbytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.live_bytes);
  if (fill_mode == ArenaFill::Poison) stats_.filled_bytes += nbytes;
  stats_.allocate_call_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  return p;
}

void RunnerDeviceAllocator::deallocate(void* ptr, DeviceIndex) {
  if (ptr == nullptr) return;
  int device = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == live_.end()) return;  // not ours: never free what we did not hand out
    device = it->second.device;
    stats_.live_bytes -= it->second.size;
    ++stats_.deallocations;
    live_.erase(it);
  }
  context(device).release(ptr, current_stream(device));
}

bool RunnerDeviceAllocator::owns_locked(const void* p, size_t n, int* device) const {
  const auto at = reinterpret_cast<uintptr_t>(p);
  auto it = live_.upper_bound(at);
  if (it == live_.begin()) return false;
  --it;
  const uintptr_t offset = at - it->first;
  if (offset > it->second.size || n > it->second.size - offset) return false;
  if (device != nullptr) *device = it->second.device;
  return true;
}

bool RunnerDeviceAllocator::owns(const void* p, size_t n, int* device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return owns_locked(p, n, device);
}

Error RunnerDeviceAllocator::copy(void* dst, const void* src, size_t n, bool to_device) {
  const char* what = to_device ? "copy_host_to_device" : "copy_device_to_host";
  const void* device_side = to_device ? dst : src;
  int device = 0;
  bool ok_side;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ok_side = owns_locked(device_side, n, &device);
    if (!ok_side) ++stats_.refused_copies;
  }
  if (!ok_side) {
    return record_failure(
        fail(trtx::Error::InvalidArgument, std::string("device allocator ") + what,
             std::string("the ") + (to_device ? "destination" : "source") + " (" + std::to_string(n) + " bytes at " +
                 hex_ptr(device_side) +
                 ") is not device memory: a tensor tagged CUDA lives in a host arena (a host-planned program); "
                 "cudaMemcpy would refuse it on a GPU"),
        Error::InvalidArgument);
  }
  // The host side of a copy is a tensor's data pointer, null for a tensor
  // nothing gave memory (an unplanned intermediate: trtx check refuses it as
  // STRUCT_TENSOR_NO_MEMORY). cudaMemcpy refuses a null pointer; so does this.
  const void* host_side = to_device ? src : dst;
  if (host_side == nullptr && n != 0) {
    return record_failure(fail(trtx::Error::InvalidArgument, std::string("device allocator ") + what,
                               std::string("the ") + (to_device ? "source" : "destination") + " (" + std::to_string(n) +
                                   " bytes) is a null pointer: a tensor with no memory"),
                          Error::InvalidArgument);
  }
  const runtime::StreamRef stream = current_stream(device);
  const runtime::DeviceContext ctx = context(device);
  using runtime::Placement;
  // Counted locally and added under the lock: the copy itself runs unlocked.
  runtime::CopyCounters moved;
  Status s = to_device ? ctx.copy(dst, Placement::Device, src, Placement::Host, n, stream, &moved)
                       : ctx.copy(dst, Placement::Host, src, Placement::Device, n, stream, &moved);
  add_traffic(moved);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    kernel_traffic_.h2d_bytes += moved.h2d_bytes;
    kernel_traffic_.d2h_bytes += moved.d2h_bytes;
    kernel_traffic_.d2d_bytes += moved.d2d_bytes;
  }
  // A host reader follows a device-to-host copy: with a caller stream the
  // copy is only enqueued, so wait for it, as ExecuTorch's CUDA allocator does.
  if (s.ok() && !to_device && stream.handle != nullptr) s = ctx.synchronize(stream);
  if (!s.ok()) return record_failure(s.take_failure(), Error::Internal);
  return Error::Ok;
}

runtime::CopyCounters RunnerDeviceAllocator::traffic() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return traffic_;
}

runtime::CopyCounters RunnerDeviceAllocator::kernel_traffic() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kernel_traffic_;
}

void RunnerDeviceAllocator::add_traffic(const runtime::CopyCounters& moved) {
  std::lock_guard<std::mutex> lock(mutex_);
  traffic_.h2d_bytes += moved.h2d_bytes;
  traffic_.d2h_bytes += moved.d2h_bytes;
  traffic_.d2d_bytes += moved.d2d_bytes;
}

Error RunnerDeviceAllocator::copy_host_to_device(void* dst, const void* src, size_t nbytes, DeviceIndex) {
  return copy(dst, src, nbytes, /*to_device=*/true);
}

Error RunnerDeviceAllocator::copy_device_to_host(void* dst, const void* src, size_t nbytes, DeviceIndex) {
  return copy(dst, src, nbytes, /*to_device=*/false);
}

Status RunnerDeviceAllocator::zero(void* p, size_t n) {
  int device = 0;
  if (!owns(p, n, &device)) {
    return fail(trtx::Error::InvalidArgument, "device allocator", "zero: " + hex_ptr(p) + " is not device memory");
  }
  TRTX_CHECK_OK(context(device).fill(p, 0, n, current_stream(device)));
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.zeroed_bytes += n;
  return ok_status();
}

Status RunnerDeviceAllocator::read(void* host_dst, const void* src, size_t n) const {
  int device = 0;
  if (!owns(src, n, &device)) {
    return fail(trtx::Error::InvalidArgument, "device allocator", "read: " + hex_ptr(src) + " is not device memory");
  }
  const runtime::StreamRef stream = current_stream(device);
  const runtime::DeviceContext ctx = context(device);
  TRTX_CHECK_OK(ctx.copy(host_dst, runtime::Placement::Host, src, runtime::Placement::Device, n, stream, nullptr));
  return ctx.synchronize(stream);
}

DeviceAllocatorStats RunnerDeviceAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

RunnerDeviceAllocator& device_allocator() {
  static RunnerDeviceAllocator allocator;
  return allocator;
}

void register_device_allocator() {
  static const bool registered = [] {
    executorch::runtime::register_device_allocator(&device_allocator());
    return true;
  }();
  (void)registered;
}

}  // namespace trtx::et
