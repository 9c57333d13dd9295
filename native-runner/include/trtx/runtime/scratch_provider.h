// Where a TensorRT delegate handle gets its activation scratch for one
// enqueue. The handle asks for the bytes its engine needs for the shapes it
// just bound, enqueues, records an event on the same stream and hands that
// event back, so the provider knows when the buffer is free again.
//
// The default is private scratch per engine (what TensorRT's kSTATIC
// contexts do). A shared, per-device provider (docs/runtime-contracts.md: one
// buffer backs every engine, grows before it frees, hands off by event, and
// may shrink after a run of underfilled executes) plugs in through
// `ScratchProviderFactory` without the delegate changing.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::runtime {

class ScratchProvider {
 public:
  virtual ~ScratchProvider() = default;

  /// At least `bytes` of memory on `device`, valid for work enqueued on
  /// `stream` after this call until the event passed to the next
  /// release_after() completes. `bytes == 0` may return nullptr.
  virtual Result<void*> acquire(const DeviceContext& device, size_t bytes, StreamRef stream) = 0;

  /// The enqueue that used the buffer from the last acquire() completes when
  /// `event` (already recorded on that enqueue's stream) completes. Called
  /// after every successful acquire(), with a null event when the enqueue
  /// failed. The event belongs to the caller: it stays valid until the
  /// caller's next acquire() or until the caller drops its reference to this
  /// provider; a provider that needs it longer records its own.
  virtual void release_after(EventRef event) = 0;

  /// Bytes currently held.
  virtual size_t capacity() const = 0;
};

/// Scratch owned by one engine: grows to the largest need, allocating the
/// new buffer before freeing the old one once the last enqueue is done.
class PrivateScratch final : public ScratchProvider {
 public:
  PrivateScratch() = default;
  ~PrivateScratch() override;
  PrivateScratch(const PrivateScratch&) = delete;
  PrivateScratch& operator=(const PrivateScratch&) = delete;

  Result<void*> acquire(const DeviceContext& device, size_t bytes, StreamRef stream) override;
  void release_after(EventRef event) override {
    if (event.handle != nullptr) last_use_ = event;
  }
  size_t capacity() const override { return capacity_; }

 private:
  DeviceContext device_{Target::Host, 0};
  void* buffer_ = nullptr;
  size_t capacity_ = 0;
  EventRef last_use_{};
};

/// Chooses the provider for each TensorRT delegate handle. `delegate` names
/// the handle ("forward.delegates[0]") for reports; a shared provider returns
/// the same instance for every handle on one device.
using ScratchProviderFactory =
    std::function<std::shared_ptr<ScratchProvider>(const DeviceContext& device, const std::string& delegate)>;

}  // namespace trtx::runtime
