#include "run_memory.h"

#include <algorithm>

#include "trtx/et/device_allocator.h"

namespace trtx::cli {

namespace et = executorch::runtime;
using integration::RunnerMemory;

namespace {

// The devices `methods` plan memory on, and `own`, in order.
std::vector<int> planned_devices(integration::RunnerModule& module, const std::vector<std::string>& methods, int own) {
  std::vector<int> devices{own};
  for (const auto& name : methods) {
    auto meta = module.method_meta(name);
    if (!meta.ok()) continue;
    for (size_t b = 0; b < meta->num_memory_planned_buffers(); ++b) {
      auto d = meta->memory_planned_buffer_device(b);
      if (!d.ok() || d->type() == et::etensor::DeviceType::CPU) continue;
      const int index = d->index();
      if (std::find(devices.begin(), devices.end(), index) == devices.end()) devices.push_back(index);
    }
  }
  std::sort(devices.begin(), devices.end());
  return devices;
}

}  // namespace

RunMemory::~RunMemory() {
  guards_.clear();
  (void)teardown();
  for (const auto& cs : streams_) runtime::DeviceContext(target_, cs.first).destroy_stream(cs.second);
}

void RunMemory::without_device() {
  memory_ = std::make_unique<RunnerMemory>(
      runtime::Target::Host, integration::RunnerMemoryOptions{options_.cold_pool, options_.shared_scratch}, nullptr,
      "no device was chosen for the run");
}

void RunMemory::set_up(const runtime::DeviceContext& device) {
  target_ = device.target();
  own_device_ = device.device_index();
  memory_ = RunnerMemory::create(target_, {options_.cold_pool, options_.shared_scratch});
  RunnerMemory* memory = memory_.get();
  // The warm pool is acquired when ExecuTorch allocates the first arena of a device, so
  // every arena comes from it and it stays warm across --fresh-state reloads until teardown.
  trtx::et::device_allocator().configure(
      {target_, options_.arena_fill, [memory](int d) { memory->program_loaded({d}); }});
  trtx::et::register_device_allocator();
}

// A CUDA stream serves one device only, so an application running a program
// across devices hands the runtime one per device.
Status RunMemory::set_caller_streams(integration::RunnerModule& module, const std::vector<std::string>& methods) {
  for (int d : planned_devices(module, methods, own_device_)) {
    TRTX_CHECK_OK(runtime::require_device(target_, d, "the program plans memory"));
    runtime::DeviceContext ctx(target_, d);
    auto s = ctx.create_stream(/*non_blocking=*/true);
    if (!s.ok()) {
      Failure f = s.take_failure();
      f.location = "--caller-stream on (cuda:" + std::to_string(d) + ")";
      return f;
    }
    streams_.emplace_back(d, s.get());
    guards_.push_back(std::make_unique<trtx::et::CallerStreamGuard>(s.get(), d));
  }
  return ok_status();
}

Status RunMemory::synchronize_caller_streams() const {
  for (const auto& cs : streams_) TRTX_CHECK_OK(runtime::DeviceContext(target_, cs.first).synchronize(cs.second));
  return ok_status();
}

}  // namespace trtx::cli
