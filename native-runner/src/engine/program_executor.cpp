// A version-2 or version-3 reference engine run by ExecuTorch itself
// (program_executor.h, docs/reference-lowering.md section 1): the program is
// loaded once at init over its own memory (version 3: its constants resolved
// from the outer program's named data, external_weights.h), and every
// enqueue reads the input bindings to the host, sets them, executes "forward"
// and writes each output into its binding.
#include "trtx/engine/program_executor.h"

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>

#include "external_weights.h"
#include "trtx/aten/aten_program.h"
#include "trtx/et/recorded_failure.h"

namespace trtx::engine {

namespace {

namespace et = executorch::runtime;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using runtime::Placement;

// The method the lowering emits (docs/reference-lowering.md section 1).
constexpr const char* kMethodName = "forward";

std::string shape_text(ScalarType t, const std::vector<int64_t>& sizes) {
  std::string s = std::string(scalar_type_name(t)) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

// Why ExecuTorch refused the program, in the runner's vocabulary. A missing
// kernel keeps its code (the runner names the operators from the runtime's
// log, cli/et_error_cause.cpp); anything else about the bytes is the engine's
// format.
Failure load_failure(et::Error e, const std::string& where, const std::string& what) {
  const std::string name = trtx::et::et_error_name(e);
  switch (e) {
    case et::Error::OperatorMissing:
      return fail(Error::OperatorMissing, where,
                  "the engine's program calls an operator this runtime has no kernel for (" + what + " failed with " +
                      name + "; the ExecuTorch log names the operator)");
    case et::Error::MemoryAllocationFailed:
      return fail(Error::MemoryAllocationFailed, where, what + " could not allocate its memory (" + name + ")");
    default:
      return fail(Error::EngineFormat, where,
                  "ExecuTorch refuses the engine's program: " + what + " failed with " + name);
  }
}

// One tensor of forward's signature, with host memory for an input.
struct Io {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
  std::vector<int32_t> et_sizes;
  std::vector<uint8_t> dim_order;
  uint64_t nbytes = 0;
  std::vector<uint8_t> host;         // inputs: the binding's bytes, read at each enqueue
  std::unique_ptr<TensorImpl> impl;  // inputs: over `host`
};

class ProgramExecutor final : public EngineExecutor {
 public:
  ProgramExecutor(StandinEngine e, runtime::DeviceContext device, const et::NamedDataMap* named_data, bool aten)
      : engine_(std::move(e)),
        device_(device),
        named_data_(named_data),
        use_aten_(aten),
        loader_(engine_.program->data(), engine_.program->size()) {}

  Status init(const std::vector<bool>& is_input, const std::string& where) {
    const std::string at = where + ".engine";
    // Version 3 keeps its weights in the outer program's named data, which
    // ExecuTorch hands init (runtime/backend/backend_init_context.h); without
    // it no constant of the engine can be found.
    if (engine_.version == kExternalWeightsVersion && named_data_ == nullptr) {
      return fail(Error::EngineFormat, at,
                  "reference engine version 3 reads its weights from the program's named data, and ExecuTorch gave "
                  "the delegate no named data map (BackendInitContext::get_named_data_map is null): the program "
                  "carries no named data");
    }
    for (size_t i = 0; i < is_input.size(); ++i) (is_input[i] ? inputs_ : outputs_).push_back(i);
    // InternalConsistency runs the flatbuffer verifier over the program
    // (runtime/executor/program.h), as the runner loads the outer program.
    et::Result<et::Program> program = et::Program::load(&loader_, et::Program::Verification::InternalConsistency);
    if (!program.ok()) return load_failure(program.error(), at, "Program::load");
    program_ = std::make_unique<et::Program>(std::move(program.get()));
    et::Result<et::MethodMeta> meta = program_->method_meta(kMethodName);
    if (!meta.ok()) {
      return fail(Error::EngineFormat, at,
                  std::string("the engine's program has no method '") + kMethodName + "' (" +
                      trtx::et::et_error_name(meta.error()) + ")");
    }
    if (meta->num_inputs() != inputs_.size() || meta->num_outputs() != outputs_.size()) {
      return fail(Error::EngineFormat, at,
                  std::string("the engine's program's ") + kMethodName + " takes " +
                      std::to_string(meta->num_inputs()) + " inputs and returns " +
                      std::to_string(meta->num_outputs()) + " outputs, but the blob binds " +
                      std::to_string(inputs_.size()) + " inputs and " + std::to_string(outputs_.size()) + " outputs");
    }
    // A delegate inside would run a backend from within this one's execute;
    // the lowering emits none (docs/reference-lowering.md).
    if (meta->num_backends() != 0) {
      return fail(Error::EngineFormat, at, "the engine's program is itself delegated; it must run on CPU kernels only");
    }
    TRTX_CHECK_OK(read_signature(*meta, true, at, in_));
    TRTX_CHECK_OK(read_signature(*meta, false, at, out_));
    if (use_aten_) return load_aten(at);
    TRTX_CHECK_OK(plan_memory(*meta, at));
    return load_forward(at);
  }

  const char* kind() const override { return kProgramExecutorKind; }
  const char* kernels() const override { return aten_ ? aten_kernels::kernel_set(device_.target()) : "executorch-cpu"; }
  std::optional<aten_kernels::WeightPlacement> weight_placement() const override {
    if (!aten_) return std::nullopt;
    return aten_->weights();
  }
  uint64_t streamable_weight_bytes() const override { return engine_.streamable_weight_bytes; }
  runtime::CopyCounters stand_in_copies() const override { return aten_ ? aten_->copies() : stand_in_; }
  bool weight_streaming() const override { return engine_.weight_streaming; }
  Status set_weight_streaming_budget(uint64_t bytes) override {
    // As TensorRT's setWeightStreamingBudgetV2 would take it; the program's
    // constants stay in host memory, so nothing streams.
    budget_ = bytes;
    // On ATen's kernels the budget places the weights: resident up to it,
    // the rest streamed per execute (aten_program.h).
    if (aten_) return aten_->place_weights(bytes);
    return ok_status();
  }

  Status check_bindings(const std::vector<BindingView>& b, const std::string& where) const override {
    const std::string at = where + ".engine";
    if (b.size() != inputs_.size() + outputs_.size()) {
      return fail(Error::DelegateExecutionFailed, at,
                  std::to_string(b.size()) + " bindings bound; the engine has " +
                      std::to_string(inputs_.size() + outputs_.size()));
    }
    for (size_t k = 0; k < inputs_.size(); ++k) TRTX_CHECK_OK(check_one(b[inputs_[k]], in_[k], "input", k, at));
    for (size_t k = 0; k < outputs_.size(); ++k) TRTX_CHECK_OK(check_one(b[outputs_[k]], out_[k], "output", k, at));
    return ok_status();
  }

  Result<uint64_t> scratch_bytes(const std::vector<BindingView>& b, const std::string& where) const override {
    return declared_scratch_bytes(engine_, b, where);
  }

  Status enqueue(const std::vector<BindingView>& b, void* scratch, uint64_t scratch_bytes, runtime::StreamRef stream,
                 const std::string& where) override {
    const std::string at = where + ".engine";
    if (aten_) return enqueue_aten(b, scratch, scratch_bytes, stream, at);
    // The program runs on the host: whatever the stream still has to do
    // before the inputs are ready is done first.
    TRTX_CHECK_OK(device_.synchronize(stream));
    // Every input is read before any output is written: an aliased output's
    // binding is its input's memory (tensorrt_execute.cpp binds it so).
    for (size_t k = 0; k < inputs_.size(); ++k) {
      const BindingView& v = b[inputs_[k]];
      Io& io = in_[k];
      if (v.nbytes != io.nbytes) return size_error(v, io, at);
      TRTX_CHECK_OK(
          device_.copy(io.host.data(), Placement::Host, v.data, Placement::Device, io.nbytes, stream, &stand_in_));
    }
    TRTX_CHECK_OK(device_.synchronize(stream));
    for (size_t k = 0; k < inputs_.size(); ++k) {
      const et::Error e = method_->set_input(et::EValue(Tensor(in_[k].impl.get())), k);
      if (e != et::Error::Ok) {
        return fail(Error::DelegateExecutionFailed, at,
                    "the engine's program refused input " + std::to_string(k) + " ('" + b[inputs_[k]].name +
                        "'): " + trtx::et::et_error_name(e));
      }
    }
    const et::Error e = method_->execute();
    if (e != et::Error::Ok) {
      return fail(Error::DelegateExecutionFailed, at,
                  std::string("the engine's program failed in ") + kMethodName + " with " + trtx::et::et_error_name(e) +
                      " (the ExecuTorch log says why)");
    }
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const BindingView& v = b[outputs_[k]];
      const et::EValue& value = method_->get_output(k);
      if (!value.isTensor()) {
        return fail(Error::DelegateExecutionFailed, at, "output " + std::to_string(k) + " is not a tensor");
      }
      const Tensor& t = value.toTensor();
      if (static_cast<uint64_t>(t.nbytes()) != v.nbytes) {
        return fail(Error::DelegateExecutionFailed, at,
                    "output " + std::to_string(k) + " ('" + v.name + "') came out " + std::to_string(t.nbytes()) +
                        " bytes; its binding holds " + std::to_string(v.nbytes));
      }
      TRTX_CHECK_OK(
          device_.copy(v.data, Placement::Device, t.const_data_ptr(), Placement::Host, v.nbytes, stream, &stand_in_));
    }
    // The next execute rewrites the program's memory the copies read from.
    return device_.synchronize(stream);
  }

  Status check_deferred(const std::string&) override { return ok_status(); }

 private:
  // ATen's kernels (aten_program.h) read the bindings where they are, on the
  // device the engine runs on: nothing is copied to the host.
  Status enqueue_aten(const std::vector<BindingView>& b, void* scratch, uint64_t scratch_bytes,
                      runtime::StreamRef stream, const std::string& at) {
    std::vector<void*> ins, outs;
    for (size_t k = 0; k < inputs_.size(); ++k) {
      if (b[inputs_[k]].nbytes != in_[k].nbytes) return size_error(b[inputs_[k]], in_[k], at);
      ins.push_back(b[inputs_[k]].data);
    }
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (b[outputs_[k]].nbytes != out_[k].nbytes) return size_error(b[outputs_[k]], out_[k], at);
      outs.push_back(b[outputs_[k]].data);
    }
    return aten_->run(ins, outs, scratch, scratch_bytes, stream, at);
  }

