// Weight placement and streaming (weights.h).
#include "weights.h"

#include <algorithm>

namespace trtx::aten_kernels {

namespace {

constexpr uint64_t kAlign = 256;  // cudaMalloc's alignment, kept inside the window
uint64_t aligned(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

at::Tensor bytes_over(const void* data, uint64_t n) {
  return at::from_blob(const_cast<void*>(data), {static_cast<int64_t>(n)}, at::TensorOptions().dtype(at::kByte));
}

}  // namespace

std::vector<int32_t> mentioned(const Plan& plan, const Instruction& ins) {
  std::vector<int32_t> out;
  for (int32_t v : ins.args) {
    out.push_back(v);
    for (int32_t item : plan.lists[v].items) {
      if (item >= 0) out.push_back(item);
    }
  }
  if (ins.kind == Instruction::Kind::Move) out = {ins.a, ins.b};
  return out;
}

Status Weights::init(const Plan& plan, std::vector<ConstantBytes> host, const at::Device& device, bool internal_stream,
                     const std::string& at) {
  device_ = device;
  weight_of_value_.assign(plan.values.size(), -1);
  for (size_t i = 0; i < plan.constants.size(); ++i) {
    const ConstantRef& c = plan.constants[i];
    if (host[i].data == nullptr || host[i].nbytes != c.nbytes) {
      return fail(Error::EngineFormat, at,
                  "constant " + (c.key.empty() ? "#" + std::to_string(c.buffer_index) : "'" + c.key + "'") + " holds " +
                      std::to_string(host[i].nbytes) + " bytes; the program's tensor takes " +
                      std::to_string(c.nbytes));
    }
    weight_of_value_[c.value_index] = static_cast<int64_t>(weights_.size());
    weights_.push_back(Weight{c.value_index, host[i], true, internal_stream || !c.key.empty(), {}, {}, {}});
    if (weights_.back().streamable) placement_.total_bytes += c.nbytes;
  }
  return ok_status();
}

Status Weights::place(const Plan& plan, std::optional<uint64_t> budget, const std::string& at) {
  // First use decides the order: what the first layers read stays resident
  // first, as a budget fills.
  std::vector<size_t> order;
  std::vector<bool> seen(weights_.size(), false);
  for (const Instruction& ins : plan.instructions) {
    for (int32_t v : mentioned(plan, ins)) {
      const int64_t w = weight_of_value_[v];
      if (w >= 0 && !seen[w]) {
        seen[w] = true;
        order.push_back(static_cast<size_t>(w));
      }
    }
  }
  for (size_t w = 0; w < weights_.size(); ++w) {
    if (!seen[w]) order.push_back(w);
  }
  placement_.resident_bytes = 0;
  placement_.streamed_bytes_per_execute = 0;
  uint64_t used = 0;
  for (size_t w : order) {
    Weight& weight = weights_[w];
    weight.resident = !budget.has_value() || !weight.streamable || used + weight.host.nbytes <= *budget;
    if (weight.resident && weight.streamable) used += weight.host.nbytes;
  }
  try {
    const bool host = device_.is_cpu();
    for (Weight& w : weights_) {
      w.on_device = at::Tensor();
      w.owner = at::Tensor();
      w.source = at::Tensor();
      if (w.resident) {
        if (w.streamable) placement_.resident_bytes += w.host.nbytes;
        // On the host target the weight is used where the loader mapped it;
        // on a GPU it is copied into device memory once.
        w.owner = host ? at::Tensor() : bytes_over(w.host.data, w.host.nbytes).to(device_, /*non_blocking=*/false);
        void* data = host ? const_cast<void*>(w.host.data) : w.owner.data_ptr();
        w.on_device = tensor_over(plan, w.value, data, device_);
      } else {
        w.source = host ? bytes_over(w.host.data, w.host.nbytes) : bytes_over(w.host.data, w.host.nbytes).pin_memory();
      }
    }
    streamed_.assign(plan.instructions.size(), {});
    uint64_t window = 0;
    for (size_t pc = 0; pc < plan.instructions.size(); ++pc) {
      uint64_t offset = 0;
      std::vector<bool> taken(weights_.size(), false);
      for (int32_t v : mentioned(plan, plan.instructions[pc])) {
        const int64_t w = weight_of_value_[v];
        if (w < 0 || weights_[w].resident || taken[w]) continue;
        taken[w] = true;
        streamed_[pc].emplace_back(static_cast<size_t>(w), offset);
        placement_.streamed_bytes_per_execute += weights_[w].host.nbytes;
        offset += aligned(weights_[w].host.nbytes);
      }
      window = std::max(window, offset);
    }
    placement_.window_bytes = window;
    window_ = window == 0
                  ? at::Tensor()
                  : at::empty({static_cast<int64_t>(window)}, at::TensorOptions().dtype(at::kByte).device(device_));
  } catch (const std::exception& e) {
    return fail(Error::MemoryAllocationFailed, at, std::string("placing the engine's weights failed: ") + e.what());
  }
  placed_ = true;
  return ok_status();
}

void Weights::bind_resident(std::vector<c10::IValue>& values) const {
  for (const Weight& w : weights_) {
    if (w.resident) values[w.value] = c10::IValue(w.on_device);
  }
}

void Weights::stream_for(const Plan& plan, size_t pc, std::vector<c10::IValue>& values) {
  if (streamed_.empty()) return;
  for (const auto& [w, offset] : streamed_[pc]) {
    const Weight& weight = weights_[w];
    at::Tensor slot = window_.narrow(0, static_cast<int64_t>(offset), static_cast<int64_t>(weight.host.nbytes));
    // Stream-ordered: the copy waits for every operator queued before it,
    // including the last reader of this part of the window.
    slot.copy_(weight.source, /*non_blocking=*/true);
    // window_ outlives every run's values.
    values[weight.value] = c10::IValue(tensor_over(plan, weight.value, slot.data_ptr(), device_));
    placement_.streamed_bytes += weight.host.nbytes;
    ++placement_.streamed_copies;
  }
}

}  // namespace trtx::aten_kernels
