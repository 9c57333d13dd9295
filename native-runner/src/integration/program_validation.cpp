#include "program_validation.h"

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

#include "load_limits.h"
#include "program_generated.h"

namespace trtx::integration {

namespace fb = trtx_pte;
using flatbuffers::uoffset_t;

namespace {

// runtime/executor/method.cpp resolve_operator: the name and overload are
// formatted into a buffer of this many bytes, and a name that does not fit
// is refused (into the delayed_error a later call overwrites).
constexpr size_t kOperatorNameBuffer = 100;
// The verifier's limits ExecuTorch's Program::load uses (flatbuffers'
// defaults: program.cpp constructs flatbuffers::Verifier(data, size)).
constexpr uoffset_t kVerifierDepth = 64;
constexpr uoffset_t kVerifierTables = 1000000;

Failure refused(const std::string& location, const std::string& message, const char* check_code) {
  return fail(Error::InvalidProgram, location,
              message + "; the runner refuses it before ExecuTorch reads the program (trtx check: " + check_code + ")");
}

const char* kind_name(fb::KernelTypes t) {
  const char* name = fb::EnumNameKernelTypes(t);
  return name[0] == '\0' ? "unknown" : name;
}

// One method's values, with the index and kind checks every reader shares.
class PlanValidator {
 public:
  PlanValidator(const fb::Program& program, const fb::ExecutionPlan& plan, std::string label)
      : program_(program), plan_(plan), m_(std::move(label)) {}

  Status run() {
    TRTX_CHECK_OK(present());
    n_ = plan_.values()->size();
    for (uoffset_t k = 0; k < plan_.inputs()->size(); ++k) {
      TRTX_CHECK_OK(index(plan_.inputs()->Get(k), m_ + " > inputs[" + std::to_string(k) + "]", "plan input"));
    }
    for (uoffset_t k = 0; k < plan_.outputs()->size(); ++k) {
      TRTX_CHECK_OK(index(plan_.outputs()->Get(k), m_ + " > outputs[" + std::to_string(k) + "]", "plan output"));
    }
    for (uoffset_t i = 0; i < n_; ++i) TRTX_CHECK_OK(value(i));
    TRTX_CHECK_OK(operators());
    TRTX_CHECK_OK(delegates());
    if (plan_.chains() != nullptr) {
      for (uoffset_t c = 0; c < plan_.chains()->size(); ++c) TRTX_CHECK_OK(chain(c));
    }
    if (plan_.non_const_buffer_sizes() != nullptr) {
      for (uoffset_t k = 0; k < plan_.non_const_buffer_sizes()->size(); ++k) {
        const int64_t size = plan_.non_const_buffer_sizes()->Get(k);
        if (size < 0) {
          return refused(m_ + " > non_const_buffer_sizes[" + std::to_string(k) + "]",
                         "arena " + std::to_string(k) + " has size " + std::to_string(size), "STRUCT_ARENA_SIZE");
        }
      }
    }
    return ok_status();
  }

 private:
  // What MethodMeta and Method read without a null check (method_meta.cpp
  // name(), num_inputs(), num_outputs(); method.cpp parse_values).
  Status present() const {
    const char* missing = plan_.values() == nullptr    ? "values"
                          : plan_.inputs() == nullptr  ? "inputs"
                          : plan_.outputs() == nullptr ? "outputs"
                                                       : nullptr;
    if (missing == nullptr) return ok_status();
    return refused(m_,
                   std::string("the method has no ") + missing +
                       " vector, which ExecuTorch reads without a null check (method_meta.cpp)",
                   "STRUCT_MEMBER_MISSING");
  }

  Status index(int64_t v, const std::string& at, const char* what) const {
    if (v >= 0 && static_cast<uint64_t>(v) < n_) return ok_status();
    return refused(at,
                   std::string(what) + " " + std::to_string(v) + " is outside values[0.." +
                       std::to_string(static_cast<int64_t>(n_) - 1) + "] (" + std::to_string(n_) + " values)",
                   "STRUCT_VALUE_INDEX");
  }

