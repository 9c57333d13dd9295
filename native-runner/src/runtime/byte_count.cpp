#include "trtx/runtime/byte_count.h"

#include <cstdio>

namespace trtx {

std::string shown_value(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, 40)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  if (v.size() > 40) out += "...";
  return out;
}

ByteCountProblem read_byte_count(std::string_view text, uint64_t& value) {
  if (text.empty()) return ByteCountProblem::Empty;
  const bool neg = text[0] == '-';
  std::string_view digits = neg ? text.substr(1) : text;
  if (digits.empty()) return ByteCountProblem::NoDigits;
  uint64_t v = 0;
  // The largest magnitude from_chars reads into int64: 2^63 - 1, or 2^63
  // after a '-' (INT64_MIN, which the runtime then refuses as negative, not
  // as out of range; test/vectors/sizes.json "int64_min").
  const uint64_t limit = neg ? uint64_t(1) << 63 : (uint64_t(1) << 63) - 1;
  for (char c : digits) {
    if (c < '0' || c > '9') return ByteCountProblem::NotDigits;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return ByteCountProblem::TooLarge;
    v = v * 10 + d;
  }
  if (neg && v != 0) return ByteCountProblem::Negative;
  value = v;
  return ByteCountProblem::None;
}

std::string byte_count_message(ByteCountProblem problem, std::string_view what, std::string_view text) {
  const std::string quoted = std::string(what) + " '" + shown_value(text) + "'";
  switch (problem) {
    case ByteCountProblem::None:
      return std::string(what) + " is a byte count";
    case ByteCountProblem::Empty:
      return std::string(what) + " is empty; expected decimal bytes";
    case ByteCountProblem::NoDigits:
      return quoted + " is not decimal bytes";
    case ByteCountProblem::NotDigits:
      return quoted + " is not decimal bytes (digits only: no '+', space, unit or NUL)";
    case ByteCountProblem::TooLarge:
      return quoted + " is not below 2^63";
    case ByteCountProblem::Negative:
      return quoted + " is negative";
  }
  return quoted + " is not decimal bytes";
}

Result<uint64_t> parse_byte_count_option(std::string_view text, const std::string& option) {
  uint64_t v = 0;
  const ByteCountProblem p = read_byte_count(text, v);
  if (p != ByteCountProblem::None) return fail(Error::InvalidArgument, option, byte_count_message(p, option, text));
  return v;
}

}  // namespace trtx