  // The plan on ATen's kernels. Its constants are resolved as ExecuTorch's
  // Method would (runtime/executor/method.cpp): inside the program by
  // data_buffer_idx (Program::get_constant_buffer_data), EXTERNAL by key from
  // the outer program's named data, each held as the loader gave it (mapped,
  // not copied).
  Status load_aten(const std::string& at) {
    if (engine_.version == kExternalWeightsVersion) {
      TRTX_ASSIGN_OR_RETURN(weights_, ExternalWeights::create(engine_.program->data(), engine_.program->size(),
                                                              kMethodName, named_data_, at));
    }
    auto resolve = [this, &at](const aten_kernels::ConstantRef& c) -> Result<aten_kernels::ConstantBytes> {
      if (!c.key.empty()) {
        if (named_data_ == nullptr)
          return fail(Error::EngineFormat, at,
                      "constant '" + c.key + "' is EXTERNAL and the program has no named data");
        et::Result<et::FreeableBuffer> data = named_data_->get_data(c.key.c_str());
        if (!data.ok()) return fail(Error::EngineFormat, at, "the program's named data has no entry '" + c.key + "'");
        held_.push_back(std::move(data.get()));
        return aten_kernels::ConstantBytes{held_.back().data(), held_.back().size()};
      }
      et::Result<const void*> data = program_->get_constant_buffer_data(c.buffer_index, c.nbytes);
      if (!data.ok()) {
        return fail(Error::EngineFormat, at,
                    "constant buffer " + std::to_string(c.buffer_index) + " of " + std::to_string(c.nbytes) +
                        " bytes is not in the engine's program");
      }
      return aten_kernels::ConstantBytes{data.get(), c.nbytes};
    };
    TRTX_ASSIGN_OR_RETURN(aten_, aten_kernels::load(engine_.program->data(), engine_.program->size(), kMethodName,
                                                    device_, resolve, engine_.version == kProgramVersion, at));
    return ok_status();
  }

