// The device allocator trtx registers with ExecuTorch, on the host stand-in
// (a CPU build): reached through ExecuTorch's own registry and
// DeviceMemoryBuffer, it never clears memory unless asked to poison it,
// refuses copies whose device side it did not hand out, and counts traffic.
#include "trtx/et/device_allocator.h"

#include <executorch/runtime/core/device_memory_buffer.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/check.h"
#include "trtx/et/recorded_failure.h"

namespace et = executorch::runtime;
using trtx::et::ArenaFill;
using trtx::et::device_allocator;

namespace {

void setup(ArenaFill fill, std::vector<int>* first_use = nullptr) {
  trtx::et::register_device_allocator();
  device_allocator().configure({trtx::runtime::Target::Host, fill, [first_use](int d) {
                                  if (first_use != nullptr) first_use->push_back(d);
                                }});
  (void)trtx::et::take_failure();
}

et::DeviceMemoryBuffer make(size_t n) {
  auto b = et::DeviceMemoryBuffer::create(n, et::etensor::DeviceType::CUDA, 0);
  return b.ok() ? std::move(b.get()) : et::DeviceMemoryBuffer();
}

}  // namespace

TEST(registered_for_cuda_through_the_executorch_registry) {
  setup(ArenaFill::Poison);
  CHECK(et::get_device_allocator(et::etensor::DeviceType::CUDA) == &device_allocator());
}

TEST(poison_fills_every_byte_with_0xff) {
  setup(ArenaFill::Poison);
  const auto before = device_allocator().stats();
  et::DeviceMemoryBuffer b = make(1000);
  CHECK(b.data() != nullptr);
  const auto* p = static_cast<const uint8_t*>(b.data());
  bool all = true;
  for (size_t i = 0; i < 1000; ++i) all = all && p[i] == 0xFF;
  CHECK(all);
  CHECK_EQ(device_allocator().stats().filled_bytes - before.filled_bytes, uint64_t{1000});
  CHECK_EQ(reinterpret_cast<uintptr_t>(b.data()) % 256, uintptr_t{0});
}

TEST(fill_none_leaves_memory_as_allocated) {
  setup(ArenaFill::None);
  const auto before = device_allocator().stats();
  et::DeviceMemoryBuffer b = make(64);
  CHECK(b.data() != nullptr);
  CHECK_EQ(device_allocator().stats().filled_bytes, before.filled_bytes);
  CHECK_EQ(device_allocator().stats().allocations - before.allocations, uint64_t{1});
  CHECK_EQ(device_allocator().stats().allocate_call_us.size(), before.allocate_call_us.size() + 1);
}

TEST(owns_exactly_its_allocations) {
  setup(ArenaFill::Poison);
  et::DeviceMemoryBuffer b = make(128);
  auto* p = static_cast<uint8_t*>(b.data());
  CHECK(device_allocator().owns(p, 128));
  CHECK(device_allocator().owns(p + 64, 64));
  CHECK(!device_allocator().owns(p + 64, 65));
  uint8_t host[16];
  CHECK(!device_allocator().owns(host, 16));
  void* freed = b.data();
  b = et::DeviceMemoryBuffer();
  CHECK(!device_allocator().owns(freed, 1));
}

TEST(copies_count_traffic_and_refuse_host_memory_on_the_device_side) {
  setup(ArenaFill::Poison);
  et::DeviceMemoryBuffer b = make(32);
  std::vector<uint8_t> host(32, 7), back(32, 0);
  const trtx::runtime::CopyCounters t0 = device_allocator().traffic();
  CHECK(device_allocator().copy_host_to_device(b.data(), host.data(), 32, 0) == et::Error::Ok);
  CHECK(device_allocator().copy_device_to_host(back.data(), b.data(), 32, 0) == et::Error::Ok);
  CHECK(back == host);
  CHECK_EQ(device_allocator().traffic().h2d_bytes - t0.h2d_bytes, uint64_t{32});
  CHECK_EQ(device_allocator().traffic().d2h_bytes - t0.d2h_bytes, uint64_t{32});
  // The copy kernels' part is counted apart: a delegate's own staging
  // (add_traffic) is program traffic, not a copy kernel's.
  const trtx::runtime::CopyCounters k0 = device_allocator().kernel_traffic();
  CHECK_EQ(k0.h2d_bytes, device_allocator().traffic().h2d_bytes);
  device_allocator().add_traffic({5, 6, 7});
  CHECK_EQ(device_allocator().kernel_traffic().h2d_bytes, k0.h2d_bytes);
  CHECK_EQ(device_allocator().traffic().h2d_bytes - t0.h2d_bytes, uint64_t{37});
  CHECK(device_allocator().copy_host_to_device(b.data(), host.data(), 32, 0) == et::Error::Ok);
  CHECK_EQ(device_allocator().kernel_traffic().h2d_bytes - k0.h2d_bytes, uint64_t{32});
  // A tensor tagged CUDA in a host arena: the real allocator's cudaMemcpy
  // would refuse it; the stand-in must not accept it either.
  const uint64_t refused = device_allocator().stats().refused_copies;
  std::vector<uint8_t> not_device(32, 0);
  CHECK(device_allocator().copy_host_to_device(not_device.data(), host.data(), 32, 0) == et::Error::InvalidArgument);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->message.find("host arena") != std::string::npos);
  CHECK(device_allocator().copy_device_to_host(back.data(), not_device.data(), 32, 0) == et::Error::InvalidArgument);
  (void)trtx::et::take_failure();
  CHECK_EQ(device_allocator().stats().refused_copies - refused, uint64_t{2});
  // Past the end of a live allocation is not inside it.
  CHECK(device_allocator().copy_host_to_device(static_cast<uint8_t*>(b.data()) + 16, host.data(), 32, 0) ==
        et::Error::InvalidArgument);
  (void)trtx::et::take_failure();
}