  fb::KernelTypes kind_of(int64_t v) const { return plan_.values()->Get(static_cast<uoffset_t>(v))->val_type(); }

  // A list's items are indices into the values, each read as one kind
  // (method.cpp parse_values; tensor_parser.h parseListOptionalType, where
  // -1 is None): `item` is that kind, NONE for the range alone.
  template <typename Items>
  Status list_items(const Items* items, const std::string& at, fb::KernelTypes list, fb::KernelTypes item,
                    bool optional) const {
    if (items == nullptr) {
      return refused(at, std::string(kind_name(list)) + " has no items vector", "STRUCT_MEMBER_MISSING");
    }
    for (uoffset_t k = 0; k < items->size(); ++k) {
      const int64_t v = items->Get(k);
      if (optional && v == -1) continue;
      const std::string where = at + " > items[" + std::to_string(k) + "]";
      TRTX_CHECK_OK(index(v, where, (std::string(kind_name(list)) + " item").c_str()));
      const fb::KernelTypes got = kind_of(v);
      if (item != fb::KernelTypes::NONE && got != item && !(optional && got == fb::KernelTypes::Null)) {
        return refused(where,
                       std::string(kind_name(list)) + " item " + std::to_string(v) + " is a " + kind_name(got) +
                           " value, not a " + kind_name(item),
                       "STRUCT_LIST_ITEM_TYPE");
      }
    }
    return ok_status();
  }

  // runtime/executor/program_validation.cpp validate_tensor, which only
  // InternalConsistency runs.
  Status tensor(const fb::Tensor* t, const std::string& at) const {
    if (t->sizes() == nullptr) return refused(at, "the tensor has no sizes", "STRUCT_MEMBER_MISSING");
    const auto type = static_cast<executorch::aten::ScalarType>(t->scalar_type());
    if (!executorch::runtime::isValid(type)) {
      return refused(
          at, "scalar type " + std::to_string(static_cast<int>(t->scalar_type())) + " is not one the runtime knows",
          "STRUCT_SCALAR_TYPE");
    }
    uint64_t bytes = executorch::runtime::elementSize(type);
    for (uoffset_t d = 0; d < t->sizes()->size(); ++d) {
      const int32_t s = t->sizes()->Get(d);
      const std::string where = at + " > sizes[" + std::to_string(d) + "]";
      if (s < 0) return refused(where, "size " + std::to_string(s) + " is negative", "STRUCT_TENSOR_SIZE");
      if (s != 0 && bytes > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(s)) {
        return refused(where, "the tensor's byte size overflows the runtime's size arithmetic", "STRUCT_TENSOR_SIZE");
      }
      bytes *= static_cast<uint64_t>(s);
    }
    return ok_status();
  }

  Status value(uoffset_t i) const {
    const fb::EValue* v = plan_.values()->Get(i);
    const std::string at = m_ + " > value " + std::to_string(i);
    const fb::KernelTypes k = v->val_type();
    if (k == fb::KernelTypes::Null) return ok_status();
    // method.cpp parse_values: a member must be there (and known: the
    // verifier refuses an unknown union type).
    if (k == fb::KernelTypes::NONE || v->val() == nullptr) {
      return refused(at, "value " + std::to_string(i) + " has no member (an EValue union with none)",
                     "STRUCT_UNION_NONE");
    }
    switch (k) {
      case fb::KernelTypes::Tensor:
        return tensor(v->val_as_Tensor(), at);
      case fb::KernelTypes::IntList:
        // Range only: ExecuTorch checks it too (at method load), and an item
        // of another kind is its ET_CHECK when a kernel unboxes the list, a
        // reported abort (trtx check reads IntList items as numbers).
        return list_items(v->val_as_IntList()->items(), at, k, fb::KernelTypes::NONE, false);
      case fb::KernelTypes::TensorList:
        return list_items(v->val_as_TensorList()->items(), at, k, fb::KernelTypes::Tensor, false);
      case fb::KernelTypes::OptionalTensorList:
        return list_items(v->val_as_OptionalTensorList()->items(), at, k, fb::KernelTypes::Tensor, true);
      case fb::KernelTypes::DoubleList:
        if (v->val_as_DoubleList()->items() == nullptr) break;
        return ok_status();
      case fb::KernelTypes::BoolList:
        if (v->val_as_BoolList()->items() == nullptr) break;
        return ok_status();
      case fb::KernelTypes::String:
        if (v->val_as_String()->string_val() == nullptr) break;
        return ok_status();
      default:
        return ok_status();
    }
    return refused(at, std::string(kind_name(k)) + " has no data vector", "STRUCT_MEMBER_MISSING");
  }

