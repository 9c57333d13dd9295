#include "trtx/backend/compile_specs.h"

#include <cstdio>
#include <set>

#include "trtx/runtime/json.h"

namespace trtx::backend {

namespace {
std::string shown(std::string_view v) {
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
}  // namespace

Result<uint64_t> parse_budget_bytes(std::string_view text, const std::string& where) {
  if (text.empty()) return fail(Error::CompileSpecInvalid, where, "budget is empty; expected decimal bytes");
  uint64_t v = 0;
  const uint64_t limit = uint64_t(1) << 63;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return fail(Error::CompileSpecInvalid, where,
                  "budget '" + shown(text) + "' is not decimal bytes (digits only: no sign, space, unit or NUL)");
    }
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (limit - 1 - d) / 10) {
      return fail(Error::CompileSpecInvalid, where, "budget '" + shown(text) + "' is not below 2^63");
    }
    v = v * 10 + d;
  }
  return v;
}

Result<TrtCompileSpecs> parse_trt_compile_specs(const std::vector<CompileSpecView>& specs, const std::string& where) {
  TrtCompileSpecs out;
  std::set<std::string> seen;
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& s = specs[i];
    std::string at = where + ".compile_specs[" + std::to_string(i) + "]";
    bool owned = s.key == "target_device" || s.key == "weight_streaming_budget" || s.key == "zero_copy_kv";
    if (!owned) continue;
    if (!seen.insert(s.key).second) {
      return fail(Error::CompileSpecInvalid, at, "compile spec '" + s.key + "' appears more than once");
    }
    if (s.key == "weight_streaming_budget") {
      TRTX_ASSIGN_OR_RETURN(uint64_t b, parse_budget_bytes(s.value, at + "(weight_streaming_budget)"));
      out.budget = b;
    } else if (s.key == "target_device") {
      std::string_view v = s.value;
      bool good = v.size() > 5 && v.substr(0, 5) == "cuda:" && v.size() <= 5 + 3;
      int n = 0;
      for (size_t k = 5; good && k < v.size(); ++k) {
        if (v[k] < '0' || v[k] > '9') {
          good = false;
        } else {
          n = n * 10 + (v[k] - '0');
        }
      }
      if (!good || n > 127) {
        return fail(Error::CompileSpecInvalid, at + "(target_device)",
                    "target_device '" + shown(v) + "' is not cuda:N with N a device index");
      }
      out.target_device = n;
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
          return fail(Error::CompileSpecInvalid, at + "(zero_copy_kv)", "zero_copy_kv holds something other than a name");
        }
        if (!unique.insert(e.string).second) {
          return fail(Error::CompileSpecInvalid, at + "(zero_copy_kv)", "zero_copy_kv names '" + e.string + "' twice");
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
