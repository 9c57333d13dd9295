#include "trtx/runtime/scalar_type.h"

namespace trtx {

size_t element_size(int8_t code) {
  switch (static_cast<ScalarType>(code)) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool:
    case ScalarType::QInt8:
    case ScalarType::QUInt8:
    case ScalarType::QUInt4x2:
    case ScalarType::QUInt2x4:
    case ScalarType::Float8_e5m2:
    case ScalarType::Float8_e4m3fn:
    case ScalarType::Float8_e5m2fnuz:
    case ScalarType::Float8_e4m3fnuz:
      return 1;
    case ScalarType::Short:
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Bits16:
    case ScalarType::UInt16:
      return 2;
    case ScalarType::Int:
    case ScalarType::Float:
    case ScalarType::QInt32:
    case ScalarType::UInt32:
      return 4;
    case ScalarType::Long:
    case ScalarType::Double:
    case ScalarType::UInt64:
      return 8;
  }
  return 0;
}

const char* scalar_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
      return "uint8";
    case ScalarType::Char:
      return "int8";
    case ScalarType::Short:
      return "int16";
    case ScalarType::Int:
      return "int32";
    case ScalarType::Long:
      return "int64";
    case ScalarType::Half:
      return "float16";
    case ScalarType::Float:
      return "float32";
    case ScalarType::Double:
      return "float64";
    case ScalarType::Bool:
      return "bool";
    case ScalarType::QInt8:
      return "qint8";
    case ScalarType::QUInt8:
      return "quint8";
    case ScalarType::QInt32:
      return "qint32";
    case ScalarType::BFloat16:
      return "bfloat16";
    case ScalarType::QUInt4x2:
      return "quint4x2";
    case ScalarType::QUInt2x4:
      return "quint2x4";
    case ScalarType::Bits16:
      return "bits16";
    case ScalarType::Float8_e5m2:
      return "float8_e5m2";
    case ScalarType::Float8_e4m3fn:
      return "float8_e4m3fn";
    case ScalarType::Float8_e5m2fnuz:
      return "float8_e5m2fnuz";
    case ScalarType::Float8_e4m3fnuz:
      return "float8_e4m3fnuz";
    case ScalarType::UInt16:
      return "uint16";
    case ScalarType::UInt32:
      return "uint32";
    case ScalarType::UInt64:
      return "uint64";
  }
  return "unknown";
}

bool scalar_type_from_dtype(std::string_view dtype, ScalarType& out) {
  struct Entry {
    std::string_view name;
    ScalarType type;
  };
  static constexpr Entry kEntries[] = {
      {"float32", ScalarType::Float},  {"float16", ScalarType::Half}, {"bfloat16", ScalarType::BFloat16},
      {"float64", ScalarType::Double}, {"int64", ScalarType::Long},   {"int32", ScalarType::Int},
      {"int16", ScalarType::Short},    {"int8", ScalarType::Char},    {"uint8", ScalarType::Byte},
      {"bool", ScalarType::Bool},
  };
  for (const auto& e : kEntries) {
    if (e.name == dtype) {
      out = e.type;
      return true;
    }
  }
  return false;
}

}  // namespace trtx
