// Element types of the ET12 schema (ScalarType codes) and the dtype strings
// the TensorRT blob metadata uses for its bindings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trtx {

// Values are the schema's ScalarType codes.
enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  Bool = 11,
  QInt8 = 12,
  QUInt8 = 13,
  QInt32 = 14,
  BFloat16 = 15,
  QUInt4x2 = 16,
  QUInt2x4 = 17,
  Bits16 = 22,
  Float8_e5m2 = 23,
  Float8_e4m3fn = 24,
  Float8_e5m2fnuz = 25,
  Float8_e4m3fnuz = 26,
  UInt16 = 27,
  UInt32 = 28,
  UInt64 = 29,
};

/// Bytes per element; 0 for a code the schema does not define.
size_t element_size(int8_t code);
inline size_t element_size(ScalarType t) { return element_size(static_cast<int8_t>(t)); }

/// Short name as the report writes it ("float32", "int64", ...).
const char* scalar_type_name(ScalarType t);

/// The blob metadata's dtype string for a type; false when it has none.
bool scalar_type_from_dtype(std::string_view dtype, ScalarType& out);

inline bool is_floating(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Half || t == ScalarType::BFloat16;
}
inline bool is_index_integer(ScalarType t) { return t == ScalarType::Long || t == ScalarType::Int; }

}  // namespace trtx