TEST(zero_is_what_an_application_does_to_initialise) {
  setup(ArenaFill::Poison);
  et::DeviceMemoryBuffer b = make(48);
  CHECK_OK(device_allocator().zero(b.data(), 48));
  std::vector<uint8_t> back(48, 1);
  CHECK_OK(device_allocator().read(back.data(), b.data(), 48));
  CHECK(back == std::vector<uint8_t>(48, 0));
  uint8_t host[4];
  CHECK_ERR(device_allocator().zero(host, 4), trtx::Error::InvalidArgument);
}

TEST(alignment_limits_are_the_cuda_allocators) {
  setup(ArenaFill::Poison);
  CHECK(device_allocator().allocate(16, 0, 3).error() == et::Error::InvalidArgument);
  CHECK(device_allocator().allocate(16, 0, 512).error() == et::Error::NotSupported);
  (void)trtx::et::take_failure();
  auto ok = device_allocator().allocate(16, 0, 256);
  CHECK(ok.ok());
  if (ok.ok()) device_allocator().deallocate(ok.get(), 0);
}

TEST(an_impossible_size_is_an_error_not_a_crash) {
  setup(ArenaFill::Poison);
  auto r = device_allocator().allocate(SIZE_MAX - 8, 0, 16);
  CHECK(r.error() == et::Error::MemoryAllocationFailed);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->code == trtx::Error::MemoryAllocationFailed);
}

TEST(first_use_hook_runs_once_per_device) {
  // A fresh device index, so earlier cases have not seen it.
  std::vector<int> seen;
  setup(ArenaFill::None, &seen);
  auto a = device_allocator().allocate(8, 5, 16);
  auto b = device_allocator().allocate(8, 5, 16);
  CHECK(seen == std::vector<int>{5});
  if (a.ok()) device_allocator().deallocate(a.get(), 5);
  if (b.ok()) device_allocator().deallocate(b.get(), 5);
}

TEST(deallocate_ignores_memory_it_did_not_hand_out) {
  setup(ArenaFill::None);
  const uint64_t before = device_allocator().stats().deallocations;
  uint8_t host[8];
  device_allocator().deallocate(host, 0);
  CHECK_EQ(device_allocator().stats().deallocations, before);
}

// The names its failures report come from ExecuTorch's own to_string, so a
// code the runner's table once lacked (AlreadyLoaded) is named, not generic.
TEST(executorch_errors_are_named_as_executorch_names_them) {
  CHECK_EQ(std::string(trtx::et::et_error_name(et::Error::NotSupported)), std::string("NotSupported"));
  CHECK_EQ(std::string(trtx::et::et_error_name(et::Error::AlreadyLoaded)), std::string("AlreadyLoaded"));
  CHECK_EQ(std::string(trtx::et::et_error_name(static_cast<et::Error>(0x7f))), std::string("Unknown"));
  CHECK(trtx::et::from_et_error(et::Error::InvalidProgram) == trtx::Error::InvalidProgram);
  CHECK(trtx::et::from_et_error(et::Error::AlreadyLoaded) == trtx::Error::Internal);
}

int main() { return trtx::test::run_all(); }

TEST(a_device_the_machine_lacks_is_the_environments_limit_before_any_device_call) {
  // A program planned for more GPUs than this machine has: said as
  // DeviceUnavailable (trtx verify's VERIFY_NO_GPU), not a CUDA fault, and
  // nothing (not the warm-pool hook) touches the device first.
  std::vector<int> seen;
  trtx::et::register_device_allocator();
  device_allocator().configure({trtx::runtime::Target::Cuda, ArenaFill::Poison, [&seen](int d) { seen.push_back(d); }});
  (void)trtx::et::take_failure();
  auto r = device_allocator().allocate(64, 64, 16);
  CHECK(r.error() == et::Error::NotSupported);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->code == trtx::Error::DeviceUnavailable);
  CHECK(f.has_value() && f->location.find("cuda:64") != std::string::npos);
  CHECK(seen.empty());
  setup(ArenaFill::Poison);
}
