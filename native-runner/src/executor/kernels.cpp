#include "trtx/executor/kernels.h"

#include <cstring>

namespace trtx::executor {

using runtime::Placement;

const char* tag_name(Tag t) {
  switch (t) {
    case Tag::None: return "None";
    case Tag::Int: return "Int";
    case Tag::Bool: return "Bool";
    case Tag::Double: return "Double";
    case Tag::Tensor: return "Tensor";
    case Tag::String: return "String";
    case Tag::IntList: return "IntList";
    case Tag::DoubleList: return "DoubleList";
    case Tag::BoolList: return "BoolList";
    case Tag::TensorList: return "TensorList";
    case Tag::OptionalTensorList: return "OptionalTensorList";
  }
  return "unknown";
}

namespace {

Failure kernel_error(const KernelContext& ctx, const std::string& msg) {
  return fail(Error::KernelFailed, ctx.where, msg);
}

Result<TensorImpl*> tensor_arg(const KernelContext& ctx, const std::vector<EValue*>& args, size_t i, const char* role) {
  if (i >= args.size() || !args[i]->is_tensor()) {
    return fail(Error::InvalidType, ctx.where,
                std::string("argument ") + std::to_string(i) + " (" + role + ") must be a Tensor, got " +
                    (i < args.size() ? tag_name(args[i]->tag) : "nothing"));
  }
  TensorImpl* t = args[i]->tensor;
  if (t->data == nullptr && t->nbytes != 0) {
    return fail(Error::InvalidState, ctx.where,
                std::string("argument ") + std::to_string(i) + " (" + role + ") has no memory (value " +
                    std::to_string(t->value_index) + " is neither planned nor provided)");
  }
  return t;
}

// Out-variant calls list the out tensor, then (optionally) the return value,
// which is the same value as out.
Status check_arity(const KernelContext& ctx, const std::vector<EValue*>& args, size_t base, size_t out_index) {
  if (args.size() == base) return ok_status();
  if (args.size() == base + 1 && args[base] == args[out_index]) return ok_status();
  return fail(Error::InvalidType, ctx.where,
              "takes " + std::to_string(base) + " arguments (and optionally its return value, the out tensor); got " +
                  std::to_string(args.size()));
}

Status writable(const KernelContext& ctx, const TensorImpl& t, size_t i) {
  if (t.constant) {
    return kernel_error(ctx, "argument " + std::to_string(i) + " is written but is program constant data (value " +
                                 std::to_string(t.value_index) + ")");
  }
  return ok_status();
}

Status same_layout(const KernelContext& ctx, const TensorImpl& dst, const TensorImpl& src) {
  if (dst.dtype != src.dtype || dst.nbytes != src.nbytes) {
    return kernel_error(ctx, std::string("source is ") + scalar_type_name(src.dtype) + " of " +
                                 std::to_string(src.nbytes) + " bytes, destination " + scalar_type_name(dst.dtype) +
                                 " of " + std::to_string(dst.nbytes) + " bytes");
  }
  return ok_status();
}

Status h2d_copy(KernelContext& ctx, const std::vector<EValue*>& args) {
  TRTX_CHECK_OK(check_arity(ctx, args, 2, 1));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * self, tensor_arg(ctx, args, 0, "self"));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * out, tensor_arg(ctx, args, 1, "out"));
  if (self->placement != Placement::Host) {
    return kernel_error(ctx, "_h2d_copy: source (value " + std::to_string(self->value_index) +
                                 ") must be in host memory; it is planned on cuda:" + std::to_string(self->device_index));
  }
  if (out->placement != Placement::Device) {
    return kernel_error(ctx, "_h2d_copy: destination (value " + std::to_string(out->value_index) +
                                 ") must be in device memory; it is planned in a host arena");
  }
  TRTX_CHECK_OK(writable(ctx, *out, 1));
  TRTX_CHECK_OK(same_layout(ctx, *out, *self));
  return ctx.device->copy(out->data, Placement::Device, self->data, Placement::Host, self->nbytes, ctx.stream,
                          ctx.counters);
}

Status d2h_copy(KernelContext& ctx, const std::vector<EValue*>& args) {
  TRTX_CHECK_OK(check_arity(ctx, args, 2, 1));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * self, tensor_arg(ctx, args, 0, "self"));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * out, tensor_arg(ctx, args, 1, "out"));
  if (self->placement != Placement::Device) {
    return kernel_error(ctx, "_d2h_copy: source (value " + std::to_string(self->value_index) +
                                 ") must be in device memory; it is planned in a host arena");
  }
  if (out->placement != Placement::Host) {
    return kernel_error(ctx, "_d2h_copy: destination (value " + std::to_string(out->value_index) +
                                 ") must be in host memory");
  }
  TRTX_CHECK_OK(writable(ctx, *out, 1));
  TRTX_CHECK_OK(same_layout(ctx, *out, *self));
  TRTX_CHECK_OK(ctx.device->copy(out->data, Placement::Host, self->data, Placement::Device, self->nbytes, ctx.stream,
                                 ctx.counters));
  // A host consumer reads the result next: the copy completes here.
  if (ctx.stream.handle != nullptr) TRTX_CHECK_OK(ctx.device->synchronize(ctx.stream));
  return ok_status();
}

// aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
// The buffer write-back: the destination is the buffer itself.
Status copy_inplace(KernelContext& ctx, const std::vector<EValue*>& args) {
  TRTX_ASSIGN_OR_RETURN(TensorImpl * dst, tensor_arg(ctx, args, 0, "self"));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * src, tensor_arg(ctx, args, 1, "src"));
  size_t i = 2;
  if (i < args.size() && args[i]->tag == Tag::Bool) ++i;
  if (i < args.size() && args[i] == args[0]) ++i;
  if (i != args.size()) {
    return fail(Error::InvalidType, ctx.where,
                "takes (self, src[, non_blocking][, return value = self]); got " + std::to_string(args.size()) +
                    " arguments");
  }
  TRTX_CHECK_OK(writable(ctx, *dst, 0));
  TRTX_CHECK_OK(same_layout(ctx, *dst, *src));
  TRTX_CHECK_OK(ctx.device->copy(dst->data, dst->placement, src->data, src->placement, src->nbytes, ctx.stream,
                                 ctx.counters));
  if (dst->placement == Placement::Host && src->placement == Placement::Device && ctx.stream.handle != nullptr) {
    TRTX_CHECK_OK(ctx.device->synchronize(ctx.stream));
  }
  return ok_status();
}

Result<float> scalar_arg(const KernelContext& ctx, const std::vector<EValue*>& args, size_t i) {
  const EValue* v = args[i];
  if (v->tag == Tag::Int) return static_cast<float>(v->int_value);
  if (v->tag == Tag::Double) return static_cast<float>(v->double_value);
  if (v->tag == Tag::Bool) return v->bool_value ? 1.0f : 0.0f;
  return fail(Error::InvalidType, ctx.where,
              "argument " + std::to_string(i) + " (alpha) must be a scalar, got " + tag_name(v->tag));
}

// Float elementwise a (op) b into out, where one operand may be a single
// element broadcast over the other.
template <typename Op>
Status binary_float(KernelContext& ctx, TensorImpl* a, TensorImpl* b, TensorImpl* out, size_t out_arg, Op op) {
  const TensorImpl* operands[3] = {a, b, out};
  for (size_t i = 0; i < 3; ++i) {
    const TensorImpl* t = operands[i];
    size_t arg = i < 2 ? i : out_arg;
    if (t->placement != Placement::Host) {
      return kernel_error(ctx, "runs on host tensors; argument " + std::to_string(arg) + " is in device memory");
    }
    if (t->dtype != ScalarType::Float) {
      return kernel_error(ctx, "supports float32 only; argument " + std::to_string(arg) + " is " +
                                   scalar_type_name(t->dtype));
    }
  }
  TRTX_CHECK_OK(writable(ctx, *out, out_arg));
  uint64_t n = out->numel;
  bool a_ok = a->numel == n || a->numel == 1;
  bool b_ok = b->numel == n || b->numel == 1;
  if (!a_ok || !b_ok || (n != a->numel && n != b->numel)) {
    return kernel_error(ctx, "operands of " + std::to_string(a->numel) + " and " + std::to_string(b->numel) +
                                 " elements do not broadcast to the out tensor's " + std::to_string(n));
  }
  const auto* pa = static_cast<const float*>(a->data);
  const auto* pb = static_cast<const float*>(b->data);
  auto* po = static_cast<float*>(out->data);
  for (uint64_t i = 0; i < n; ++i) {
    po[i] = op(pa[a->numel == 1 ? 0 : i], pb[b->numel == 1 ? 0 : i]);
  }
  return ok_status();
}

// aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
Status add_out(KernelContext& ctx, const std::vector<EValue*>& args) {
  TRTX_CHECK_OK(check_arity(ctx, args, 4, 3));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * a, tensor_arg(ctx, args, 0, "self"));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * b, tensor_arg(ctx, args, 1, "other"));
  TRTX_ASSIGN_OR_RETURN(float alpha, scalar_arg(ctx, args, 2));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * out, tensor_arg(ctx, args, 3, "out"));
  return binary_float(ctx, a, b, out, 3, [alpha](float x, float y) { return x + alpha * y; });
}

// aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out)
Status mul_out(KernelContext& ctx, const std::vector<EValue*>& args) {
  TRTX_CHECK_OK(check_arity(ctx, args, 3, 2));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * a, tensor_arg(ctx, args, 0, "self"));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * b, tensor_arg(ctx, args, 1, "other"));
  TRTX_ASSIGN_OR_RETURN(TensorImpl * out, tensor_arg(ctx, args, 2, "out"));
  return binary_float(ctx, a, b, out, 2, [](float x, float y) { return x * y; });
}

struct Entry {
  const char* name;
  KernelFn fn;
};

constexpr Entry kKernels[] = {
    {"et_copy::_h2d_copy.out", h2d_copy},
    {"et_copy::_d2h_copy.out", d2h_copy},
    {"aten::copy_", copy_inplace},
    {"aten::copy_.default", copy_inplace},
    {"aten::add.out", add_out},
    {"aten::mul.out", mul_out},
};

}  // namespace

KernelFn find_kernel(const std::string& op) {
  for (const auto& e : kKernels) {
    if (op == e.name) return e.fn;
  }
  return nullptr;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& e : kKernels) names.emplace_back(e.name);
  return names;
}

}  // namespace trtx::executor