  // Memory of its own, as Module would give it (extension/module/
  // module.cpp): one host buffer per planned arena, sized from MethodMeta;
  // malloc'd method and temp allocators.
  Status plan_memory(const et::MethodMeta& meta, const std::string& at) {
    for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
      auto device = meta.memory_planned_buffer_device(i);
      if (device.ok() && device->type() != et::etensor::DeviceType::CPU) {
        return fail(Error::EngineFormat, at,
                    "the engine's program plans arena " + std::to_string(i) + " in device memory; it runs on the host");
      }
      auto size = meta.memory_planned_buffer_size(i);
      if (!size.ok() || size.get() < 0) return load_failure(et::Error::InvalidProgram, at, "MethodMeta");
      planned_.emplace_back(static_cast<size_t>(size.get()), 0);
    }
    for (auto& b : planned_) spans_.emplace_back(b.data(), b.size());
    planned_memory_ =
        std::make_unique<et::HierarchicalAllocator>(et::Span<et::Span<uint8_t>>(spans_.data(), spans_.size()));
    memory_ = std::make_unique<et::MemoryManager>(&method_allocator_, planned_memory_.get(), &temp_allocator_);
    return ok_status();
  }

  // Loads forward. Version 3 hands ExecuTorch the engine's EXTERNAL
  // constants through ExternalWeights, so Method::parse_external_constants
  // (runtime/executor/method.cpp) reads each one once, by its key, from the
  // outer program's named data; the bytes stay the outer loader's (no copy
  // here).
  Status load_forward(const std::string& at) {
    const et::NamedDataMap* external = nullptr;
    if (engine_.version == kExternalWeightsVersion) {
      TRTX_ASSIGN_OR_RETURN(weights_, ExternalWeights::create(engine_.program->data(), engine_.program->size(),
                                                              kMethodName, named_data_, at));
      external = weights_.get();
    }
    et::Result<et::Method> method = program_->load_method(kMethodName, memory_.get(), nullptr, external);
    if (!method.ok()) {
      if (weights_ && weights_->refusal().has_value()) return *weights_->refusal();
      return load_failure(method.error(), at, std::string("loading method '") + kMethodName + "'");
    }
    method_ = std::make_unique<et::Method>(std::move(method.get()));
    return ok_status();
  }

