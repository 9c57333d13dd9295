#include "trtx/memory/runtime_scratch_provider.h"

#include <cstdint>
#include <utility>

namespace trtx {
namespace memory {

namespace {

Status fromFailure(const Failure& failure) {
  const MemoryErrorCode code =
      failure.code == Error::MemoryAllocationFailed ? MemoryErrorCode::kOutOfMemory : MemoryErrorCode::kDeviceError;
  return Status(code, failure.location + ": " + failure.message);
}

Failure toFailure(const Status& status, const std::string& location) {
  Error code = Error::CudaError;
  switch (status.code()) {
    case MemoryErrorCode::kOutOfMemory:
      code = Error::MemoryAllocationFailed;
      break;
    case MemoryErrorCode::kInvalidArgument:
      code = Error::InvalidArgument;
      break;
    case MemoryErrorCode::kBusy:
      code = Error::InvalidState;
      break;
    case MemoryErrorCode::kDeviceError:
      code = Error::CudaError;
      break;
    case MemoryErrorCode::kOk:
      code = Error::Internal;
      break;
  }
  return fail(code, location, status.message());
}

}  // namespace

// --- DeviceContextScratchBackend -------------------------------------------

Result<void*> DeviceContextScratchBackend::allocate(int device, std::size_t bytes, StreamHandle stream) {
  auto allocated = context(device).allocate(bytes, runtime::StreamRef{stream});
  if (!allocated.ok()) return fromFailure(allocated.failure());
  return allocated.get();
}

Status DeviceContextScratchBackend::free(int device, void* pointer, StreamHandle stream) {
  context(device).release(pointer, runtime::StreamRef{stream});
  return Status::success();
}

Status DeviceContextScratchBackend::synchronizeDevice(int device) {
  EventHandle last = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = lastRecorded_.find(device);
    if (found != lastRecorded_.end()) last = found->second;
  }
  if (last == nullptr) return Status::success();
  trtx::Status waited = context(device).event_synchronize(runtime::EventRef{last});
  return waited.ok() ? Status::success() : fromFailure(waited.failure());
}

Result<EventHandle> DeviceContextScratchBackend::create(int device) {
  auto created = context(device).create_event();
  if (!created.ok()) return fromFailure(created.failure());
  return created.get().handle;
}

Status DeviceContextScratchBackend::record(int device, EventHandle event, StreamHandle stream) {
  trtx::Status recorded = context(device).record(runtime::EventRef{event}, runtime::StreamRef{stream});
  if (!recorded.ok()) {
    // A drained stream orders every later waiter just as well: the event's
    // earlier record is older still, so waiting on it cannot overlap.
    trtx::Status drained = context(device).synchronize(runtime::StreamRef{stream});
    if (!drained.ok()) return fromFailure(recorded.failure());
    return Status::success();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  lastRecorded_[device] = event;
  return Status::success();
}

Status DeviceContextScratchBackend::wait(int device, StreamHandle stream, EventHandle event) {
  trtx::Status waited = context(device).wait(runtime::StreamRef{stream}, runtime::EventRef{event});
  return waited.ok() ? Status::success() : fromFailure(waited.failure());
}

void DeviceContextScratchBackend::destroy(int device, EventHandle event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = lastRecorded_.find(device);
    if (found != lastRecorded_.end() && found->second == event) lastRecorded_.erase(found);
  }
  context(device).destroy_event(runtime::EventRef{event});
}

// --- SharedScratchProvider ---------------------------------------------------

struct SharedScratchProvider::Shared {
  runtime::Target target = runtime::Target::Host;
  std::unique_ptr<DeviceContextScratchBackend> ownBackend;
  std::unique_ptr<SharedScratchPool> pool;
  std::mutex mutex;
  // Weak: each provider owns a reference to this state.
  std::map<int, std::weak_ptr<SharedScratchProvider>> providers;
  std::uint64_t handoffFailures = 0;
  std::string lastHandoffFailure;
};

trtx::Result<void*> SharedScratchProvider::acquire(const runtime::DeviceContext& device, size_t bytes,
                                                   runtime::StreamRef stream) {
  if (device.target() != shared_->target || device.device_index() != device_) {
    return fail(Error::InvalidArgument, "shared_scratch.device" + std::to_string(device_),
                "provider asked for scratch on another device (" + std::to_string(device.device_index()) + ")");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto lease = shared_->pool->acquire(device_, bytes, stream.handle);
  if (!lease.ok()) return toFailure(lease.status(), "shared_scratch.device" + std::to_string(device_));
  leased_ = true;
  lease_ = lease.value();
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
    shared_->lastHandoffFailure = handed.message();
  }
}

size_t SharedScratchProvider::capacity() const { return shared_->pool->capacity(device_); }

// --- SharedScratchRegistry ---------------------------------------------------

SharedScratchRegistry::SharedScratchRegistry(runtime::Target target, SharedScratchOptions options, Allocator* allocator,
                                             EventFactory* events)
    : shared_(std::make_shared<SharedScratchProvider::Shared>()) {
  shared_->target = target;
  const bool supplied = target == runtime::Target::Cuda && allocator != nullptr && events != nullptr;
  if (!supplied) {
    shared_->ownBackend = std::make_unique<DeviceContextScratchBackend>(target);
    allocator = shared_->ownBackend.get();
    events = shared_->ownBackend.get();
  }
  shared_->pool = std::make_unique<SharedScratchPool>(*allocator, *events, options);
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

trtx::Status SharedScratchRegistry::shutdown() {
  Status status = shared_->pool->shutdown();
  if (!status.ok()) return toFailure(status, "shared_scratch");
  return ok_status();
}

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
