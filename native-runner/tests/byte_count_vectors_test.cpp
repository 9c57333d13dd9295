// The size vectors shared with the TypeScript and Python readers
// (test/vectors/sizes.json; test/sizes-vectors.test.ts,
// python-bridge/tests/test_size_vectors.py): read_byte_count judges each
// vector's text as its `byte_count` outcome says, problem for problem. The
// runner reads only this grammar (compile specs, --budget,
// --max-planned-bytes); `size` (8GiB) is the trtx CLI's, converted to decimal
// bytes before anything reaches the runner, and `request` is the bridge's.
#include <cstdio>
#include <string>

#include "support/check.h"
#include "support/shared_vectors.h"
#include "trtx/runtime/byte_count.h"
#include "trtx/runtime/json.h"

namespace json = trtx::json;
using trtx::ByteCountProblem;

namespace {

const char* g_path = nullptr;

// The vectors' names for the problems (src/util/byte-count.ts ByteCountProblem).
std::string problem_name(ByteCountProblem p) {
  switch (p) {
    case ByteCountProblem::None:
      return "none";
    case ByteCountProblem::Empty:
      return "empty";
    case ByteCountProblem::NoDigits:
      return "no_digits";
    case ByteCountProblem::NotDigits:
      return "not_digits";
    case ByteCountProblem::TooLarge:
      return "range";
    case ByteCountProblem::Negative:
      return "negative";
  }
  return "?";
}

std::string string_at(const json::Value& v, const char* key) {
  const json::Value* s = v.find(key);
  return s != nullptr && s->is(json::Type::String) ? s->string : std::string("?");
}

}  // namespace

TEST(every_shared_vector_is_read_as_the_other_readers_read_it) {
  json::Value doc;
  const json::Value* vectors = trtx::test::shared_vectors(g_path, doc, 40);
  if (vectors == nullptr) return;
  int accepted = 0;
  for (const json::Value& v : vectors->array) {
    const std::string name = string_at(v, "name");
    const std::string text = string_at(v, "text");
    const json::Value* want = v.find("byte_count");
    if (want == nullptr) {
      trtx::test::report_failure(__FILE__, __LINE__, name + ": no byte_count outcome");
      continue;
    }
    uint64_t value = 0;
    const ByteCountProblem p = trtx::read_byte_count(text, value);
    const std::string got =
        p == ByteCountProblem::None ? "bytes " + std::to_string(value) : "refused " + problem_name(p);
    const std::string expected = want->find("bytes") != nullptr ? "bytes " + string_at(*want, "bytes")
                                                                : "refused " + string_at(*want, "refused");
    if (got != expected)
      trtx::test::report_failure(__FILE__, __LINE__, name + ": " + got + ", the vector says " + expected);
    if (p == ByteCountProblem::None) ++accepted;
  }
  CHECK(accepted > 3);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: byte_count_vectors_test VECTORS.json\n");
    return 2;
  }
  g_path = argv[1];
  return trtx::test::run_all();
}