  Status read_signature(const et::MethodMeta& meta, bool inputs, const std::string& at, std::vector<Io>& out) {
    const size_t n = inputs ? meta.num_inputs() : meta.num_outputs();
    out.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const std::string what = std::string(inputs ? "input " : "output ") + std::to_string(k);
      auto tag = inputs ? meta.input_tag(k) : meta.output_tag(k);
      auto info = inputs ? meta.input_tensor_meta(k) : meta.output_tensor_meta(k);
      if (!tag.ok() || tag.get() != et::Tag::Tensor || !info.ok()) {
        return fail(Error::EngineFormat, at,
                    "the engine's program's " + what + " is not a tensor; every binding is one");
      }
      Io& io = out[k];
      io.dtype = static_cast<ScalarType>(static_cast<int8_t>(info->scalar_type()));
      io.et_sizes.assign(info->sizes().begin(), info->sizes().end());
      io.sizes.assign(info->sizes().begin(), info->sizes().end());
      io.dim_order.assign(info->dim_order().begin(), info->dim_order().end());
      io.nbytes = info->nbytes();
      if (!inputs) continue;
      io.host.assign(io.nbytes, 0);
      io.impl = std::make_unique<TensorImpl>(info->scalar_type(), static_cast<ssize_t>(io.et_sizes.size()),
                                             io.et_sizes.data(), io.host.data(), io.dim_order.data());
    }
    return ok_status();
  }

  static Status check_one(const BindingView& v, const Io& io, const char* role, size_t k, const std::string& at) {
    if (v.dtype == io.dtype && v.sizes == io.sizes) return ok_status();
    return fail(Error::DelegateExecutionFailed, at,
                "binding '" + v.name + "' (" + role + " " + std::to_string(k) + " of the engine's program) is " +
                    shape_text(v.dtype, v.sizes) + "; the program's " + kMethodName + " expects " +
                    shape_text(io.dtype, io.sizes));
  }

  static Failure size_error(const BindingView& v, const Io& io, const std::string& at) {
    return fail(Error::DelegateExecutionFailed, at,
                "binding '" + v.name + "' holds " + std::to_string(v.nbytes) + " bytes; the program expects " +
                    std::to_string(io.nbytes));
  }

  // Declaration order is destruction order reversed: the method goes first,
  // then the memory it was planned in, the program, and its bytes last.
  StandinEngine engine_;
  runtime::DeviceContext device_;
  const et::NamedDataMap* named_data_;  // the outer program's (version 3); outlives the delegate
  bool use_aten_ = false;
  executorch::extension::BufferDataLoader loader_;
  std::unique_ptr<ExternalWeights> weights_;  // version 3: read while forward loads
  std::unique_ptr<et::Program> program_;
  std::vector<size_t> inputs_, outputs_;  // binding indices, in forward's order
  std::vector<Io> in_, out_;
  std::vector<std::vector<uint8_t>> planned_;
  std::vector<et::Span<uint8_t>> spans_;
  std::unique_ptr<et::HierarchicalAllocator> planned_memory_;
  executorch::extension::MallocMemoryAllocator method_allocator_;
  executorch::extension::MallocMemoryAllocator temp_allocator_;
  std::unique_ptr<et::MemoryManager> memory_;
  std::unique_ptr<et::Method> method_;
  std::vector<et::FreeableBuffer> held_;         // ATen: the named data entries its weights are read from
  std::unique_ptr<aten_kernels::Program> aten_;  // ATen's kernels instead of method_
  uint64_t budget_ = 0;
  runtime::CopyCounters stand_in_;  // the bindings read to the host and written back, every enqueue
};

}  // namespace

Result<std::unique_ptr<EngineExecutor>> make_program_executor(StandinEngine engine,
                                                              const runtime::DeviceContext& device,
                                                              const std::vector<bool>& binding_is_input,
                                                              const std::string& where,
                                                              const et::NamedDataMap* named_data, bool aten) {
  if ((engine.version != kProgramVersion && engine.version != kExternalWeightsVersion) || !engine.program) {
    return fail(Error::EngineFormat, where + ".engine", "not a version-2 or version-3 reference engine (no program)");
  }
  if (aten && !aten_kernels::built()) {
    return fail(Error::NotSupported, where + ".engine",
                "this trtx-runner was built without libtorch: ATen's kernels are not here");
  }
  auto ex = std::make_unique<ProgramExecutor>(std::move(engine), device, named_data, aten);
  TRTX_CHECK_OK(ex->init(binding_is_input, where));
  return std::unique_ptr<EngineExecutor>(std::move(ex));
}

}  // namespace trtx::engine
