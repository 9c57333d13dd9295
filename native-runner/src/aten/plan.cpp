// Reads a partition program's execution plan into ATen values (plan.h), the
// way ExecuTorch's Method::parse_values reads it (runtime/executor/
// method.cpp): one value per EValue, tensors described by scalar type, sizes
// and dim order, memory-planned tensors by (memory_id, offset), constants by
// data_buffer_idx or, EXTERNAL, by fully_qualified_name.
#include "plan.h"

#include "program_generated.h"

namespace trtx::aten_kernels {

namespace {

namespace fb = trtx_pte;

// Strides from a dim order: the last dimension in the order is the innermost
// (ExecuTorch's dim_order_to_stride, runtime/core/exec_aten/util/
// dim_order_util.h).
std::vector<int64_t> strides_of(const std::vector<int64_t>& sizes, const std::vector<uint8_t>& order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t running = 1;
  for (size_t k = order.size(); k-- > 0;) {
    const size_t d = order[k];
    strides[d] = running;
    running *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

Status read_tensor(Plan& plan, size_t v, const fb::Tensor* t, const std::string& at) {
  const std::string where = at + ".values[" + std::to_string(v) + "]";
  plan.is_tensor[v] = true;
  plan.dtype[v] = static_cast<at::ScalarType>(static_cast<int8_t>(t->scalar_type()));
  std::vector<int64_t> sizes;
  if (t->sizes()) sizes.assign(t->sizes()->begin(), t->sizes()->end());
  std::vector<uint8_t> order;
  if (t->dim_order()) order.assign(t->dim_order()->begin(), t->dim_order()->end());
  if (order.empty()) {
    for (size_t d = 0; d < sizes.size(); ++d) order.push_back(static_cast<uint8_t>(d));
  }
  if (order.size() != sizes.size()) {
    return fail(Error::EngineFormat, where, "a tensor's dim order and sizes differ in rank");
  }
  for (uint8_t d : order) {
    if (d >= sizes.size()) return fail(Error::EngineFormat, where, "a tensor's dim order names a missing dimension");
  }
  plan.strides[v] = strides_of(sizes, order);
  plan.sizes[v] = std::move(sizes);
  const auto* extra = t->extra_tensor_info();
  const bool external = extra != nullptr && extra->location() == fb::TensorDataLocation::EXTERNAL;
  const uint64_t nbytes = [&] {
    uint64_t n = c10::elementSize(plan.dtype[v]);
    for (int64_t s : plan.sizes[v]) n *= static_cast<uint64_t>(s);
    return n;
  }();
  if (t->allocation_info() != nullptr) {
    const auto* a = t->allocation_info();
    const uint64_t offset = (static_cast<uint64_t>(a->memory_offset_high()) << 32) | a->memory_offset_low();
    if (a->memory_id() == 0 || a->memory_id() >= plan.arena_bytes.size() ||
        offset + nbytes > plan.arena_bytes[a->memory_id()]) {
      return fail(Error::EngineFormat, where, "a planned tensor lies outside its arena");
    }
    plan.planned.push_back(PlannedTensor{v, a->memory_id(), offset});
  } else if (external || t->data_buffer_idx() > 0) {
    ConstantRef c;
    c.value_index = v;
    c.buffer_index = external ? 0 : t->data_buffer_idx();
    if (external) {
      if (extra->fully_qualified_name() == nullptr) {
        return fail(Error::EngineFormat, where, "an EXTERNAL constant has no fully_qualified_name");
      }
      c.key = extra->fully_qualified_name()->str();
    }
    c.nbytes = nbytes;
    plan.constants.push_back(std::move(c));
  }
  return ok_status();
}

template <typename V>
std::vector<int32_t> items_of(const V* list) {
  std::vector<int32_t> out;
  if (list != nullptr && list->items() != nullptr) {
    for (auto i : *list->items()) out.push_back(static_cast<int32_t>(i));
  }
  return out;
}

Status read_value(Plan& plan, size_t v, const fb::EValue* e, const std::string& at) {
  switch (e->val_type()) {
    case fb::KernelTypes::Null:
    case fb::KernelTypes::NONE:
      return ok_status();
    case fb::KernelTypes::Int:
      plan.values[v] = c10::IValue(static_cast<int64_t>(e->val_as_Int()->int_val()));
      return ok_status();
    case fb::KernelTypes::Bool:
      plan.values[v] = c10::IValue(e->val_as_Bool()->bool_val());
      return ok_status();
    case fb::KernelTypes::Double:
      plan.values[v] = c10::IValue(e->val_as_Double()->double_val());
      return ok_status();
    case fb::KernelTypes::String: {
      const auto* s = e->val_as_String()->string_val();
      plan.values[v] = c10::IValue(s != nullptr ? s->str() : std::string());
      return ok_status();
    }
    case fb::KernelTypes::Tensor:
      return read_tensor(plan, v, e->val_as_Tensor(), at);
    case fb::KernelTypes::IntList:
      plan.lists[v] = ListValue{ListValue::Kind::Int, items_of(e->val_as_IntList())};
      return ok_status();
    case fb::KernelTypes::TensorList:
      plan.lists[v] = ListValue{ListValue::Kind::Tensor, items_of(e->val_as_TensorList())};
      return ok_status();
    case fb::KernelTypes::OptionalTensorList:
      plan.lists[v] = ListValue{ListValue::Kind::OptionalTensor, items_of(e->val_as_OptionalTensorList())};
      return ok_status();
    case fb::KernelTypes::DoubleList: {
      c10::List<double> l;
      if (const auto* items = e->val_as_DoubleList()->items()) {
        for (double d : *items) l.push_back(d);
      }
      plan.values[v] = c10::IValue(l);
      return ok_status();
    }
    case fb::KernelTypes::BoolList: {
      c10::List<bool> l;
      if (const auto* items = e->val_as_BoolList()->items()) {
        for (bool b : *items) l.push_back(b);
      }
      plan.values[v] = c10::IValue(l);
      return ok_status();
    }
  }
  return fail(Error::EngineFormat, at + ".values[" + std::to_string(v) + "]", "a value of an unknown kind");
}

Status read_instruction(Plan& plan, const fb::Instruction* ins, size_t pc, const std::string& at) {
  Instruction out;
  const std::string where = at + ".instructions[" + std::to_string(pc) + "]";
  switch (ins->instr_args_type()) {
    case fb::InstructionArguments::KernelCall: {
      const auto* k = ins->instr_args_as_KernelCall();
      out.kind = Instruction::Kind::Kernel;
      out.op = k->op_index();
      if (k->args() != nullptr) out.args.assign(k->args()->begin(), k->args()->end());
      if (out.op < 0 || static_cast<size_t>(out.op) >= plan.ops.size()) {
        return fail(Error::EngineFormat, where, "a kernel call names an operator the plan lacks");
      }
      break;
    }
    case fb::InstructionArguments::MoveCall:
      out.kind = Instruction::Kind::Move;
      out.a = ins->instr_args_as_MoveCall()->move_from();
      out.b = ins->instr_args_as_MoveCall()->move_to();
      break;
    case fb::InstructionArguments::JumpFalseCall:
      out.kind = Instruction::Kind::JumpFalse;
      out.a = ins->instr_args_as_JumpFalseCall()->cond_value_index();
      out.b = ins->instr_args_as_JumpFalseCall()->destination_instruction();
      break;
    case fb::InstructionArguments::FreeCall:
      out.kind = Instruction::Kind::Free;
      break;
    default:
      return fail(Error::EngineFormat, where,
                  "the engine's program is itself delegated (a delegate call); it must run on kernels only");
  }
  const size_t n = plan.values.size();
  for (int32_t v : out.args) {
    if (v < 0 || static_cast<size_t>(v) >= n) return fail(Error::EngineFormat, where, "an argument outside the values");
  }
  if (out.kind == Instruction::Kind::Move &&
      (out.a < 0 || out.b < 0 || static_cast<size_t>(out.a) >= n || static_cast<size_t>(out.b) >= n)) {
    return fail(Error::EngineFormat, where, "a move outside the values");
  }
  if (out.kind == Instruction::Kind::JumpFalse && (out.a < 0 || static_cast<size_t>(out.a) >= n)) {
    return fail(Error::EngineFormat, where, "a jump on a value outside the values");
  }
  plan.instructions.push_back(std::move(out));
  return ok_status();
}

}  // namespace

Result<Plan> read_plan(const uint8_t* pte, size_t size, const std::string& method, const std::string& at) {
  flatbuffers::Verifier verifier(pte, size);
  if (!fb::VerifyProgramBuffer(verifier))
    return fail(Error::EngineFormat, at, "the engine's program fails verification");
  const fb::Program* program = fb::GetProgram(pte);
  const fb::ExecutionPlan* ep = nullptr;
  if (program->execution_plan() != nullptr) {
    for (const auto* p : *program->execution_plan()) {
      if (p->name() != nullptr && p->name()->str() == method) ep = p;
    }
  }
  if (ep == nullptr) return fail(Error::EngineFormat, at, "the engine's program has no method '" + method + "'");
  if (ep->delegates() != nullptr && ep->delegates()->size() != 0) {
    return fail(Error::EngineFormat, at, "the engine's program is itself delegated; it must run on kernels only");
  }
  if (ep->chains() == nullptr || ep->chains()->size() != 1) {
    return fail(Error::EngineFormat, at,
                "the engine's program's method has " + std::to_string(ep->chains() ? ep->chains()->size() : 0) +
                    " chains; the lowering emits one");
  }
  Plan plan;
  if (ep->non_const_buffer_sizes() != nullptr) {
    for (int64_t s : *ep->non_const_buffer_sizes())
      plan.arena_bytes.push_back(static_cast<uint64_t>(std::max<int64_t>(s, 0)));
  }
  if (plan.arena_bytes.empty()) plan.arena_bytes.push_back(0);
  const size_t n = ep->values() != nullptr ? ep->values()->size() : 0;
  plan.values.resize(n);
  plan.lists.resize(n);
  plan.dtype.resize(n, at::kFloat);
  plan.sizes.resize(n);
  plan.strides.resize(n);
  plan.is_tensor.resize(n, false);
  for (size_t v = 0; v < n; ++v) TRTX_CHECK_OK(read_value(plan, v, ep->values()->Get(v), at));
  if (ep->operators() != nullptr) {
    for (const auto* op : *ep->operators()) {
      Op o;
      o.name = (op->name() ? op->name()->str() : std::string()) +
               (op->overload() && op->overload()->size() ? "." + op->overload()->str() : std::string());
      plan.ops.push_back(std::move(o));
    }
  }
  const auto* chain = ep->chains()->Get(0);
  if (chain->instructions() != nullptr) {
    for (size_t pc = 0; pc < chain->instructions()->size(); ++pc) {
      TRTX_CHECK_OK(read_instruction(plan, chain->instructions()->Get(pc), pc, at));
    }
  }
  auto indices = [&](const flatbuffers::Vector<int32_t>* list, std::vector<int32_t>& out) -> Status {
    if (list == nullptr) return ok_status();
    for (int32_t v : *list) {
      if (v < 0 || static_cast<size_t>(v) >= n)
        return fail(Error::EngineFormat, at, "a method input or output outside the values");
      out.push_back(v);
    }
    return ok_status();
  };
  TRTX_CHECK_OK(indices(ep->inputs(), plan.inputs));
  TRTX_CHECK_OK(indices(ep->outputs(), plan.outputs));
  for (int32_t v : plan.inputs) {
    if (!plan.is_tensor[v]) return fail(Error::EngineFormat, at, "a method input is not a tensor");
  }
  for (int32_t v : plan.outputs) {
    if (!plan.is_tensor[v]) return fail(Error::EngineFormat, at, "a method output is not a tensor");
  }
  return plan;
}

at::Tensor tensor_over(const Plan& plan, size_t v, void* data, const at::Device& device) {
  const auto options = at::TensorOptions().dtype(plan.dtype[v]).device(device);
  int64_t numel = 1;
  for (int64_t s : plan.sizes[v]) numel *= s;
  if (numel == 0 || data == nullptr) return at::empty_strided(plan.sizes[v], plan.strides[v], options);
  return at::from_blob(data, plan.sizes[v], plan.strides[v], options);
}

}  // namespace trtx::aten_kernels
