// The partition's program on ATen's kernels (aten_program.h): the plan read
// once, its arenas laid in the delegate's scratch or memory of its own, its
// weights placed by the budget (weights.h), its inputs read where they are
// bound and its outputs written where they are bound.
#include <c10/core/InferenceMode.h>

#include "api.h"
#include "plan.h"
#include "stream_scope.h"
#include "weights.h"

namespace trtx::aten_kernels {

namespace {

constexpr uint64_t kArenaAlign = 256;
// A jump-back loop in a hostile plan must not run forever.
constexpr uint64_t kMaxInstructionsPerRun = uint64_t{1} << 26;

// How each output reaches its binding.
enum class OutputWay { InPlace, Copy };

class AtenProgram final : public Program {
 public:
  AtenProgram(Plan plan, const runtime::DeviceContext& device)
      : plan_(std::move(plan)),
        device_(device),
        at_device_(device.target() == runtime::Target::Cuda
                       ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device.device_index()))
                       : at::Device(at::kCPU)) {}

  Status init(std::vector<ConstantBytes> host, bool internal_weights_stream, const std::string& at) {
    TRTX_CHECK_OK(weights_.init(plan_, std::move(host), at_device_, internal_weights_stream, at));
    mentions_.assign(plan_.values.size(), {});
    for (size_t pc = 0; pc < plan_.instructions.size(); ++pc) {
      for (int32_t v : mentioned(plan_, plan_.instructions[pc])) mentions_[v].push_back(pc);
    }
    is_input_.assign(plan_.values.size(), false);
    for (int32_t v : plan_.inputs) is_input_[v] = true;
    is_planned_.assign(plan_.values.size(), false);
    for (const PlannedTensor& p : plan_.planned) is_planned_[p.value] = true;
    find_aliases();
    arena_offset_.assign(plan_.arena_bytes.size(), 0);
    for (size_t i = 1; i < plan_.arena_bytes.size(); ++i) {
      arena_offset_[i] = arena_total_;
      arena_total_ += (plan_.arena_bytes[i] + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    }
    return ok_status();
  }

  Status place_weights(std::optional<uint64_t> budget) override { return weights_.place(plan_, budget, where_); }

  Status run(const std::vector<void*>& inputs, const std::vector<void*>& outputs, void* scratch, uint64_t scratch_bytes,
             runtime::StreamRef stream, const std::string& at) override {
    if (inputs.size() != plan_.inputs.size() || outputs.size() != plan_.outputs.size()) {
      return fail(Error::DelegateExecutionFailed, at, "the bindings do not match the method's inputs and outputs");
    }
    c10::InferenceMode inference;
    TRTX_ASSIGN_OR_RETURN(std::unique_ptr<StreamScope> scope, enter_stream(device_, stream, at));
    if (!weights_.placed()) TRTX_CHECK_OK(weights_.place(plan_, std::nullopt, at));
    try {
      TRTX_CHECK_OK(lay_arenas(scratch, scratch_bytes));
      std::vector<c10::IValue> values = fresh_values();
      weights_.bind_resident(values);
      for (size_t k = 0; k < inputs.size(); ++k) {
        at::Tensor bound = tensor_over(plan_, plan_.inputs[k], inputs[k], at_device_);
        if (input_written_[k] && values[plan_.inputs[k]].isTensor()) {
          // The program writes this input: it gets a copy in its planned
          // memory, as ExecuTorch's set_input makes, never the caller's bytes.
          values[plan_.inputs[k]].toTensor().copy_(bound, /*non_blocking=*/true);
          copies_.d2d_bytes += static_cast<uint64_t>(bound.nbytes());
        } else {
          values[plan_.inputs[k]] = c10::IValue(bound);
        }
      }
      for (const InputAlias& a : input_aliases_) {
        if (input_written_[a.input]) continue;
        values[a.value] =
            c10::IValue(tensor_over(plan_, a.value, static_cast<uint8_t*>(inputs[a.input]) + a.offset, at_device_));
      }
      std::vector<OutputWay> ways = output_ways(inputs, outputs);
      std::vector<at::Tensor> bound(outputs.size());
      for (size_t k = 0; k < outputs.size(); ++k) {
        bound[k] = tensor_over(plan_, plan_.outputs[k], outputs[k], at_device_);
        if (ways[k] == OutputWay::InPlace) values[plan_.outputs[k]] = c10::IValue(bound[k]);
      }
      TRTX_CHECK_OK(execute(values, at));
      for (size_t k = 0; k < outputs.size(); ++k) {
        if (ways[k] != OutputWay::Copy) continue;
        const at::Tensor& result = values[plan_.outputs[k]].toTensor();
        bound[k].copy_(result, /*non_blocking=*/true);
        copies_.d2d_bytes += static_cast<uint64_t>(result.nbytes());
      }
    } catch (const std::exception& e) {
      return fail(Error::DelegateExecutionFailed, at, std::string("ATen failed: ") + e.what());
    }
    return ok_status();
  }

  WeightPlacement weights() const override { return weights_.placement(); }
  runtime::CopyCounters copies() const override { return copies_; }
  bool activations_in_scratch() const override { return in_scratch_; }

  void set_where(std::string at) { where_ = std::move(at); }

 private:
  // The arenas in the delegate's scratch when it holds them all; else in
  // memory of their own, made once.
  Status lay_arenas(void* scratch, uint64_t scratch_bytes) {
    uint8_t* base = nullptr;
    const bool fits = scratch != nullptr && arena_total_ <= scratch_bytes;
    if (fits) {
      base = static_cast<uint8_t*>(scratch);
    } else {
      if (!own_arenas_.defined() && arena_total_ > 0) {
        own_arenas_ =
            at::empty({static_cast<int64_t>(arena_total_)}, at::TensorOptions().dtype(at::kByte).device(at_device_));
      }
      base = own_arenas_.defined() ? static_cast<uint8_t*>(own_arenas_.data_ptr()) : nullptr;
    }
    in_scratch_ = fits;
    laid_at_ = base;
    return ok_status();
  }

  // The plan's values with every planned tensor made anew over the arenas:
  // an ATen out= kernel may resize the tensor it writes (resize_output), and
  // a tensor kept from an earlier run would carry that into the next.
  std::vector<c10::IValue> fresh_values() const {
    std::vector<c10::IValue> values = plan_.values;
    uint8_t* base = const_cast<uint8_t*>(laid_at_);
    for (const PlannedTensor& p : plan_.planned) {
      values[p.value] = c10::IValue(tensor_over(plan_, p.value, base + arena_offset_[p.arena] + p.offset, at_device_));
    }
    return values;
  }

  // An output is computed in its binding when that is safe: a planned value
  // that is no input and is output once, bound apart from every input; or a
  // KV cache whose binding is its input's and whose one writer is an
  // index_put.out of that input (in place, as TensorRT's KVCacheUpdate layer
  // writes it). Anything else is computed in the arena and copied.
  std::vector<OutputWay> output_ways(const std::vector<void*>& inputs, const std::vector<void*>& outputs) const {
    std::vector<OutputWay> ways(outputs.size(), OutputWay::Copy);
    for (size_t k = 0; k < outputs.size(); ++k) {
      const int32_t v = plan_.outputs[k];
      if (!is_planned_[v] || is_input_[v] || shares_slot_[v]) continue;
      if (std::count(plan_.outputs.begin(), plan_.outputs.end(), v) != 1) continue;
      int64_t aliased = -1;
      bool overlaps = false;
      const auto* o = static_cast<const uint8_t*>(outputs[k]);
      const uint64_t on = nbytes(v);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const auto* p = static_cast<const uint8_t*>(inputs[i]);
        const uint64_t pn = nbytes(plan_.inputs[i]);
        if (p == o && pn == on) aliased = static_cast<int64_t>(i);
        if (p < o + on && o < p + pn) overlaps = true;
      }
      if (!overlaps) {
        ways[k] = OutputWay::InPlace;
      } else if (aliased >= 0 && cache_update_in_place(plan_.inputs[aliased], v)) {
        ways[k] = OutputWay::InPlace;
      }
    }
    return ways;
  }

