// The shared scratch pool plugged into the runner core's ScratchProvider
// interface (include/trtx/runtime/scratch_provider.h). The runner's
// --shared-scratch installs SharedScratchRegistry::factory(); without it the
// core keeps its private_scratch_factory().
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "trtx/memory/shared_scratch_pool.h"
#include "trtx/runtime/cuda_api.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/scratch_provider.h"

namespace trtx {
namespace memory {

class SharedScratchRegistry;

// The provider every TensorRT delegate handle on one device shares.
// acquire() leases the device's buffer on `stream`; release_after() must
// follow every successful acquire (also when the enqueue failed, with or
// without an event): until it does, the next acquire on the device fails with
// InvalidState rather than hand one buffer to two enqueues. The event passed
// in is not kept: the provider records its own on the leased stream, so a
// delegate may destroy its event whenever it likes.
class SharedScratchProvider final : public runtime::ScratchProvider {
 public:
  trtx::Result<void*> acquire(const runtime::DeviceContext& device, size_t bytes, runtime::StreamRef stream) override;
  void release_after(runtime::EventRef event) override;
  size_t capacity() const override;

 private:
  friend class SharedScratchRegistry;
  struct Shared;
  SharedScratchProvider(std::shared_ptr<Shared> shared, int device) : shared_(std::move(shared)), device_(device) {}

  std::shared_ptr<Shared> shared_;
  const int device_;
  std::mutex mutex_;
  bool leased_ = false;
  ScratchLease lease_;
  StreamHandle leaseStream_ = nullptr;
};

// Owns the pool (one buffer per device) and hands out one provider per device.
class SharedScratchRegistry {
 public:
  // The pool's device: on Target::Cuda `api` (null: cuda::runtime_api()),
  // which must outlive the registry and every provider it made; on
  // Target::Host cuda::host_api().
  SharedScratchRegistry(runtime::Target target, SharedScratchOptions options, cuda::Api* api = nullptr);
  ~SharedScratchRegistry();

  // For the delegates: the same provider for every handle on a device. A
  // device of another target than the registry's gets a PrivateScratch.
  runtime::ScratchProviderFactory factory();

  // Drains and frees every buffer; call at teardown, before the warm pool's
  // last release, so that its trim returns this memory too.
  trtx::Status shutdown();

  // {"mode":"shared",...,"capacity_events":[...],"handoff_failures":N} for the
  // runner's JSON report.
  std::string reportJson() const;
  const SharedScratchPool& pool() const;

 private:
  std::shared_ptr<SharedScratchProvider::Shared> shared_;
};

}  // namespace memory
}  // namespace trtx
