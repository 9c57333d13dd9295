#include "external_weights.h"

#include <executorch/runtime/core/tensor_layout.h>

#include <unordered_set>

#include "flatbuffers/flatbuffers.h"
#include "program_generated.h"
#include "trtx/et/recorded_failure.h"
#include "trtx/runtime/scalar_type.h"

namespace trtx::engine {

namespace et = executorch::runtime;
namespace fb = trtx_pte;

namespace {

std::string shape_of(int8_t code, const flatbuffers::Vector<int32_t>* sizes) {
  std::string s = std::string(scalar_type_name(static_cast<ScalarType>(code))) + "[";
  for (flatbuffers::uoffset_t i = 0; sizes != nullptr && i < sizes->size(); ++i) {
    s += (i ? "," : "") + std::to_string(sizes->Get(i));
  }
  return s + "]";
}

}  // namespace

Result<std::unique_ptr<ExternalWeights>> ExternalWeights::create(const uint8_t* program, size_t size,
                                                                 const char* method, const et::NamedDataMap* outer,
                                                                 const std::string& at) {
  // ExecuTorch verified the program already when InternalConsistency is
  // compiled in (runtime/executor/program.cpp); the runner reads it with its
  // own generated schema, so it verifies it itself rather than rely on that.
  flatbuffers::Verifier verifier(program, size);
  if (!fb::VerifyProgramBuffer(verifier)) {
    return fail(Error::EngineFormat, at, "the engine's program fails verification against ExecuTorch's schema");
  }
  const fb::Program* p = fb::GetProgram(program);
  const fb::ExecutionPlan* plan = nullptr;
  for (flatbuffers::uoffset_t i = 0; p->execution_plan() != nullptr && i < p->execution_plan()->size(); ++i) {
    const fb::ExecutionPlan* candidate = p->execution_plan()->Get(i);
    if (candidate->name() != nullptr && candidate->name()->str() == method) plan = candidate;
  }
  std::unique_ptr<ExternalWeights> w(new ExternalWeights(outer, at));
  if (plan == nullptr || plan->values() == nullptr) return w;  // Program::method_meta refuses it first
  for (flatbuffers::uoffset_t i = 0; i < plan->values()->size(); ++i) {
    const fb::EValue* v = plan->values()->Get(i);
    if (v->val_type() == fb::KernelTypes::Tensor) TRTX_CHECK_OK(w->add(v->val_as_Tensor(), i));
  }
  TRTX_CHECK_OK(w->check_keys_present());
  return w;
}

// One value of the method: a constant ExecuTorch resolves by name (EXTERNAL
// and no allocation_info, as Method::get_num_external_constants counts them)
// becomes an entry; every other tensor is the program's own.
Status ExternalWeights::add(const void* tensor, size_t value_index) {
  const auto* t = static_cast<const fb::Tensor*>(tensor);
  // The verifier lets a union carry a type without a value; ExecuTorch
  // refuses that value when it loads the method (method.cpp, "Null value").
  if (t == nullptr) return ok_status();
  const fb::ExtraTensorInfo* extra = t->extra_tensor_info();
  if (extra == nullptr || extra->location() != fb::TensorDataLocation::EXTERNAL || t->allocation_info() != nullptr) {
    return ok_status();
  }
  if (extra->fully_qualified_name() == nullptr || extra->fully_qualified_name()->size() == 0) {
    return fail(Error::EngineFormat, at_,
                "the engine's program declares value " + std::to_string(value_index) +
                    " an EXTERNAL constant without a fully_qualified_name: nothing names its bytes");
  }
  const std::string key = extra->fully_qualified_name()->str();
  if (find(key) != nullptr) return ok_status();  // tensors sharing one weight
  const auto code = static_cast<int8_t>(t->scalar_type());
  uint64_t nbytes = element_size(code);
  const flatbuffers::Vector<int32_t>* sizes = t->sizes();
  for (flatbuffers::uoffset_t d = 0; sizes != nullptr && d < sizes->size(); ++d) {
    const int32_t n = sizes->Get(d);
    if (n < 0 || (n != 0 && nbytes > UINT64_MAX / static_cast<uint64_t>(n))) {
      return fail(Error::EngineFormat, at_, "the engine's constant '" + key + "' has sizes " + shape_of(code, sizes));
    }
    nbytes *= static_cast<uint64_t>(n);
  }
  Entry e;
  e.key = key;
  e.scalar_type = code;
  e.sizes = sizes != nullptr ? sizes->data() : nullptr;
  e.rank = sizes != nullptr ? sizes->size() : 0;
  e.dim_order = t->dim_order() != nullptr ? t->dim_order()->data() : nullptr;
  e.dim_order_size = t->dim_order() != nullptr ? t->dim_order()->size() : 0;
  e.nbytes = nbytes;
  e.shape = shape_of(code, sizes);
  bytes_ = nbytes > UINT64_MAX - bytes_ ? UINT64_MAX : bytes_ + nbytes;
  entries_.push_back(std::move(e));
  return ok_status();
}

// Every key before ExecuTorch loads anything, so a missing one is named (the
// runtime would only say NotFound). A map that cannot list its keys is left
// to get_data, which names the key too.
Status ExternalWeights::check_keys_present() const {
  if (entries_.empty() || outer_ == nullptr) return ok_status();
  et::Result<uint32_t> n = outer_->get_num_keys();
  if (!n.ok()) return ok_status();
  std::unordered_set<std::string> keys;
  for (uint32_t i = 0; i < n.get(); ++i) {
    et::Result<const char*> k = outer_->get_key(i);
    if (k.ok() && k.get() != nullptr) keys.insert(k.get());
  }
  for (const Entry& e : entries_) {
    if (keys.count(e.key) != 0) continue;
    return fail(Error::EngineFormat, at_,
                "the engine's program reads its constant '" + e.key + "' (" + e.shape + ", " +
                    std::to_string(e.nbytes) + " bytes) from the program's named data, which has no such key (" +
                    std::to_string(keys.size()) +
                    " keys): a version-3 engine's weights are written beside it as named data (trtx check names "
                    "every missing key)");
  }
  return ok_status();
}

const ExternalWeights::Entry* ExternalWeights::find(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

et::Result<const et::TensorLayout> ExternalWeights::get_tensor_layout(std::string_view key) const {
  const Entry* e = find(key);
  if (e == nullptr) return et::Error::NotFound;
  return et::TensorLayout::create(et::Span<const int32_t>(e->sizes, e->rank),
                                  et::Span<const uint8_t>(e->dim_order, e->dim_order_size),
                                  static_cast<executorch::aten::ScalarType>(e->scalar_type));
}

et::Result<et::FreeableBuffer> ExternalWeights::get_data(std::string_view key) const {
  const Entry* e = find(key);
  if (e == nullptr || outer_ == nullptr) return et::Error::NotFound;
  et::Result<et::FreeableBuffer> data = outer_->get_data(key);
  if (!data.ok()) {
    refusal_ =
        fail(Error::EngineFormat, at_,
             data.error() == et::Error::NotFound
                 ? "the program's named data has no key '" + e->key + "' (the engine's constant, " + e->shape + ")"
                 : "the program's named data could not give the engine's constant '" + e->key +
                       "': " + trtx::et::et_error_name(data.error()));
    return data.error() == et::Error::NotFound ? et::Error::NotFound : et::Error::InvalidExternalData;
  }
  if (data->size() != e->nbytes) {
    refusal_ =
        fail(Error::EngineFormat, at_,
             "the program's named data holds " + std::to_string(data->size()) + " bytes under '" + e->key +
                 "'; the engine's program declares it " + e->shape + ", " + std::to_string(e->nbytes) + " bytes");
    data->Free();
    return et::Error::InvalidExternalData;
  }
  return data;
}

et::Error ExternalWeights::load_data_into(std::string_view key, void* buffer, size_t size) const {
  if (find(key) == nullptr || outer_ == nullptr) return et::Error::NotFound;
  return outer_->load_data_into(key, buffer, size);
}

et::Result<uint32_t> ExternalWeights::get_num_keys() const { return static_cast<uint32_t>(entries_.size()); }

et::Result<const char*> ExternalWeights::get_key(uint32_t index) const {
  if (index >= entries_.size()) return et::Error::InvalidArgument;
  return entries_[index].key.c_str();
}

}  // namespace trtx::engine
