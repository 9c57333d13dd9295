// A version-3 reference engine's weights (docs/reference-lowering.md
// section 1, "Execution of version 3"): the engine's program declares each
// constant as a Tensor with extra_tensor_info.location EXTERNAL and a
// fully_qualified_name KEY, and the bytes are the OUTER program's named data
// under KEY, which ExecuTorch hands the delegate at init
// (runtime/backend/backend_init_context.h get_named_data_map).
//
// ExecuTorch resolves an EXTERNAL constant through the map given to
// Program::load_method (runtime/executor/program.h): Method asks the map for
// the key's TensorLayout first, then for its data (Method::
// parse_external_constants, runtime/executor/method.cpp). The outer map is
// the program's PteDataMap (runtime/executor/pte_data_map.h), whose
// get_tensor_layout is NotImplemented: named data carries bytes, no layout.
// So this map stands between them: it answers the layout from the engine's
// program's own declaration of the tensor, and passes get_data to the outer
// map, checking that the entry holds exactly the tensor's bytes. It never
// reads data itself: ExecuTorch reads each weight once, through the outer
// program's data loader (internal).
#pragma once

#include <executorch/runtime/core/named_data_map.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtx/runtime/result.h"

namespace trtx::engine {

class ExternalWeights final : public executorch::runtime::NamedDataMap {
 public:
  /// The EXTERNAL constants of `method` in the engine's program (`program`,
  /// `size` bytes: the .pte, its flatbuffer at offset 0), each checked to be a
  /// key of `outer` (when `outer` can list its keys). Refused, EngineFormat at
  /// `at`: a program that fails the flatbuffer verifier, an EXTERNAL constant
  /// without a name, a key `outer` lacks (the message names it).
  static Result<std::unique_ptr<ExternalWeights>> create(const uint8_t* program, size_t size, const char* method,
                                                         const executorch::runtime::NamedDataMap* outer,
                                                         const std::string& at);

  executorch::runtime::Result<const executorch::runtime::TensorLayout> get_tensor_layout(
      std::string_view key) const override;
  /// The outer map's bytes for `key`; refused (InvalidExternalData, and
  /// refusal() says why, naming the key) when they are not exactly the
  /// tensor's nbytes.
  executorch::runtime::Result<executorch::runtime::FreeableBuffer> get_data(std::string_view key) const override;
  executorch::runtime::Error load_data_into(std::string_view key, void* buffer, size_t size) const override;
  executorch::runtime::Result<uint32_t> get_num_keys() const override;
  executorch::runtime::Result<const char*> get_key(uint32_t index) const override;

  /// Why the last get_data was refused, if it was.
  const std::optional<Failure>& refusal() const { return refusal_; }
  /// Distinct keys, and the sum of their tensors' bytes.
  size_t count() const { return entries_.size(); }
  uint64_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::string key;
    int8_t scalar_type = 0;
    const int32_t* sizes = nullptr;
    size_t rank = 0;
    const uint8_t* dim_order = nullptr;
    size_t dim_order_size = 0;
    uint64_t nbytes = 0;
    std::string shape;  // dtype[sizes], for messages
  };
  ExternalWeights(const executorch::runtime::NamedDataMap* outer, std::string at) : outer_(outer), at_(std::move(at)) {}
  const Entry* find(std::string_view key) const;
  Status add(const void* tensor, size_t value_index);
  Status check_keys_present() const;

  const executorch::runtime::NamedDataMap* outer_;
  std::string at_;
  std::vector<Entry> entries_;  // spans point into the engine's program, which outlives this map
  uint64_t bytes_ = 0;
  mutable std::optional<Failure> refusal_;
};

}  // namespace trtx::engine