  Status operators() const {
    if (plan_.operators() == nullptr) return ok_status();  // op_index is checked against 0 operators
    for (uoffset_t k = 0; k < plan_.operators()->size(); ++k) {
      const fb::Operator* op = plan_.operators()->Get(k);
      const std::string at = m_ + " > operators[" + std::to_string(k) + "]";
      if (op->name() == nullptr) return refused(at, "the operator has no name", "STRUCT_OPERATOR_NAME");
      const size_t overload = op->overload() == nullptr ? 0 : op->overload()->size();
      const size_t length = op->name()->size() + (overload > 0 ? 1 + overload : 0);
      if (length >= kOperatorNameBuffer) {
        return refused(at,
                       "the operator name is " + std::to_string(length) +
                           " bytes; the runtime resolves names of at most " + std::to_string(kOperatorNameBuffer - 1) +
                           " and loads the method without a kernel for the call when a later call resolves (method.cpp "
                           "delayed_error), so execute would call a null function",
                       "STRUCT_OPERATOR_NAME");
      }
    }
    return ok_status();
  }

  // method.cpp BackendDelegate::Init and GetProcessedData: the id and the
  // processed reference are read without a null check.
  Status delegates() const {
    if (plan_.delegates() == nullptr) return ok_status();  // Method::init refuses it ("Missing delegates field")
    for (uoffset_t k = 0; k < plan_.delegates()->size(); ++k) {
      const fb::BackendDelegate* d = plan_.delegates()->Get(k);
      const std::string at = m_ + " > delegates[" + std::to_string(k) + "]";
      if (d->id() == nullptr) return refused(at, "the delegate has no backend id", "STRUCT_DELEGATE_ID");
      const fb::BackendDelegateDataReference* p = d->processed();
      if (p == nullptr) return refused(at, "the delegate has no processed data reference", "PTE_DELEGATE_DATA");
      const bool inline_data = p->location() == fb::DataLocation::INLINE;
      const auto* list = inline_data ? static_cast<const void*>(program_.backend_delegate_data())
                                     : static_cast<const void*>(program_.segments());
      const uoffset_t count = list == nullptr ? 0
                              : inline_data   ? program_.backend_delegate_data()->size()
                                              : program_.segments()->size();
      if (p->index() >= count) {
        return refused(at + " > processed",
                       std::string(inline_data ? "backend_delegate_data" : "segments") + " index " +
                           std::to_string(p->index()) + " is outside the " + std::to_string(count) + " there are",
                       "PTE_DELEGATE_DATA");
      }
    }
    return ok_status();
  }

  struct Placed {
    uint32_t arena = 0;
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };

  // A planned tensor's range in its arena; the values were validated first,
  // so its sizes are there and its byte size does not overflow.
  bool placed(int32_t v, Placed& out) const {
    const fb::Tensor* t = plan_.values()->Get(static_cast<uoffset_t>(v))->val_as_Tensor();
    if (t == nullptr || t->allocation_info() == nullptr) return false;
    out.arena = t->allocation_info()->memory_id();
    out.offset =
        (uint64_t(t->allocation_info()->memory_offset_high()) << 32) | t->allocation_info()->memory_offset_low();
    out.bytes = executorch::runtime::elementSize(static_cast<executorch::aten::ScalarType>(t->scalar_type()));
    for (int32_t s : *t->sizes()) out.bytes *= static_cast<uint64_t>(s);
    return true;
  }

  // kernels/portable/cpu/op_copy.cpp: aten::copy_ copies src into self with
  // one memcpy, so planned ranges that partly overlap are undefined
  // behaviour (AddressSanitizer: memcpy-param-overlap). The same start is a
  // copy onto itself, which the kernel lets through. trtx check's rule.
  Status copy_overlap(const fb::Operator& op, const flatbuffers::Vector<int32_t>& a, const std::string& at) const {
    const bool copy = op.name()->str() == "aten::copy_" && (op.overload() == nullptr || op.overload()->size() == 0);
    Placed d, s;
    if (!copy || a.size() < 2 || !placed(a.Get(0), d) || !placed(a.Get(1), s)) return ok_status();
    if (d.arena != s.arena || d.bytes == 0 || s.bytes == 0 || d.offset == s.offset) return ok_status();
    if (d.offset >= s.offset + s.bytes || s.offset >= d.offset + d.bytes) return ok_status();
    return refused(at,
                   "aten::copy_'s self (bytes " + std::to_string(d.offset) + ".." + std::to_string(d.offset + d.bytes) +
                       ") and src (" + std::to_string(s.offset) + ".." + std::to_string(s.offset + s.bytes) +
                       ") partly overlap in arena " + std::to_string(d.arena) +
                       ": the kernel's memcpy over them is undefined behaviour (kernels/portable/cpu/op_copy.cpp)",
                   "STRUCT_COPY_OVERLAP");
  }

  Status args(const flatbuffers::Vector<int32_t>* a, const std::string& at, const char* call) const {
    if (a == nullptr) return refused(at, std::string(call) + " has no args vector", "STRUCT_MEMBER_MISSING");
    for (uoffset_t j = 0; j < a->size(); ++j) {
      TRTX_CHECK_OK(index(a->Get(j), at + " > args[" + std::to_string(j) + "]", "argument"));
    }
    return ok_status();
  }

  Status instruction(const fb::Instruction* ins, const std::string& at) const {
    const uoffset_t n_ops = plan_.operators() == nullptr ? 0 : plan_.operators()->size();
    const uoffset_t n_delegates = plan_.delegates() == nullptr ? 0 : plan_.delegates()->size();
    switch (ins->instr_args_type()) {
      case fb::InstructionArguments::KernelCall: {
        const fb::KernelCall* call = ins->instr_args_as_KernelCall();
        const int32_t op = call->op_index();
        if (op < 0 || static_cast<uoffset_t>(op) >= n_ops) {
          return refused(at + " > op_index",
                         "op_index " + std::to_string(op) + " is outside operators[0.." +
                             std::to_string(static_cast<int64_t>(n_ops) - 1) +
                             "]: the runtime keeps that refusal in a delayed_error a later sound call overwrites, "
                             "loads the method without a kernel for the call and execute calls a null function "
                             "(method.cpp)",
                         "STRUCT_OP_INDEX");
        }
        TRTX_CHECK_OK(args(call->args(), at, "KernelCall"));
        return copy_overlap(*plan_.operators()->Get(op), *call->args(), at);
      }
      case fb::InstructionArguments::DelegateCall: {
        const fb::DelegateCall* call = ins->instr_args_as_DelegateCall();
        const int32_t d = call->delegate_index();
        if (d < 0 || static_cast<uoffset_t>(d) >= n_delegates) {
          return refused(at + " > delegate_index",
                         "delegate_index " + std::to_string(d) + " is outside delegates[0.." +
                             std::to_string(static_cast<int64_t>(n_delegates) - 1) + "]",
                         "STRUCT_DELEGATE_INDEX");
        }
        return args(call->args(), at, "DelegateCall");
      }
      case fb::InstructionArguments::MoveCall:
        TRTX_CHECK_OK(index(ins->instr_args_as_MoveCall()->move_from(), at + " > move_from", "move_from"));
        return index(ins->instr_args_as_MoveCall()->move_to(), at + " > move_to", "move_to");
      case fb::InstructionArguments::FreeCall:
        return index(ins->instr_args_as_FreeCall()->value_index(), at + " > value_index", "value_index");
      case fb::InstructionArguments::JumpFalseCall:
        return index(ins->instr_args_as_JumpFalseCall()->cond_value_index(), at + " > cond_value_index",
                     "cond_value_index");
      default:
        return refused(at, "the instruction has no arguments (an InstructionArguments union with none)",
                       "STRUCT_UNION_NONE");
    }
  }

