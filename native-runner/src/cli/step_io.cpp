#include "step_io.h"

#include <cstring>

#include "trtx/et/device_allocator.h"
#include "trtx/et/recorded_failure.h"
#include "trtx/runtime/digest.h"
#include "trtx/runtime/half.h"
#include "trtx/runtime/scalar_type.h"

namespace trtx::cli {

namespace et = executorch::runtime;
using executorch::aten::Tensor;

namespace {

float float_pattern(int step, uint64_t k) {
  const uint64_t v = (uint64_t(step) * 7 + k * 13) % 29;
  return (static_cast<float>(v) - 14.0f) / 16.0f;
}

void fill_pattern(uint8_t* out, ScalarType type, uint64_t numel, int step) {
  const size_t width = element_size(type);
  for (uint64_t k = 0; k < numel; ++k) {
    uint8_t* p = out + k * width;
    auto put = [p](const void* src, size_t n) { std::memcpy(p, src, n); };
    const int64_t iv = int64_t(step) + int64_t(k);
    switch (type) {
      case ScalarType::Long:
        put(&iv, 8);
        break;
      case ScalarType::UInt64: {
        const auto x = uint64_t(iv);
        put(&x, 8);
        break;
      }
      case ScalarType::Int: {
        const auto x = static_cast<int32_t>(iv);
        put(&x, 4);
        break;
      }
      case ScalarType::UInt32: {
        const auto x = static_cast<uint32_t>(iv);
        put(&x, 4);
        break;
      }
      case ScalarType::Short: {
        const auto x = static_cast<int16_t>(iv);
        put(&x, 2);
        break;
      }
      case ScalarType::UInt16: {
        const auto x = static_cast<uint16_t>(iv);
        put(&x, 2);
        break;
      }
      case ScalarType::Char:
      case ScalarType::Byte: {
        const auto x = static_cast<uint8_t>(iv);
        put(&x, 1);
        break;
      }
      case ScalarType::Bool: {
        const auto x = static_cast<uint8_t>((step + k) % 2);
        put(&x, 1);
        break;
      }
      case ScalarType::Float: {
        const float x = float_pattern(step, k);
        put(&x, 4);
        break;
      }
      case ScalarType::Double: {
        const double x = float_pattern(step, k);
        put(&x, 8);
        break;
      }
      case ScalarType::Half: {
        const uint16_t x = float_to_half(float_pattern(step, k));
        put(&x, 2);
        break;
      }
      case ScalarType::BFloat16: {
        const uint16_t x = float_to_bf16(float_pattern(step, k));
        put(&x, 2);
        break;
      }
      default:
        for (size_t b = 0; b < width; ++b) p[b] = static_cast<uint8_t>((step * 31 + k + b) & 0xFF);
    }
  }
}

ScalarType trtx_type(executorch::aten::ScalarType t) { return static_cast<ScalarType>(static_cast<int8_t>(t)); }

// A tensor's bytes on the host, whether they live in device memory (read
// through the registered allocator) or not.
Status read_tensor(const Tensor& t, std::vector<uint8_t>& out, bool& on_device) {
  out.resize(t.nbytes());
  const void* src = t.const_data_ptr();
  on_device = trtx::et::device_allocator().owns(src, t.nbytes());
  if (t.nbytes() == 0) return ok_status();
  if (src == nullptr) return fail(Error::InvalidState, "tensor", "has no memory");
  if (on_device) return trtx::et::device_allocator().read(out.data(), src, t.nbytes());
  std::memcpy(out.data(), src, t.nbytes());
  return ok_status();
}

std::vector<int64_t> sizes_of(const Tensor& t) {
  std::vector<int64_t> s;
  for (auto d : t.sizes()) s.push_back(d);
  return s;
}

std::string digest_of(const std::vector<uint8_t>& bytes) { return hex64(fnv1a64(bytes.data(), bytes.size())); }

}  // namespace

Status MethodInputs::prepare(const et::MethodMeta& meta) {
  inputs_.clear();
  inputs_.resize(meta.num_inputs());
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    Input& in = inputs_[i];
    auto tag = meta.input_tag(i);
    if (!tag.ok())
      return fail(Error::InvalidProgram, meta.name() + std::string(".inputs[") + std::to_string(i) + "]",
                  "unreadable input");
    in.tag = tag.get();
    if (in.tag != et::Tag::Tensor) continue;
    auto info = meta.input_tensor_meta(i);
    if (!info.ok())
      return fail(Error::InvalidProgram, meta.name() + std::string(".inputs[") + std::to_string(i) + "]",
                  "unreadable tensor input");
    in.sizes.assign(info->sizes().begin(), info->sizes().end());
    in.dim_order.assign(info->dim_order().begin(), info->dim_order().end());
    in.bytes.assign(info->nbytes(), 0);
    in.impl = std::make_unique<executorch::aten::TensorImpl>(info->scalar_type(), static_cast<ssize_t>(in.sizes.size()),
                                                             in.sizes.data(), in.bytes.data(), in.dim_order.data());
  }
  return ok_status();
}