  bool cache_update_in_place(int32_t cache, int32_t updated) const {
    if (mentions_[cache].size() != 1 || mentions_[updated].empty()) return false;
    const size_t pc = mentions_[cache][0];
    const Instruction& ins = plan_.instructions[pc];
    return ins.kind == Instruction::Kind::Kernel && plan_.ops[ins.op].index_put_out && ins.args.size() >= 5 &&
           ins.args[0] == cache && ins.args[4] == updated && mentions_[updated][0] == pc;
  }

  // Where the plan gives one tensor two values (the emitter's aliases: two
  // values with one allocation), ExecuTorch's set_input fills both by
  // filling the memory. Inputs are read where they are bound here, so a
  // value that reads an input's planned memory before anything writes it is
  // that input: it is read from the binding too. And an output that shares
  // its slot with another value stays in the arena (copied out at the end),
  // so the other value sees what it writes.
  void find_aliases() {
    const size_t n = plan_.values.size();
    std::vector<const PlannedTensor*> slot(n, nullptr);
    for (const PlannedTensor& p : plan_.planned) slot[p.value] = &p;
    auto overlaps = [&](const PlannedTensor& a, const PlannedTensor& b) {
      return a.arena == b.arena && a.offset < b.offset + nbytes(b.value) && b.offset < a.offset + nbytes(a.value);
    };
    shares_slot_.assign(n, false);
    for (const PlannedTensor& a : plan_.planned) {
      for (const PlannedTensor& b : plan_.planned) {
        if (a.value != b.value && a.arena == b.arena && a.offset == b.offset && nbytes(a.value) > 0)
          shares_slot_[a.value] = true;
      }
    }
    // The first instruction that writes each planned value.
    std::vector<int64_t> first_write(n, -1);
    for (size_t pc = 0; pc < plan_.instructions.size(); ++pc) {
      for (int32_t v : written(plan_, plan_.instructions[pc])) {
        if (first_write[v] < 0) first_write[v] = static_cast<int64_t>(pc);
      }
    }
    for (size_t k = 0; k < plan_.inputs.size(); ++k) {
      const PlannedTensor* u = slot[plan_.inputs[k]];
      if (u == nullptr) continue;
      for (const PlannedTensor& v : plan_.planned) {
        if (is_input_[v.value] || mentions_[v.value].empty() || !overlaps(*u, v)) continue;
        if (v.offset < u->offset || v.offset + nbytes(v.value) > u->offset + nbytes(u->value)) continue;
        const size_t read_at = mentions_[v.value][0];
        bool written_before = false;
        for (const PlannedTensor& w : plan_.planned) {
          if (overlaps(w, v) && first_write[w.value] >= 0 && static_cast<size_t>(first_write[w.value]) <= read_at) {
            written_before = true;
          }
        }
        if (!written_before) input_aliases_.push_back(InputAlias{v.value, k, v.offset - u->offset});
      }
    }
    // An input the program writes (itself or through an alias) is not read in place.
    input_written_.assign(plan_.inputs.size(), false);
    for (size_t k = 0; k < plan_.inputs.size(); ++k) {
      input_written_[k] = first_write[plan_.inputs[k]] >= 0 && slot[plan_.inputs[k]] != nullptr;
    }
    for (const InputAlias& a : input_aliases_) {
      if (first_write[a.value] >= 0) input_written_[a.input] = true;
    }
  }

