// Runtime values of a method, in ExecuTorch's terms: an EValue per entry of
// ExecutionPlan.values, tensors backed by planned arena memory, constants
// or (for unplanned inputs) memory the caller provides.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trtx/runtime/device.h"
#include "trtx/runtime/scalar_type.h"

namespace trtx::executor {

struct TensorImpl {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
  uint64_t numel = 0;
  uint64_t nbytes = 0;
  void* data = nullptr;
  runtime::Placement placement = runtime::Placement::Host;
  int device_index = 0;
  int arena = -1;          // memory_id of its planned arena, -1 when unplanned
  uint64_t arena_offset = 0;
  bool constant = false;   // backed by program constant data: never written
  std::string fqn;         // extra_tensor_info.fully_qualified_name
  int value_index = -1;
};

enum class Tag : uint8_t {
  None,
  Int,
  Bool,
  Double,
  Tensor,
  String,
  IntList,
  DoubleList,
  BoolList,
  TensorList,
  OptionalTensorList,
};

const char* tag_name(Tag t);

struct EValue {
  Tag tag = Tag::None;
  int64_t int_value = 0;
  double double_value = 0.0;
  bool bool_value = false;
  TensorImpl* tensor = nullptr;
  std::string string_value;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<uint8_t> bools;
  std::vector<int32_t> items;  // value indices of a (optional) tensor list

  bool is_tensor() const { return tag == Tag::Tensor && tensor != nullptr; }
};

}  // namespace trtx::executor