Status MethodInputs::set(et::Method& method, int step) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    Input& in = inputs_[i];
    et::EValue value;
    if (in.tag == et::Tag::Tensor) {
      fill_pattern(in.bytes.data(), trtx_type(in.impl->scalar_type()), static_cast<uint64_t>(in.impl->numel()), step);
      value = et::EValue(Tensor(in.impl.get()));
    } else if (in.tag == et::Tag::Int) {
      value = et::EValue(static_cast<int64_t>(step));
    } else if (in.tag == et::Tag::Double) {
      value = et::EValue(static_cast<double>(float_pattern(step, 0)));
    } else if (in.tag == et::Tag::Bool) {
      value = et::EValue(step % 2 == 1);
    } else {
      continue;
    }
    const et::Error e = method.set_input(value, i);
    if (e != et::Error::Ok) {
      return fail(trtx::et::from_et_error(e), std::string("inputs[") + std::to_string(i) + "]",
                  "Method::set_input refused the input");
    }
  }
  return ok_status();
}

namespace {

std::string shape_text(int32_t dtype, const std::vector<int64_t>& sizes) {
  std::string s = std::string(scalar_type_name(static_cast<ScalarType>(dtype))) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

// The record kind an input of this tag takes; false for a tag --inputs
// cannot carry (the pattern path skips those inputs too).
bool record_kind(et::Tag tag, ValueKind& kind) {
  switch (tag) {
    case et::Tag::Tensor:
      kind = ValueKind::Tensor;
      return true;
    case et::Tag::Int:
      kind = ValueKind::Int;
      return true;
    case et::Tag::Double:
      kind = ValueKind::Double;
      return true;
    case et::Tag::Bool:
      kind = ValueKind::Bool;
      return true;
    default:
      return false;
  }
}

}  // namespace

Status MethodInputs::check_recorded(const RecordedValues& recorded, const std::string& method, int step) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    ValueKind want;
    if (!record_kind(in.tag, want)) continue;
    const std::string at = "steps[" + std::to_string(step) + "].inputs[" + std::to_string(i) + "]";
    const std::string what = "method '" + method + "' step " + std::to_string(step) + " input " + std::to_string(i);
    const TensorRecord* r = recorded.find(method, static_cast<uint32_t>(step), static_cast<uint32_t>(i));
    if (r == nullptr) return fail(Error::InvalidArgument, at, "--inputs has no record for " + what);
    if (r->kind != want) {
      return fail(Error::InvalidArgument, at,
                  std::string("--inputs records a ") + value_kind_name(r->kind) + " for " + what + ", which is a " +
                      value_kind_name(want));
    }
    if (want != ValueKind::Tensor) continue;
    const auto dtype = static_cast<int32_t>(static_cast<int8_t>(in.impl->scalar_type()));
    const std::vector<int64_t> sizes(in.sizes.begin(), in.sizes.end());
    if (r->dtype != dtype || r->sizes != sizes || r->bytes.size() != in.bytes.size()) {
      return fail(Error::InvalidArgument, at,
                  "--inputs records " + shape_text(r->dtype, r->sizes) + " (" + std::to_string(r->bytes.size()) +
                      " bytes) for " + what + ", which is " + shape_text(dtype, sizes) + " (" +
                      std::to_string(in.bytes.size()) + " bytes)");
    }
  }
  return ok_status();
}

Status MethodInputs::set_recorded(et::Method& method, const RecordedValues& recorded, const std::string& name,
                                  int step) {
  TRTX_CHECK_OK(check_recorded(recorded, name, step));
  for (size_t i = 0; i < inputs_.size(); ++i) {
    Input& in = inputs_[i];
    ValueKind kind;
    if (!record_kind(in.tag, kind)) continue;
    const TensorRecord& r = *recorded.find(name, static_cast<uint32_t>(step), static_cast<uint32_t>(i));
    et::EValue value;
    if (kind == ValueKind::Tensor) {
      if (!in.bytes.empty()) std::memcpy(in.bytes.data(), r.bytes.data(), in.bytes.size());
      value = et::EValue(Tensor(in.impl.get()));
    } else if (kind == ValueKind::Int) {
      int64_t x;
      std::memcpy(&x, r.bytes.data(), 8);
      value = et::EValue(x);
    } else if (kind == ValueKind::Double) {
      double x;
      std::memcpy(&x, r.bytes.data(), 8);
      value = et::EValue(x);
    } else {
      value = et::EValue(r.bytes[0] != 0);
    }
    const et::Error e = method.set_input(value, i);
    if (e != et::Error::Ok) {
      return fail(trtx::et::from_et_error(e), std::string("inputs[") + std::to_string(i) + "]",
                  "Method::set_input refused the recorded input");
    }
  }
  return ok_status();
}

