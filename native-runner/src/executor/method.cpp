#include "trtx/executor/method.h"

#include <cstring>
#include <set>

namespace trtx::executor {

namespace fb = executorch_flatbuffer;
using runtime::Placement;

namespace {
constexpr uint64_t kMaxElements = uint64_t(1) << 48;

std::string device_text(Placement p, int index) {
  return p == Placement::Device ? "cuda:" + std::to_string(index) : std::string("the host");
}
}  // namespace

Result<std::unique_ptr<Method>> Method::load(const program::Program& program, const std::string& name,
                                             const MethodOptions& options) {
  TRTX_ASSIGN_OR_RETURN(const fb::ExecutionPlan* plan, program.plan(name));
  std::unique_ptr<Method> m(new Method());
  m->name_ = name;
  m->options_ = options;
  m->plan_ = plan;
  runtime::StreamRef load_stream = options.has_caller_stream ? options.caller_stream : runtime::StreamRef{};
  TRTX_CHECK_OK(options.device->activate());
  TRTX_ASSIGN_OR_RETURN(m->memory_, MemoryManager::create(plan, *options.device, load_stream, name));
  // The arenas are zeroed stream-ordered; initial state is copied after that.
  TRTX_CHECK_OK(options.device->synchronize(load_stream));
  TRTX_CHECK_OK(m->build_values(program));
  TRTX_CHECK_OK(m->build_instructions());
  TRTX_CHECK_OK(options.device->synchronize(load_stream));
  TRTX_CHECK_OK(m->init_delegates(program));
  return m;
}

Status Method::build_values(const program::Program& program) {
  const auto* values = plan_->values();
  size_t n = values == nullptr ? 0 : values->size();
  values_.resize(n);
  std::set<std::string> buffer_names;
  for (size_t i = 0; i < n; ++i) {
    const fb::EValue* ev = values->Get(static_cast<flatbuffers::uoffset_t>(i));
    std::string where = name_ + ".values[" + std::to_string(i) + "]";
    EValue& v = values_[i];
    // A union's type byte can be set while its table is absent; the
    // verifier accepts that, so every member access below is guarded here.
    if (ev->val_type() != fb::KernelTypes::NONE && ev->val() == nullptr) {
      return fail(Error::InvalidProgram, where, "value has a type but no contents");
    }
    switch (ev->val_type()) {
      case fb::KernelTypes::Null:
        v.tag = Tag::None;
        break;
      case fb::KernelTypes::Int:
        v.tag = Tag::Int;
        v.int_value = ev->val_as_Int()->int_val();
        break;
      case fb::KernelTypes::Bool:
        v.tag = Tag::Bool;
        v.bool_value = ev->val_as_Bool()->bool_val();
        break;
      case fb::KernelTypes::Double:
        v.tag = Tag::Double;
        v.double_value = ev->val_as_Double()->double_val();
        break;
      case fb::KernelTypes::String:
        v.tag = Tag::String;
        if (ev->val_as_String()->string_val() != nullptr) v.string_value = ev->val_as_String()->string_val()->str();
        break;
      case fb::KernelTypes::IntList: {
        v.tag = Tag::IntList;
        const auto* items = ev->val_as_IntList()->items();
        // ExecuTorch boxes int lists: each item is the index of an Int value.
        if (items != nullptr) {
          for (int64_t idx : *items) {
            if (idx < 0 || static_cast<uint64_t>(idx) >= n) {
              return fail(Error::IndexOutOfRange, where + ".items",
                          "value index " + std::to_string(idx) + " but the plan has " + std::to_string(n) + " values");
            }
            v.ints.push_back(idx);
          }
        }
        break;
      }
      case fb::KernelTypes::DoubleList:
        v.tag = Tag::DoubleList;
        if (const auto* items = ev->val_as_DoubleList()->items()) v.doubles.assign(items->begin(), items->end());
        break;
      case fb::KernelTypes::BoolList:
        v.tag = Tag::BoolList;
        if (const auto* items = ev->val_as_BoolList()->items()) v.bools.assign(items->begin(), items->end());
        break;
      case fb::KernelTypes::TensorList:
      case fb::KernelTypes::OptionalTensorList: {
        bool optional = ev->val_type() == fb::KernelTypes::OptionalTensorList;
        v.tag = optional ? Tag::OptionalTensorList : Tag::TensorList;
        const auto* items = optional ? ev->val_as_OptionalTensorList()->items() : ev->val_as_TensorList()->items();
        if (items != nullptr) {
          for (int32_t idx : *items) {
            if (idx < 0 || static_cast<size_t>(idx) >= n) {
              return fail(Error::IndexOutOfRange, where + ".items",
                          "value index " + std::to_string(idx) + " but the plan has " + std::to_string(n) + " values");
            }
            v.items.push_back(idx);
          }
        }
        break;
      }
      case fb::KernelTypes::Tensor: {
        const fb::Tensor* st = ev->val_as_Tensor();
        auto t = std::make_unique<TensorImpl>();
        t->value_index = static_cast<int>(i);
        size_t elem = element_size(static_cast<int8_t>(st->scalar_type()));
        if (elem == 0) {
          return fail(Error::InvalidProgram, where + ".scalar_type",
                      "unknown scalar type " + std::to_string(static_cast<int>(st->scalar_type())));
        }
        t->dtype = static_cast<ScalarType>(st->scalar_type());
        uint64_t numel = 1;
        if (st->sizes() != nullptr) {
          for (int32_t s : *st->sizes()) {
            if (s < 0) return fail(Error::InvalidProgram, where + ".sizes", "negative extent " + std::to_string(s));
            t->sizes.push_back(s);
            if (s != 0 && numel > kMaxElements / static_cast<uint64_t>(s)) {
              return fail(Error::InvalidProgram, where + ".sizes", "tensor has more than 2^48 elements");
            }
            numel *= static_cast<uint64_t>(s);
          }
        }
        t->numel = numel;
        t->nbytes = numel * elem;
        if (st->dim_order() != nullptr && st->dim_order()->size() != t->sizes.size()) {
          return fail(Error::InvalidProgram, where + ".dim_order",
                      "dim_order has " + std::to_string(st->dim_order()->size()) + " entries for a rank-" +
                          std::to_string(t->sizes.size()) + " tensor");
        }
        if (st->storage_offset() != 0) {
          return fail(Error::NotSupported, where + ".storage_offset", "a non-zero storage offset is not supported");
        }
        Placement declared = Placement::Host;
        int declared_index = 0;
        if (const auto* extra = st->extra_tensor_info()) {
          if (extra->location() == fb::TensorDataLocation::EXTERNAL) {
            return fail(Error::NotSupported, where + ".extra_tensor_info.location",
                        "tensor data held outside the program (EXTERNAL) is not supported");
          }
          if (extra->device_type() == fb::DeviceType::CUDA) {
            declared = Placement::Device;
          } else if (extra->device_type() != fb::DeviceType::CPU) {
            return fail(Error::InvalidProgram, where + ".extra_tensor_info.device_type",
                        "unknown device type " + std::to_string(static_cast<int>(extra->device_type())));
          }
          declared_index = extra->device_index();
          if (extra->fully_qualified_name() != nullptr) t->fqn = extra->fully_qualified_name()->str();
        }
        const auto* alloc = st->allocation_info();
        uint32_t dbi = st->data_buffer_idx();
        if (alloc != nullptr) {
          uint64_t offset = uint64_t(alloc->memory_offset_low()) | (uint64_t(alloc->memory_offset_high()) << 32);
          TRTX_ASSIGN_OR_RETURN(t->data, memory_->address(alloc->memory_id(), offset, t->nbytes, where));
          const Arena& arena = memory_->arena(alloc->memory_id());
          t->placement = arena.placement;
          t->device_index = arena.device_index;
          t->arena = static_cast<int>(alloc->memory_id());
          t->arena_offset = offset;
          // The arena decides where the bytes are; a tensor that says
          // otherwise is a host-planned program (or its reverse).
          if (declared != arena.placement || (declared == Placement::Device && declared_index != arena.device_index)) {
            return fail(Error::InvalidProgram, where + ".extra_tensor_info.device_type",
                        "tensor declares " + device_text(declared, declared_index) + " but is planned in arena " +
                            std::to_string(alloc->memory_id()) + " on " + device_text(arena.placement, arena.device_index));
          }
          if (dbi > 0) {
            if (t->placement == Placement::Host) {
              TRTX_CHECK_OK(program.load_mutable_data(dbi, t->nbytes, t->data, where));
            } else {
              std::vector<uint8_t> tmp(static_cast<size_t>(t->nbytes));
              TRTX_CHECK_OK(program.load_mutable_data(dbi, t->nbytes, tmp.data(), where));
              TRTX_CHECK_OK(options_.device->copy(t->data, Placement::Device, tmp.data(), Placement::Host, tmp.size(),
                                                  runtime::StreamRef{}, nullptr));
            }
          }
          if (!t->fqn.empty() && buffer_names.insert(t->fqn).second) named_buffers_.push_back(NamedBuffer{t->fqn, t.get()});
        } else if (dbi > 0) {
          if (declared != Placement::Host) {
            return fail(Error::InvalidProgram, where + ".extra_tensor_info.device_type",
                        "constant tensor declares " + device_text(declared, declared_index) +
                            "; constants are program data in host memory");
          }
          TRTX_ASSIGN_OR_RETURN(const uint8_t* data, program.constant_data(dbi, t->nbytes, where));
          t->data = const_cast<uint8_t*>(data);
          t->constant = true;
        } else if (declared != Placement::Host) {
          return fail(Error::InvalidProgram, where + ".allocation_info",
                      "tensor declares " + device_text(declared, declared_index) + " but has no planned memory");
        }
        v.tag = Tag::Tensor;
        v.tensor = t.get();
        tensors_.push_back(std::move(t));
        break;
      }
      default:
        return fail(Error::InvalidProgram, where, "value has no type (or one this runner does not know)");
    }
  }
  // A tensor list must name tensors (an optional one may name nulls).
  for (size_t i = 0; i < n; ++i) {
    const EValue& v = values_[i];
    if (v.tag != Tag::TensorList && v.tag != Tag::OptionalTensorList) continue;
    for (int32_t idx : v.items) {
      Tag t = values_[static_cast<size_t>(idx)].tag;
      if (t != Tag::Tensor && !(v.tag == Tag::OptionalTensorList && t == Tag::None)) {
        return fail(Error::InvalidType, name_ + ".values[" + std::to_string(i) + "].items",
                    "item names value " + std::to_string(idx) + ", a " + tag_name(t) + ", not a Tensor");
      }
    }
  }
  auto check_list = [&](const flatbuffers::Vector<int32_t>* list, const char* field,
                        std::vector<int32_t>& out) -> Status {
    if (list == nullptr) return ok_status();
    for (flatbuffers::uoffset_t k = 0; k < list->size(); ++k) {
      int32_t idx = list->Get(k);
      if (idx < 0 || static_cast<size_t>(idx) >= n) {
        return fail(Error::IndexOutOfRange, name_ + "." + field + "[" + std::to_string(k) + "]",
                    "value index " + std::to_string(idx) + " but the plan has " + std::to_string(n) + " values");
      }
      out.push_back(idx);
    }
    return ok_status();
  };
  TRTX_CHECK_OK(check_list(plan_->inputs(), "inputs", inputs_));
  TRTX_CHECK_OK(check_list(plan_->outputs(), "outputs", outputs_));
  return ok_status();
}

Status Method::build_instructions() {
  const auto* chains = plan_->chains();
  if (chains == nullptr || chains->size() == 0) {
    return fail(Error::InvalidProgram, name_ + ".chains", "the plan has no chain to execute");
  }
  const fb::Chain* chain = chains->Get(0);
  const auto* instrs = chain->instructions();
  size_t n_instr = instrs == nullptr ? 0 : instrs->size();
  size_t n_values = values_.size();
  const auto* ops = plan_->operators();
  size_t n_ops = ops == nullptr ? 0 : ops->size();
  size_t n_delegates = plan_->delegates() == nullptr ? 0 : plan_->delegates()->size();

  auto value_ptr = [&](int32_t idx, const std::string& at) -> Result<EValue*> {
    if (idx < 0 || static_cast<size_t>(idx) >= n_values) {
      return fail(Error::IndexOutOfRange, at,
                  "value index " + std::to_string(idx) + " but the plan has " + std::to_string(n_values) + " values");
    }
    return &values_[static_cast<size_t>(idx)];
  };
  auto args_of = [&](const flatbuffers::Vector<int32_t>* args, const std::string& at,
                     std::vector<EValue*>& out) -> Status {
    if (args == nullptr) return ok_status();
    for (flatbuffers::uoffset_t k = 0; k < args->size(); ++k) {
      TRTX_ASSIGN_OR_RETURN(EValue * v, value_ptr(args->Get(k), at + ".args[" + std::to_string(k) + "]"));
      out.push_back(v);
    }
    return ok_status();
  };

  std::vector<std::string> missing;
  std::string first_missing_at;
  for (size_t pc = 0; pc < n_instr; ++pc) {
    const fb::Instruction* ins = instrs->Get(static_cast<flatbuffers::uoffset_t>(pc));
    std::string at = name_ + ".chains[0].instructions[" + std::to_string(pc) + "]";
    Instruction out;
    if (ins->instr_args() == nullptr) {
      return fail(Error::InvalidProgram, at, "instruction has no arguments");
    }
    switch (ins->instr_args_type()) {
      case fb::InstructionArguments::KernelCall: {
        const auto* k = ins->instr_args_as_KernelCall();
        if (k->op_index() < 0 || static_cast<size_t>(k->op_index()) >= n_ops) {
          return fail(Error::IndexOutOfRange, at + ".op_index",
                      "operator index " + std::to_string(k->op_index()) + " but the plan has " + std::to_string(n_ops) +
                          " operators");
        }
        const fb::Operator* op = ops->Get(static_cast<flatbuffers::uoffset_t>(k->op_index()));
        if (op->name() == nullptr) return fail(Error::InvalidProgram, at, "operator has no name");
        out.kind = Instruction::Kind::Kernel;
        out.op = op->name()->str();
        if (op->overload() != nullptr && op->overload()->size() > 0) out.op += "." + op->overload()->str();
        out.kernel = find_kernel(out.op);
        if (out.kernel == nullptr) {
          bool seen = false;
          for (const auto& m : missing) seen = seen || m == out.op;
          if (!seen) missing.push_back(out.op);
          if (first_missing_at.empty()) first_missing_at = at;
        }
        TRTX_CHECK_OK(args_of(k->args(), at, out.args));
        break;
      }
      case fb::InstructionArguments::DelegateCall: {
        const auto* d = ins->instr_args_as_DelegateCall();
        if (d->delegate_index() < 0 || static_cast<size_t>(d->delegate_index()) >= n_delegates) {
          return fail(Error::IndexOutOfRange, at + ".delegate_index",
                      "delegate index " + std::to_string(d->delegate_index()) + " but the plan has " +
                          std::to_string(n_delegates) + " delegates");
        }
        out.kind = Instruction::Kind::Delegate;
        out.delegate = static_cast<size_t>(d->delegate_index());
        TRTX_CHECK_OK(args_of(d->args(), at, out.args));
        break;
      }
      case fb::InstructionArguments::MoveCall: {
        const auto* mv = ins->instr_args_as_MoveCall();
        out.kind = Instruction::Kind::Move;
        out.a = mv->move_from();
        out.b = mv->move_to();
        TRTX_CHECK_OK(value_ptr(out.a, at + ".move_from"));
        TRTX_CHECK_OK(value_ptr(out.b, at + ".move_to"));
        break;
      }
      case fb::InstructionArguments::JumpFalseCall: {
        const auto* jf = ins->instr_args_as_JumpFalseCall();
        out.kind = Instruction::Kind::JumpFalse;
        out.a = jf->cond_value_index();
        out.b = jf->destination_instruction();
        TRTX_CHECK_OK(value_ptr(out.a, at + ".cond_value_index"));
        if (out.b < 0 || static_cast<size_t>(out.b) > n_instr) {
          return fail(Error::IndexOutOfRange, at + ".destination_instruction",
                      "destination " + std::to_string(out.b) + " but the chain has " + std::to_string(n_instr) +
                          " instructions");
        }
        break;
      }
      case fb::InstructionArguments::FreeCall: {
        out.kind = Instruction::Kind::Free;
        out.a = ins->instr_args_as_FreeCall()->value_index();
        TRTX_CHECK_OK(value_ptr(out.a, at + ".value_index"));
        break;
      }
      default:
        return fail(Error::InvalidProgram, at, "instruction has no arguments (or a kind this runner does not know)");
    }
    instructions_.push_back(std::move(out));
  }
  if (!missing.empty()) {
    std::string others;
    for (size_t i = 1; i < missing.size(); ++i) others += (i > 1 ? ", " : "") + missing[i];
    std::string known;
    for (const auto& k : kernel_names()) known += (known.empty() ? "" : ", ") + k;
    return fail(Error::OperatorMissing, first_missing_at,
                "unknown operator " + missing[0] +
                    (others.empty() ? std::string() : " (also without a kernel: " + others + ")") +
                    "; this runner has kernels for " + known);
  }
  return ok_status();
}

Status Method::init_delegates(const program::Program& program) {
  const auto* delegates = plan_->delegates();
  if (delegates == nullptr) return ok_status();
  for (flatbuffers::uoffset_t i = 0; i < delegates->size(); ++i) {
    const fb::BackendDelegate* d = delegates->Get(i);
    std::string where = name_ + ".delegates[" + std::to_string(i) + "]";
    if (d->id() == nullptr) return fail(Error::InvalidProgram, where + ".id", "delegate has no backend id");
    const backend::BackendInterface* b = backend::get_backend_class(d->id()->str());
    if (b == nullptr || !b->is_available()) {
      std::string known;
      for (const auto& id : backend::registered_backends()) known += (known.empty() ? "" : ", ") + id;
      return fail(Error::DelegateInvalidCompatibility, where + ".id",
                  "backend '" + d->id()->str() + "' is not available in this runner (it has: " + known + ")");
    }
    TRTX_ASSIGN_OR_RETURN(program::BlobSource blob, program.delegate_data(d->processed(), where));
    std::vector<backend::CompileSpecView> specs;
    if (d->compile_specs() != nullptr) {
      for (flatbuffers::uoffset_t k = 0; k < d->compile_specs()->size(); ++k) {
        const fb::CompileSpec* cs = d->compile_specs()->Get(k);
        if (cs->key() == nullptr) {
          return fail(Error::InvalidProgram, where + ".compile_specs[" + std::to_string(k) + "]", "compile spec has no key");
        }
        backend::CompileSpecView v;
        v.key = cs->key()->str();
        if (cs->value() != nullptr) {
          v.value = std::string_view(reinterpret_cast<const char*>(cs->value()->data()), cs->value()->size());
        }
        specs.push_back(std::move(v));
      }
    }
    backend::BackendInitContext ctx;
    ctx.device = options_.device;
    ctx.load_stream = options_.has_caller_stream ? options_.caller_stream : runtime::StreamRef{};
    ctx.budget_option = options_.budget_option;
    ctx.scratch_factory = options_.scratch_factory;
    ctx.where = where;
    TRTX_ASSIGN_OR_RETURN(auto handle, b->init(ctx, blob, specs));
    delegates_.push_back(Delegate{b, std::move(handle)});
  }
  return ok_status();
}

Status Method::execute(runtime::CopyCounters* counters) {
  if (closed_) return fail(Error::InvalidState, name_, "method is closed");
  TRTX_CHECK_OK(options_.device->activate());
  size_t pc = 0;
  size_t executed = 0;
  const size_t n = instructions_.size();
  while (pc < n) {
    if (++executed > kMaxInstructions) {
      return fail(Error::InvalidProgram, name_ + ".chains[0]",
                  "execution ran more than " + std::to_string(kMaxInstructions) + " instructions (a jump loop?)");
    }
    Instruction& ins = instructions_[pc];
    std::string at = name_ + ".chains[0].instructions[" + std::to_string(pc) + "]";
    size_t next = pc + 1;
    switch (ins.kind) {
      case Instruction::Kind::Kernel: {
        KernelContext ctx;
        ctx.device = options_.device;
        ctx.stream = options_.has_caller_stream ? options_.caller_stream : runtime::StreamRef{};
        ctx.counters = counters;
        ctx.where = at + " (" + ins.op + ")";
        TRTX_CHECK_OK(ins.kernel(ctx, ins.args));
        break;
      }
      case Instruction::Kind::Delegate: {
        backend::BackendExecutionContext ctx;
        ctx.device = options_.device;
        ctx.has_caller_stream = options_.has_caller_stream;
        ctx.caller_stream = options_.caller_stream;
        ctx.counters = counters;
        ctx.where = at + " (delegate " + std::to_string(ins.delegate) + ")";
        Delegate& d = delegates_[ins.delegate];
        TRTX_CHECK_OK(d.backend->execute(ctx, d.handle.get(), ins.args));
        break;
      }
      case Instruction::Kind::Move:
        values_[static_cast<size_t>(ins.b)] = values_[static_cast<size_t>(ins.a)];
        break;
      case Instruction::Kind::JumpFalse: {
        const EValue& cond = values_[static_cast<size_t>(ins.a)];
        bool value;
        if (cond.tag == Tag::Bool) {
          value = cond.bool_value;
        } else if (cond.is_tensor() && cond.tensor->dtype == ScalarType::Bool &&
                   cond.tensor->placement == Placement::Host) {
          value = true;
          const auto* bytes = static_cast<const uint8_t*>(cond.tensor->data);
          for (uint64_t k = 0; k < cond.tensor->numel; ++k) value = value && bytes[k] != 0;
        } else {
          return fail(Error::InvalidProgram, at, std::string("jump condition is a ") + tag_name(cond.tag) +
                                                     ", not a Bool or a host bool tensor");
        }
        if (!value) next = static_cast<size_t>(ins.b);
        break;
      }
      case Instruction::Kind::Free:
        if (!values_[static_cast<size_t>(ins.a)].is_tensor()) {
          return fail(Error::InvalidType, at, "FreeCall target is not a Tensor");
        }
        break;
    }
    pc = next;
  }
  return ok_status();
}

Status Method::check_deferred() {
  for (auto& d : delegates_) {
    if (d.handle) TRTX_CHECK_OK(d.backend->check_deferred(d.handle.get()));
  }
  return ok_status();
}

Status Method::close() {
  if (closed_) return ok_status();
  closed_ = true;
  Status first;
  for (auto& d : delegates_) {
    if (!d.handle) continue;
    Status s = d.backend->drain(d.handle.get());
    if (!s.ok() && first.ok()) first = s;
  }
  final_infos_ = delegate_infos();
  for (auto& d : delegates_) {
    if (d.handle) d.backend->destroy(std::move(d.handle));
  }
  return first;
}

Method::~Method() {
  (void)close();
  for (void* p : provided_) runtime::DeviceContext::release_host(p);
}

std::vector<backend::DelegateInfo> Method::delegate_infos() const {
  if (closed_ && !final_infos_.empty()) return final_infos_;
  std::vector<backend::DelegateInfo> out;
  for (const auto& d : delegates_) {
    if (d.handle) out.push_back(d.backend->describe(d.handle.get()));
  }
  return out;
}

Status Method::provide_input_memory(size_t i) {
  EValue& v = input(i);
  if (!v.is_tensor() || v.tensor->data != nullptr || v.tensor->nbytes == 0) return ok_status();
  TRTX_ASSIGN_OR_RETURN(void* p, runtime::DeviceContext::allocate_host(static_cast<size_t>(v.tensor->nbytes)));
  provided_.push_back(p);
  v.tensor->data = p;
  return ok_status();
}

Status Method::read_tensor(const TensorImpl& t, std::vector<uint8_t>& out) const {
  out.assign(static_cast<size_t>(t.nbytes), 0);
  if (t.nbytes == 0) return ok_status();
  runtime::StreamRef s = options_.has_caller_stream ? options_.caller_stream : runtime::StreamRef{};
  TRTX_CHECK_OK(options_.device->copy(out.data(), Placement::Host, t.data, t.placement, out.size(), s, nullptr));
  return options_.device->synchronize(s);
}

Status Method::write_tensor(TensorImpl& t, const std::vector<uint8_t>& bytes) const {
  if (bytes.size() != t.nbytes) return fail(Error::InvalidArgument, name_, "input byte count mismatch");
  if (t.nbytes == 0) return ok_status();
  runtime::StreamRef s = options_.has_caller_stream ? options_.caller_stream : runtime::StreamRef{};
  TRTX_CHECK_OK(options_.device->copy(t.data, t.placement, bytes.data(), Placement::Host, bytes.size(), s, nullptr));
  return options_.device->synchronize(s);
}

}  // namespace trtx::executor
