// The shared pool through the runner core's ScratchProvider interface, on the
// host target (cuda::host_api() stands in for the device there), so
// the adapter is exercised in a build without CUDA.
#include <cstring>
#include <memory>

#include "support/check.h"
#include "trtx/memory/runtime_scratch_provider.h"

using trtx::memory::SharedScratchOptions;
using trtx::memory::SharedScratchProvider;
using trtx::memory::SharedScratchRegistry;
using trtx::runtime::DeviceContext;
using trtx::runtime::EventRef;
using trtx::runtime::PrivateScratch;
using trtx::runtime::StreamRef;
using trtx::runtime::Target;

namespace {
StreamRef streamA{reinterpret_cast<void*>(0xA)};
StreamRef streamB{reinterpret_cast<void*>(0xB)};
}  // namespace

TEST(factory_returns_one_provider_per_device) {
  SharedScratchRegistry registry(Target::Host, SharedScratchOptions());
  auto factory = registry.factory();
  auto a = factory(DeviceContext(Target::Host, 0), "forward.delegates[0]");
  auto b = factory(DeviceContext(Target::Host, 0), "forward.delegates[1]");
  auto c = factory(DeviceContext(Target::Host, 1), "forward.delegates[2]");
  CHECK(a == b);
  CHECK(a != c);
  CHECK(dynamic_cast<SharedScratchProvider*>(a.get()) != nullptr);
  auto other = factory(DeviceContext(Target::Cuda, 0), "forward.delegates[3]");
  CHECK(dynamic_cast<PrivateScratch*>(other.get()) != nullptr);
}

TEST(delegates_share_one_growing_buffer) {
  SharedScratchOptions options;
  options.reclaim = false;
  SharedScratchRegistry registry(Target::Host, options);
  auto factory = registry.factory();
  DeviceContext device(Target::Host, 0);
  auto first = factory(device, "d0");
  auto second = factory(device, "d1");

  auto p1 = first->acquire(device, 256, streamA);
  CHECK(p1.ok());
  std::memset(*p1, 0x5a, 256);  // real memory on the host target
  first->release_after(EventRef{});
  auto p2 = second->acquire(device, 128, streamB);
  CHECK(p2.ok());
  CHECK(*p2 == *p1);
  second->release_after(EventRef{});
  auto p3 = first->acquire(device, 4096, streamA);
  CHECK(p3.ok());
  std::memset(*p3, 0x11, 4096);
  first->release_after(EventRef{});
  CHECK_EQ(second->capacity(), 4096u);
  CHECK(registry.reportJson().find("\"reason\":\"grow\"") != std::string::npos);
  CHECK(registry.reportJson().find("\"handoff_failures\":0") != std::string::npos);
}

TEST(acquire_before_release_after_is_invalid_state) {
  SharedScratchRegistry registry(Target::Host, SharedScratchOptions());
  auto factory = registry.factory();
  DeviceContext device(Target::Host, 0);
  auto provider = factory(device, "d0");
  CHECK(provider->acquire(device, 64, streamA).ok());
  auto again = provider->acquire(device, 64, streamA);
  CHECK(!again.ok());
  CHECK(again.error() == trtx::Error::InvalidState);
  provider->release_after(EventRef{});
  CHECK(provider->acquire(device, 64, streamA).ok());
  provider->release_after(EventRef{});
}

TEST(wrong_device_is_rejected) {
  SharedScratchRegistry registry(Target::Host, SharedScratchOptions());
  auto provider = registry.factory()(DeviceContext(Target::Host, 0), "d0");
  auto result = provider->acquire(DeviceContext(Target::Host, 1), 64, streamA);
  CHECK(!result.ok());
  CHECK(result.error() == trtx::Error::InvalidArgument);
}

TEST(reclaims_through_the_provider) {
  SharedScratchRegistry registry(Target::Host, SharedScratchOptions());
  DeviceContext device(Target::Host, 0);
  auto provider = registry.factory()(device, "d0");
  auto once = [&](size_t bytes) {
    auto p = provider->acquire(device, bytes, streamA);
    if (p.ok() && *p != nullptr) std::memset(*p, 1, bytes);
    provider->release_after(EventRef{});
  };
  once(64);
  once(1 << 20);
  once(64);
  once(64);
  CHECK_EQ(provider->capacity(), size_t(1) << 20);
  once(64);
  CHECK_EQ(provider->capacity(), 64u);
  CHECK(registry.reportJson().find("\"reason\":\"shrink\"") != std::string::npos);
}

TEST(shutdown_releases_every_buffer) {
  SharedScratchRegistry registry(Target::Host, SharedScratchOptions());
  DeviceContext device(Target::Host, 0);
  auto provider = registry.factory()(device, "d0");
  CHECK(provider->acquire(device, 1024, streamA).ok());
  provider->release_after(EventRef{});
  CHECK(registry.shutdown().ok());
  CHECK_EQ(provider->capacity(), 0u);
}

int main() { return trtx::test::run_all(); }