Status write_output_records(const et::Method& method, const std::string& name, int step, TensorFileWriter& out) {
  for (size_t i = 0; i < method.outputs_size(); ++i) {
    const et::EValue& v = method.get_output(i);
    TensorRecord r;
    r.method = name;
    r.step = static_cast<uint32_t>(step);
    r.index = static_cast<uint32_t>(i);
    if (v.isTensor()) {
      const Tensor& t = v.toTensor();
      bool on_device = false;
      Status s = read_tensor(t, r.bytes, on_device);
      if (!s.ok()) return fail(s.failure().code, "outputs[" + std::to_string(i) + "]", s.failure().message);
      r.kind = ValueKind::Tensor;
      r.dtype = static_cast<int32_t>(static_cast<int8_t>(t.scalar_type()));
      r.sizes = sizes_of(t);
    } else if (v.isInt()) {
      const int64_t x = v.toInt();
      r.kind = ValueKind::Int;
      r.bytes.assign(reinterpret_cast<const uint8_t*>(&x), reinterpret_cast<const uint8_t*>(&x) + 8);
    } else if (v.isDouble()) {
      const double x = v.toDouble();
      r.kind = ValueKind::Double;
      r.bytes.assign(reinterpret_cast<const uint8_t*>(&x), reinterpret_cast<const uint8_t*>(&x) + 8);
    } else if (v.isBool()) {
      r.kind = ValueKind::Bool;
      r.bytes.push_back(v.toBool() ? 1 : 0);
    } else {
      // None, and the kinds the format has no record for (lists, strings).
      r.kind = ValueKind::None;
    }
    TRTX_CHECK_OK(out.add(r));
  }
  return ok_status();
}

Status record_outputs(const et::Method& method, std::vector<OutputRecord>& out) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < method.outputs_size(); ++i) {
    const et::EValue& v = method.get_output(i);
    OutputRecord o;
    o.index = static_cast<int>(i);
    if (v.isTensor()) {
      const Tensor& t = v.toTensor();
      bool on_device = false;
      Status s = read_tensor(t, bytes, on_device);
      if (!s.ok()) return fail(s.failure().code, "outputs[" + std::to_string(i) + "]", s.failure().message);
      o.kind = "tensor";
      o.is_tensor = true;
      o.dtype = scalar_type_name(trtx_type(t.scalar_type()));
      o.sizes = sizes_of(t);
      o.placement = on_device ? "device" : "host";
      o.digest = digest_of(bytes);
    } else if (v.isInt()) {
      const int64_t x = v.toInt();
      o.kind = "int";
      o.digest = hex64(fnv1a64(&x, sizeof x));
    } else if (v.isDouble()) {
      const double x = v.toDouble();
      o.kind = "double";
      o.digest = hex64(fnv1a64(&x, sizeof x));
    } else if (v.isBool()) {
      const uint8_t x = v.toBool() ? 1 : 0;
      o.kind = "bool";
      o.digest = hex64(fnv1a64(&x, 1));
    } else {
      o.kind = v.isNone() ? "none" : "other";
      o.digest = hex64(kFnvOffsetBasis);
    }
    out.push_back(std::move(o));
  }
  return ok_status();
}

namespace {
// The method's named, memory-planned tensors: its mutable buffers
// (ExecuTorch names them under emit_mutable_buffer_names).
template <typename F>
Status for_each_buffer(et::Method& method, F&& f) {
  const et::MethodMeta meta = method.method_meta();
  for (size_t i = 0; i < meta.num_attributes(); ++i) {
    auto info = meta.attribute_tensor_meta(i);
    if (!info.ok() || !info->is_memory_planned()) continue;
    const std::string name(info->name());
    auto t = method.get_attribute(name);
    if (!t.ok()) return fail(trtx::et::from_et_error(t.error()), name, "Method::get_attribute failed");
    TRTX_CHECK_OK(f(name, t.get()));
  }
  return ok_status();
}
}  // namespace

Status record_buffers(et::Method& method, std::vector<BufferRecord>& out) {
  std::vector<uint8_t> bytes;
  return for_each_buffer(method, [&](const std::string& name, const Tensor& t) -> Status {
    bool on_device = false;
    TRTX_CHECK_OK(read_tensor(t, bytes, on_device));
    BufferRecord r;
    r.name = name;
    r.dtype = scalar_type_name(trtx_type(t.scalar_type()));
    r.sizes = sizes_of(t);
    r.placement = on_device ? "device" : "host";
    r.digest = digest_of(bytes);
    out.push_back(std::move(r));
    return ok_status();
  });
}

Result<uint64_t> init_device_buffers(et::Method& method) {
  uint64_t n = 0;
  TRTX_CHECK_OK(for_each_buffer(method, [&](const std::string& name, const Tensor& t) -> Status {
    void* p = t.mutable_data_ptr();
    if (t.nbytes() == 0 || !trtx::et::device_allocator().owns(p, t.nbytes())) return ok_status();
    Status s = trtx::et::device_allocator().zero(p, t.nbytes());
    if (!s.ok()) return fail(s.failure().code, name, s.failure().message);
    ++n;
    return ok_status();
  }));
  return n;
}

}  // namespace trtx::cli