  Status chain(uoffset_t c) const {
    const fb::Chain* ch = plan_.chains()->Get(c);
    const std::string at = m_ + " > chain " + std::to_string(c);
    const auto each = [&](const flatbuffers::Vector<int32_t>* v, const char* name) -> Status {
      if (v == nullptr) return ok_status();
      for (uoffset_t k = 0; k < v->size(); ++k) {
        TRTX_CHECK_OK(index(v->Get(k), at + " > " + name + "[" + std::to_string(k) + "]", "chain value"));
      }
      return ok_status();
    };
    TRTX_CHECK_OK(each(ch->inputs(), "inputs"));
    TRTX_CHECK_OK(each(ch->outputs(), "outputs"));
    if (ch->instructions() == nullptr) return ok_status();  // Method::init refuses it ("Missing instructions")
    for (uoffset_t k = 0; k < ch->instructions()->size(); ++k) {
      const fb::Instruction* ins = ch->instructions()->Get(k);
      TRTX_CHECK_OK(instruction(ins, at + " > instruction " + std::to_string(k)));
    }
    return ok_status();
  }

  const fb::Program& program_;
  const fb::ExecutionPlan& plan_;
  const std::string m_;
  uoffset_t n_ = 0;
};

}  // namespace

Status validate_program(const void* data, size_t size, const PlannedCap& cap) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (size < 8 || !fb::ProgramBufferHasIdentifier(bytes)) {
    return refused("program", "the program part does not carry the file identifier ET12", "PTE_IDENTIFIER");
  }
  flatbuffers::Verifier verifier(bytes, size, kVerifierDepth, kVerifierTables);
  if (!fb::VerifyProgramBuffer(verifier)) {
    return refused("program",
                   "the program FlatBuffer fails verification (an offset, vtable, vector or string outside the "
                   "buffer, misaligned, nested past depth 64 or past 1,000,000 tables): Verification failed; data may "
                   "be truncated or corrupt",
                   "PTE_FLATBUFFER");
  }
  const fb::Program* program = fb::GetProgram(bytes);
  if (program->execution_plan() == nullptr) {
    return refused("program", "the program has no execution_plan vector", "STRUCT_NO_METHODS");
  }
  for (uoffset_t i = 0; i < program->execution_plan()->size(); ++i) {
    const fb::ExecutionPlan* plan = program->execution_plan()->Get(i);
    if (plan->name() == nullptr) {
      return refused("execution_plan[" + std::to_string(i) + "]",
                     "the method has no name, which ExecuTorch reads without a null check (Program::get_method_name)",
                     "STRUCT_MEMBER_MISSING");
    }
    TRTX_CHECK_OK(PlanValidator(*program, *plan, plan->name()->str()).run());
  }
  return check_planned_memory(*program, cap);
}

}  // namespace trtx::integration
