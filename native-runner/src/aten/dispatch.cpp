// Runs a plan's kernel calls on ATen (plan.h). An ExecuTorch KernelCall's
// arguments are the operator schema's arguments in order, defaults included,
// followed by its return values (executorch/exir/emit/_emitter.py,
// _emit_operator): the first num_arguments go on the boxed stack, and what
// the operator returns lands in the rest. ATen's operators are found in
// c10::Dispatcher by name and overload; the few ExecuTorch adds of its own
// (executorch_prim's symbolic-int arithmetic and et_view, dim_order_ops'
// copies) are done here with the ATen operation they stand for.
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <map>

#include "plan.h"

namespace trtx::aten_kernels {

namespace {

const std::map<std::string, OpKind>& own_ops() {
  static const std::map<std::string, OpKind> ops = {
      {"executorch_prim::et_view.default", OpKind::View},
      {"dim_order_ops::_to_dim_order_copy.out", OpKind::CopyInto},
      {"dim_order_ops::_clone_dim_order.out", OpKind::CopyInto},
      {"dim_order_ops::_empty_dim_order.out", OpKind::EmptyInto},
      {"aten::sym_size.int", OpKind::SymSize},
      {"aten::sym_numel", OpKind::SymNumel},
      {"aten::sym_numel.default", OpKind::SymNumel},
  };
  return ops;
}

// executorch_prim's scalar operators (kernels/prim_ops/register_prim_ops.cpp):
// "executorch_prim::add.Scalar" and the like, on ints and doubles.
std::optional<std::string> prim_scalar(const std::string& name) {
  const std::string prefix = "executorch_prim::";
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  const size_t dot = name.find('.', prefix.size());
  const std::string op = name.substr(prefix.size(), dot == std::string::npos ? std::string::npos : dot - prefix.size());
  static const char* known[] = {"add", "sub", "mul", "floordiv",  "truediv", "mod",     "eq",   "gt",    "lt",
                                "ge",  "le",  "neg", "sym_float", "sym_max", "sym_min", "ceil", "round", "trunc"};
  for (const char* k : known) {
    if (op == k) return op;
  }
  return std::nullopt;
}

bool is_float_type(const c10::TypePtr& t) {
  if (t->kind() == c10::TypeKind::FloatType) return true;
  if (t->kind() == c10::TypeKind::OptionalType) return is_float_type(t->castRaw<c10::OptionalType>()->getElementType());
  return false;
}

c10::IValue prim_result(const std::string& op, const c10::IValue& a, const c10::IValue& b) {
  const bool ints = a.isInt() && (b.isNone() || b.isInt());
  const double x = a.isInt() ? static_cast<double>(a.toInt()) : a.toDouble();
  const double y = b.isNone() ? 0.0 : (b.isInt() ? static_cast<double>(b.toInt()) : b.toDouble());
  if (op == "neg") return ints ? c10::IValue(-a.toInt()) : c10::IValue(-x);
  if (op == "sym_float") return c10::IValue(x);
  if (op == "ceil") return c10::IValue(static_cast<int64_t>(std::ceil(x)));
  if (op == "round") return c10::IValue(static_cast<int64_t>(std::nearbyint(x)));
  if (op == "trunc") return c10::IValue(static_cast<int64_t>(std::trunc(x)));
  if (op == "eq") return c10::IValue(x == y);
  if (op == "gt") return c10::IValue(x > y);
  if (op == "lt") return c10::IValue(x < y);
  if (op == "ge") return c10::IValue(x >= y);
  if (op == "le") return c10::IValue(x <= y);
  if (op == "truediv") return c10::IValue(x / y);
  if (ints) {
    const int64_t i = a.toInt(), j = b.toInt();
    if (op == "add") return c10::IValue(i + j);
    if (op == "sub") return c10::IValue(i - j);
    if (op == "mul") return c10::IValue(i * j);
    if (op == "sym_max") return c10::IValue(std::max(i, j));
    if (op == "sym_min") return c10::IValue(std::min(i, j));
    // Python's floor division and modulo, as the traced graph meant them.
    if (op == "floordiv") return c10::IValue(j == 0 ? 0 : (i / j - ((i % j != 0) && ((i < 0) != (j < 0)))));
    if (op == "mod") return c10::IValue(j == 0 ? 0 : ((i % j) + j) % j);
  }
  if (op == "add") return c10::IValue(x + y);
  if (op == "sub") return c10::IValue(x - y);
  if (op == "mul") return c10::IValue(x * y);
  if (op == "sym_max") return c10::IValue(std::max(x, y));
  if (op == "sym_min") return c10::IValue(std::min(x, y));
  if (op == "floordiv") return c10::IValue(std::floor(x / y));
  return c10::IValue(std::fmod(std::fmod(x, y) + y, y));
}

std::vector<int64_t> int_list(const Plan& plan, const std::vector<c10::IValue>& values, int32_t v) {
  std::vector<int64_t> out;
  for (int32_t item : plan.lists[v].items) out.push_back(values[item].toInt());
  return out;
}

Status need_args(const Instruction& ins, size_t n, const Op& op, const std::string& where) {
  if (ins.args.size() >= n) return ok_status();
  return fail(
      Error::EngineFormat, where,
      op.name + " is called with " + std::to_string(ins.args.size()) + " arguments; it takes " + std::to_string(n));
}

// aten::index_put.out whose out is its self: a KV cache updated where it lies
// (TensorRT's KVCacheUpdate layer), not a whole new cache copied back.
bool index_put_in_place(const Plan& plan, std::vector<c10::IValue>& values, const Instruction& ins) {
  if (ins.args.size() < 5) return false;
  const c10::IValue& self = values[ins.args[0]];
  const c10::IValue& out = values[ins.args[4]];
  if (!self.isTensor() || !out.isTensor()) return false;
  const at::Tensor& s = self.toTensor();
  const at::Tensor& o = out.toTensor();
  if (s.data_ptr() != o.data_ptr() || s.sizes() != o.sizes() || s.strides() != o.strides()) return false;
  auto indices = argument(plan, values, ins.args[1]).to<c10::List<std::optional<at::Tensor>>>();
  at::Tensor target = o;
  target.index_put_(indices, values[ins.args[2]].toTensor(), values[ins.args[3]].toBool());
  if (ins.args.size() > 5) values[ins.args[5]] = out;
  return true;
}

}  // namespace

Status resolve_ops(Plan& plan, const std::string& at) {
  for (Op& op : plan.ops) {
    const auto own = own_ops().find(op.name);
    if (own != own_ops().end()) {
      op.kind = own->second;
      continue;
    }
    if (auto prim = prim_scalar(op.name)) {
      op.kind = OpKind::PrimScalar;
      op.prim = *prim;
      continue;
    }
    const size_t colons = op.name.find("::");
    const size_t dot = op.name.find('.', colons == std::string::npos ? 0 : colons + 2);
    const std::string name = op.name.substr(0, dot);
    const std::string overload = dot == std::string::npos ? std::string() : op.name.substr(dot + 1);
    auto handle = c10::Dispatcher::singleton().findSchema({name, overload});
    if (!handle && overload == "default") handle = c10::Dispatcher::singleton().findSchema({name, ""});
    if (!handle) {
      return fail(Error::OperatorMissing, at,
                  "the engine's program calls " + op.name + ", which ATen's dispatcher (libtorch) does not have");
    }
    op.kind = OpKind::Dispatcher;
    op.handle = handle;
    const auto& args = handle->schema().arguments();
    op.num_arguments = args.size();
    for (const auto& a : args) {
      op.float_arguments.push_back(is_float_type(a.type()));
      op.written_arguments.push_back(a.alias_info() != nullptr && a.alias_info()->isWrite());
    }
    op.index_put_out = op.name == "aten::index_put.out";
  }
  return ok_status();
}

std::vector<int32_t> written(const Plan& plan, const Instruction& ins) {
  if (ins.kind == Instruction::Kind::Move) return {ins.b};
  if (ins.kind != Instruction::Kind::Kernel) return {};
  const Op& op = plan.ops[ins.op];
  const auto& a = ins.args;
  size_t first_return = 0;
  switch (op.kind) {
    case OpKind::View:
      first_return = 2;
      break;
    case OpKind::CopyInto:
      first_return = 3;
      break;
    case OpKind::EmptyInto:
      first_return = 2;
      break;
    case OpKind::SymSize:
      first_return = 2;
      break;
    case OpKind::SymNumel:
      first_return = 1;
      break;
    case OpKind::PrimScalar:
      first_return = a.empty() ? 0 : a.size() - 1;
      break;
    case OpKind::Dispatcher:
      first_return = op.num_arguments;
      break;
  }
  std::vector<int32_t> out;
  auto add = [&](int32_t v) {
    out.push_back(v);
    for (int32_t item : plan.lists[v].items) {
      if (item >= 0) out.push_back(item);
    }
  };
  for (size_t i = 0; i < a.size(); ++i) {
    const bool schema_write =
        op.kind == OpKind::Dispatcher && i < op.written_arguments.size() && op.written_arguments[i];
    if (i >= first_return || schema_write) add(a[i]);
  }
  return out;
}

c10::IValue argument(const Plan& plan, const std::vector<c10::IValue>& values, int32_t v) {
  const ListValue& list = plan.lists[v];
  switch (list.kind) {
    case ListValue::Kind::Int: {
      c10::List<int64_t> out;
      for (int32_t item : list.items) out.push_back(values[item].toInt());
      return c10::IValue(out);
    }
    case ListValue::Kind::Tensor: {
      c10::List<at::Tensor> out;
      for (int32_t item : list.items) out.push_back(values[item].toTensor());
      return c10::IValue(out);
    }
    case ListValue::Kind::OptionalTensor: {
      c10::List<std::optional<at::Tensor>> out;
      for (int32_t item : list.items) {
        if (item < 0 || values[item].isNone()) {
          out.push_back(std::nullopt);
        } else {
          out.push_back(values[item].toTensor());
        }
      }
      return c10::IValue(out);
    }
    case ListValue::Kind::None:
      break;
  }
  return values[v];
}

Status call(const Plan& plan, std::vector<c10::IValue>& values, const Instruction& ins, size_t pc,
            const std::string& at) {
  const Op& op = plan.ops[ins.op];
  const std::string where = at + ".instructions[" + std::to_string(pc) + "] (" + op.name + ")";
  const auto& a = ins.args;
  try {
    switch (op.kind) {
      case OpKind::View:
        TRTX_CHECK_OK(need_args(ins, 3, op, where));
        values[a[2]] = values[a[0]].toTensor().view(int_list(plan, values, a[1]));
        return ok_status();
      case OpKind::CopyInto: {
        TRTX_CHECK_OK(need_args(ins, 4, op, where));
        at::Tensor out = values[a[3]].toTensor();
        out.copy_(values[a[0]].toTensor());
        if (a.size() > 4) values[a[4]] = values[a[3]];
        return ok_status();
      }
      case OpKind::EmptyInto:
        TRTX_CHECK_OK(need_args(ins, 3, op, where));
        if (a.size() > 3) values[a[3]] = values[a[2]];
        return ok_status();
      case OpKind::SymSize:
        TRTX_CHECK_OK(need_args(ins, 3, op, where));
        values[a[2]] = c10::IValue(values[a[0]].toTensor().size(values[a[1]].toInt()));
        return ok_status();
      case OpKind::SymNumel:
        TRTX_CHECK_OK(need_args(ins, 2, op, where));
        values[a[1]] = c10::IValue(values[a[0]].toTensor().numel());
        return ok_status();
      case OpKind::PrimScalar: {
        TRTX_CHECK_OK(need_args(ins, 2, op, where));
        const bool unary = a.size() == 2;
        values[a.back()] = prim_result(op.prim, values[a[0]], unary ? c10::IValue() : values[a[1]]);
        return ok_status();
      }
      case OpKind::Dispatcher:
        break;
    }
    TRTX_CHECK_OK(need_args(ins, op.num_arguments, op, where));
    if (op.index_put_out && index_put_in_place(plan, values, ins)) return ok_status();
    std::vector<c10::IValue> stack;
    stack.reserve(op.num_arguments);
    for (size_t i = 0; i < op.num_arguments; ++i) {
      c10::IValue v = argument(plan, values, a[i]);
      if (op.float_arguments[i] && v.isInt()) v = c10::IValue(static_cast<double>(v.toInt()));
      stack.push_back(std::move(v));
    }
    op.handle->callBoxed(stack);
    const size_t returns = a.size() - op.num_arguments;
    if (stack.size() == returns) {
      for (size_t j = 0; j < returns; ++j) values[a[op.num_arguments + j]] = std::move(stack[j]);
    }
    return ok_status();
  } catch (const std::exception& e) {
    std::string what = e.what();
    // c10::Error's what() carries a C++ backtrace after the message.
    const size_t cut = what.find("\nException raised from");
    if (cut != std::string::npos) what.resize(cut);
    return fail(Error::DelegateExecutionFailed, where, "ATen refused the operator: " + what);
  }
}

}  // namespace trtx::aten_kernels
