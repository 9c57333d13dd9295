#include "trtx/backend/compile_specs.h"

#include <map>
#include <set>

#include "trtx/runtime/byte_count.h"
#include "trtx/runtime/json.h"

namespace trtx::backend {

// The digit rules are the runtime's byte counts (trtx/runtime/byte_count.h).
Result<uint64_t> parse_budget_bytes(std::string_view text, const std::string& where) {
  uint64_t v = 0;
  const ByteCountProblem p = read_byte_count(text, v);
  if (p != ByteCountProblem::None) return fail(Error::CompileSpecInvalid, where, byte_count_message(p, "budget", text));
  return v;
}

namespace {

// ExecuTorch's reading (exir/passes/propagate_device_pass.py,
// _parse_device_spec_value): strip, lower-case, split at the first ':', int()
// the rest, type cpu or cuda. Refused beyond it: a negative index (the device
// allocator fails on it), one past a signed byte (program.fbs device_index),
// and anything non-ASCII. Returns false with `why` set when refused.
bool is_py_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

std::string_view py_strip(std::string_view v) {
  while (!v.empty() && is_py_space(v.front())) v.remove_prefix(1);
  while (!v.empty() && is_py_space(v.back())) v.remove_suffix(1);
  return v;
}

bool read_target_device(std::string_view raw, bool& is_cuda, int& index, std::string& why) {
  if (raw.size() > 64) return why = "is too long for a device", false;
  for (char c : raw) {
    if (static_cast<unsigned char>(c) >= 0x80) return why = "is not ASCII", false;
  }
  std::string text(py_strip(raw));
  for (char& c : text) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  const size_t colon = text.find(':');
  const std::string type = colon == std::string::npos ? text : text.substr(0, colon);
  if (type != "cuda" && type != "cpu") return why = "does not name cpu or cuda", false;
  is_cuda = type == "cuda";
  index = 0;
  if (colon == std::string::npos) return true;
  std::string_view num = py_strip(std::string_view(text).substr(colon + 1));
  bool neg = false;
  if (!num.empty() && (num[0] == '+' || num[0] == '-')) {
    neg = num[0] == '-';
    num.remove_prefix(1);
  }
  // Python int(): digits with single underscores between them.
  long long n = 0;
  bool last_digit = false;
  for (char c : num) {
    if (c == '_' && last_digit) {
      last_digit = false;
      continue;
    }
    if (c < '0' || c > '9') return why = "has an index that is not a whole number", false;
    last_digit = true;
    n = n * 10 + (c - '0');
    if (n > 1000) n = 1000;  // only whether it fits a signed byte matters
  }
  if (!last_digit) return why = "has an index that is not a whole number", false;
  if (neg && n != 0) return why = "has a negative index", false;
  if (n > 127) return why = "has an index past 127 (program.fbs device_index is a signed byte)", false;
  index = static_cast<int>(n);
  return true;
}

}  // namespace

// A repeated key is read as its readers read it: the first entry wins
// (ExecuTorch stops at the first target_device; Torch-TensorRT reads no key
// but the budget), except a repeated budget, which Torch-TensorRT refuses at
// init, and zero_copy_kv repeated with another value, which no reader settles.
Result<TrtCompileSpecs> parse_trt_compile_specs(const std::vector<CompileSpecView>& specs, const std::string& where) {
  TrtCompileSpecs out;
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& s = specs[i];
    std::string at = where + ".compile_specs[" + std::to_string(i) + "]";
    bool owned = s.key == "target_device" || s.key == "weight_streaming_budget" || s.key == "zero_copy_kv";
    if (!owned) continue;
    auto seen = first.find(s.key);
    if (seen != first.end()) {
      if (s.key == "weight_streaming_budget") {
        return fail(Error::CompileSpecInvalid, at,
                    "weight_streaming_budget appears more than once (Torch-TensorRT refuses it)");
      }
      if (s.key == "zero_copy_kv" && s.value != specs[seen->second].value) {
        return fail(Error::CompileSpecInvalid, at, "zero_copy_kv appears twice with different values");
      }
      continue;  // the first one wins
    }
    first.emplace(s.key, i);
    if (s.key == "weight_streaming_budget") {
      TRTX_ASSIGN_OR_RETURN(uint64_t b, parse_budget_bytes(s.value, at + "(weight_streaming_budget)"));
      out.budget = b;
    } else if (s.key == "target_device") {
      bool is_cuda = false;
      int n = 0;
      std::string why;
      if (!read_target_device(s.value, is_cuda, n, why)) {
        return fail(Error::CompileSpecInvalid, at + "(target_device)",
                    "target_device '" + shown_value(s.value) + "' " + why);
      }
      // A cpu target places the tensors on the host; the engine still runs on
      // the blob's device_id, as Torch-TensorRT's runtime always does.
      if (is_cuda) out.target_device = n;
    } else {
      auto parsed = json::parse(s.value);
      if (!parsed.ok() || !parsed->is(json::Type::Array)) {
        return fail(Error::CompileSpecInvalid, at + "(zero_copy_kv)",
                    "zero_copy_kv is not a JSON list of output binding names");
      }
      std::vector<std::string> names;
      std::set<std::string> unique;
      for (const auto& e : parsed->array) {
        if (!e.is(json::Type::String) || e.string.empty()) {
          return fail(Error::CompileSpecInvalid, at + "(zero_copy_kv)",
                      "zero_copy_kv holds something other than a name");
        }
        // No binding name holds a NUL (TRT_BINDING_NAME_NUL), so such an
        // entry names nothing; decodeCompileSpecs refuses it too.
        if (e.string.find('\0') != std::string::npos) {
          return fail(Error::CompileSpecInvalid, at + "(zero_copy_kv)",
                      "zero_copy_kv names '" + shown_value(e.string) + "', which contains a NUL character");
        }
        if (!unique.insert(e.string).second) {
          return fail(Error::CompileSpecInvalid, at + "(zero_copy_kv)",
                      "zero_copy_kv names '" + shown_value(e.string) + "' twice");
        }
        names.push_back(e.string);
      }
      if (names.empty()) {
        return fail(Error::CompileSpecInvalid, at + "(zero_copy_kv)",
                    "zero_copy_kv is empty; it is stamped only on a delegate whose aliased outputs were elided");
      }
      out.zero_copy_kv = std::move(names);
    }
  }
  return out;
}

}  // namespace trtx::backend
