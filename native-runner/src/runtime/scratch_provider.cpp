#include "trtx/runtime/scratch_provider.h"

namespace trtx::runtime {

PrivateScratch::~PrivateScratch() {
  if (buffer_ != nullptr) {
    if (last_use_.handle != nullptr) (void)device_.event_synchronize(last_use_);
    device_.release(buffer_, StreamRef{});
  }
}

Result<void*> PrivateScratch::acquire(const DeviceContext& device, size_t bytes, StreamRef stream) {
  if (bytes <= capacity_) return buffer_;
  // Allocate first: a failed growth leaves the old buffer usable.
  TRTX_ASSIGN_OR_RETURN(void* grown, device.allocate(bytes, stream));
  if (buffer_ != nullptr) {
    // The previous enqueue may still read the old buffer (its sync may have
    // been skipped); it is released only once that enqueue is done.
    if (last_use_.handle != nullptr) {
      Status s = device_.event_synchronize(last_use_);
      if (!s.ok()) {
        device.release(grown, stream);
        return s.take_failure();
      }
    }
    device_.release(buffer_, stream);
  }
  device_ = device;
  buffer_ = grown;
  capacity_ = bytes;
  return buffer_;
}

}  // namespace trtx::runtime
