// A small strict JSON reader (RFC 8259) for the TensorRT blob metadata and the
// compile-spec values. Strict means: no comments, no trailing commas, no
// leading zeros, no NaN/Infinity, no unescaped control characters, valid
// UTF-8 only, paired surrogates only, duplicate object keys refused, a
// bounded nesting depth so hostile input cannot exhaust the stack, and a
// bounded count of values so it cannot exhaust memory (each costs a Value).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trtx/runtime/result.h"

namespace trtx::json {

enum class Type : uint8_t { Null, Bool, Number, String, Array, Object };

struct Value {
  Type type = Type::Null;
  bool boolean = false;
  // Numbers keep their text; `is_integer` when it has no fraction or
  // exponent, and then `int_ok`/`integer` when it fits in int64.
  std::string text;
  double number = 0.0;
  bool is_integer = false;
  bool int_ok = false;
  int64_t integer = 0;
  // Strings are decoded; they may contain NUL (from \u0000).
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;  // in document order

  /// Member lookup; nullptr when absent or when this is not an object.
  const Value* find(std::string_view key) const;
  bool is(Type t) const { return type == t; }
};

struct Limits {
  size_t max_depth = 64;
  size_t max_bytes = 64u << 20;
  /// Values (of any type, containers included) in the whole document.
  size_t max_values = 1000000;
};

/// Parses one JSON document (surrounding whitespace allowed). On failure the
/// Failure's location is "byte N" within `text`, code InvalidArgument.
Result<Value> parse(std::string_view text, const Limits& limits = Limits());

/// Appends `s` to `out` as a JSON string literal (quotes included).
void append_quoted(std::string& out, std::string_view s);

}  // namespace trtx::json