  uint64_t nbytes(int32_t v) const {
    uint64_t n = c10::elementSize(plan_.dtype[v]);
    for (int64_t s : plan_.sizes[v]) n *= static_cast<uint64_t>(s);
    return n;
  }

  Status execute(std::vector<c10::IValue>& values, const std::string& at) {
    uint64_t steps = 0;
    for (size_t pc = 0; pc < plan_.instructions.size();) {
      if (++steps > kMaxInstructionsPerRun) {
        return fail(Error::DelegateExecutionFailed, at, "the engine's program did not finish (a jump loops)");
      }
      const Instruction& ins = plan_.instructions[pc];
      switch (ins.kind) {
        case Instruction::Kind::Kernel:
          weights_.stream_for(plan_, pc, values);
          TRTX_CHECK_OK(call(plan_, values, ins, pc, at));
          ++pc;
          break;
        case Instruction::Kind::Move:
          values[ins.b] = values[ins.a];
          ++pc;
          break;
        case Instruction::Kind::JumpFalse: {
          const c10::IValue& c = values[ins.a];
          const bool cond = c.isTensor() ? c.toTensor().item<bool>() : c.toBool();
          pc = cond ? pc + 1 : static_cast<size_t>(std::max(ins.b, 0));
          break;
        }
        case Instruction::Kind::Free:
          ++pc;
          break;
      }
    }
    return ok_status();
  }

  Plan plan_;
  runtime::DeviceContext device_;
  at::Device at_device_;
  std::string where_;
  Weights weights_;
  std::vector<std::vector<size_t>> mentions_;  // value -> instructions that mention it
  std::vector<bool> is_input_, is_planned_, shares_slot_;
  struct InputAlias {
    size_t value = 0;
    size_t input = 0;     // index among the method's inputs
    uint64_t offset = 0;  // bytes into the input
  };
  std::vector<InputAlias> input_aliases_;
  std::vector<bool> input_written_;  // per method input: the program writes it, so it is copied in
  std::vector<uint64_t> arena_offset_;
  uint64_t arena_total_ = 0;
  at::Tensor own_arenas_;
  const uint8_t* laid_at_ = nullptr;
  bool in_scratch_ = false;
  runtime::CopyCounters copies_;
};

}  // namespace

namespace {

Result<std::unique_ptr<Program>> load_program(const uint8_t* pte, size_t size, const std::string& method,
                                              const runtime::DeviceContext& device, const ConstantResolver& constants,
                                              bool internal_weights_stream, const std::string& at) {
  TRTX_ASSIGN_OR_RETURN(Plan plan, read_plan(pte, size, method, at));
  TRTX_CHECK_OK(resolve_ops(plan, at));
  std::vector<ConstantBytes> host;
  for (const ConstantRef& c : plan.constants) {
    TRTX_ASSIGN_OR_RETURN(ConstantBytes b, constants(c));
    host.push_back(b);
  }
  auto program = std::make_unique<AtenProgram>(std::move(plan), device);
  program->set_where(at);
  TRTX_CHECK_OK(program->init(std::move(host), internal_weights_stream, at));
  return std::unique_ptr<Program>(std::move(program));
}

const Api kApi{kApiVersion, load_program};

}  // namespace

}  // namespace trtx::aten_kernels

extern "C" __attribute__((visibility("default"))) const trtx::aten_kernels::Api* trtx_aten_api() {
  return &trtx::aten_kernels::kApi;
}
