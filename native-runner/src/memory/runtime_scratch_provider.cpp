#include "trtx/memory/runtime_scratch_provider.h"

#include <cstdint>
#include <utility>

namespace trtx {
namespace memory {

// --- SharedScratchProvider ---------------------------------------------------

struct SharedScratchProvider::Shared {
  runtime::Target target = runtime::Target::Host;
  std::unique_ptr<SharedScratchPool> pool;
  std::mutex mutex;
  // Weak: each provider owns a reference to this state.
  std::map<int, std::weak_ptr<SharedScratchProvider>> providers;
  std::uint64_t handoffFailures = 0;
  std::string lastHandoffFailure;
};

Result<void*> SharedScratchProvider::acquire(const runtime::DeviceContext& device, size_t bytes,
                                             runtime::StreamRef stream) {
  if (device.target() != shared_->target || device.device_index() != device_) {
    return fail(Error::InvalidArgument, "shared_scratch.device" + std::to_string(device_),
                "provider asked for scratch on another device (" + std::to_string(device.device_index()) + ")");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto lease = shared_->pool->acquire(device_, bytes, stream.handle);
  if (!lease.ok()) return lease.take_failure();
  leased_ = true;
  lease_ = lease.get();
  leaseStream_ = stream.handle;
  return lease_.pointer;
}

void SharedScratchProvider::release_after(runtime::EventRef /*event*/) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!leased_) return;
  leased_ = false;
  // Recorded on the leased stream, after the delegate's own event: the same
  // point or later, and no dependence on how long the delegate keeps its event.
  Status handed = shared_->pool->handOff(lease_, leaseStream_);
  if (!handed.ok()) {
    std::lock_guard<std::mutex> sharedLock(shared_->mutex);
    ++shared_->handoffFailures;
    shared_->lastHandoffFailure = describe(handed.failure());
  }
}

size_t SharedScratchProvider::capacity() const { return shared_->pool->capacity(device_); }

// --- SharedScratchRegistry ---------------------------------------------------

SharedScratchRegistry::SharedScratchRegistry(runtime::Target target, SharedScratchOptions options, cuda::Api* api)
    : shared_(std::make_shared<SharedScratchProvider::Shared>()) {
  shared_->target = target;
  cuda::Api& device = target == runtime::Target::Host ? cuda::host_api() : api != nullptr ? *api : cuda::runtime_api();
  shared_->pool = std::make_unique<SharedScratchPool>(device, options);
}

SharedScratchRegistry::~SharedScratchRegistry() { (void)shutdown(); }

runtime::ScratchProviderFactory SharedScratchRegistry::factory() {
  std::shared_ptr<SharedScratchProvider::Shared> shared = shared_;
  return [shared](const runtime::DeviceContext& device,
                  const std::string& /*delegate*/) -> std::shared_ptr<runtime::ScratchProvider> {
    if (device.target() != shared->target) return std::make_shared<runtime::PrivateScratch>();
    std::lock_guard<std::mutex> lock(shared->mutex);
    std::weak_ptr<SharedScratchProvider>& slot = shared->providers[device.device_index()];
    std::shared_ptr<SharedScratchProvider> provider = slot.lock();
    if (!provider) {
      provider.reset(new SharedScratchProvider(shared, device.device_index()));
      slot = provider;
    }
    return provider;
  };
}

Status SharedScratchRegistry::shutdown() { return shared_->pool->shutdown(); }

std::string SharedScratchRegistry::reportJson() const {
  std::string json = shared_->pool->reportJson();
  std::lock_guard<std::mutex> lock(shared_->mutex);
  // Splice the provider-level counter into the pool's object.
  json.pop_back();
  json += ",\"handoff_failures\":" + std::to_string(shared_->handoffFailures) + "}";
  return json;
}

const SharedScratchPool& SharedScratchRegistry::pool() const { return *shared_->pool; }

}  // namespace memory
}  // namespace trtx
