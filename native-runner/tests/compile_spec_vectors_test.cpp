// The compile-spec vectors shared with the TypeScript reader
// (test/vectors/compile-specs.json, read there by
// test/compile-specs-vectors.test.ts): parse_trt_compile_specs decodes what
// decodeCompileSpecs decodes and refuses what it refuses. The TypeScript
// refusal codes (SPEC_*) are all CompileSpecInvalid here; the TypeScript
// warnings have no counterpart (the runner reads, it does not advise), and a
// cpu target_device leaves target_device unset.
#include <cstdio>
#include <string>
#include <vector>

#include "support/check.h"
#include "support/shared_vectors.h"
#include "trtx/backend/compile_specs.h"
#include "trtx/runtime/json.h"

namespace json = trtx::json;
using trtx::Error;
using trtx::backend::CompileSpecView;

namespace {

const char* g_path = nullptr;

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

const json::Value* string_at(const json::Value& v, const char* key) {
  const json::Value* s = v.find(key);
  return s != nullptr && s->is(json::Type::String) ? s : nullptr;
}

void check_decoded(const std::string& name, const trtx::backend::TrtCompileSpecs& got, const json::Value& expect) {
  const json::Value* target = string_at(expect, "target");
  std::string want_target = target != nullptr && target->string.rfind("cuda:", 0) == 0 ? target->string.substr(5) : "";
  std::string got_target = got.target_device ? std::to_string(*got.target_device) : "";
  const json::Value* budget = string_at(expect, "budget");
  std::string got_budget = got.budget ? std::to_string(*got.budget) : "";
  std::vector<std::string> want_names;
  const json::Value* names = expect.find("zero_copy_kv");
  if (names != nullptr) {
    for (const auto& n : names->array) want_names.push_back(n.string);
  }
  const bool ok = got_target == want_target && got_budget == (budget != nullptr ? budget->string : "") &&
                  got.zero_copy_kv.has_value() == (names != nullptr) &&
                  (!got.zero_copy_kv || *got.zero_copy_kv == want_names);
  if (!ok) trtx::test::report_failure(__FILE__, __LINE__, name + ": decoded other values than the vector's");
}

}  // namespace

TEST(every_shared_vector_is_judged_as_the_typescript_reader_judges_it) {
  json::Value doc;
  const json::Value* vectors = trtx::test::shared_vectors(g_path, doc, 40);
  if (vectors == nullptr) return;
  for (const json::Value& v : vectors->array) {
    const std::string name = string_at(v, "name") != nullptr ? string_at(v, "name")->string : "?";
    std::vector<std::pair<std::string, std::string>> storage;
    for (const json::Value& s : v.find("specs")->array) {
      const json::Value* hex = string_at(s, "hex");
      storage.emplace_back(string_at(s, "key")->string,
                           hex != nullptr ? from_hex(hex->string) : string_at(s, "value")->string);
    }
    std::vector<CompileSpecView> specs;
    for (const auto& kv : storage) specs.push_back(CompileSpecView{kv.first, kv.second});
    auto r = trtx::backend::parse_trt_compile_specs(specs, "delegate");
    if (v.find("refused") != nullptr) {
      if (r.ok() || r.error() != Error::CompileSpecInvalid) {
        trtx::test::report_failure(__FILE__, __LINE__, name + ": expected CompileSpecInvalid");
      }
    } else if (!r.ok()) {
      trtx::test::report_failure(__FILE__, __LINE__, name + ": refused (" + r.failure().message + ")");
    } else {
      check_decoded(name, *r, *v.find("expect"));
    }
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: compile_spec_vectors_test VECTORS.json\n");
    return 2;
  }
  g_path = argv[1];
  return trtx::test::run_all();
}
