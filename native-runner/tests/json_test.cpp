// The strict JSON reader: what it accepts, what it refuses, and that hostile
// text (deep nesting, bad UTF-8, huge numbers) is an error, never a crash.
#include "trtx/runtime/json.h"

#include <string>

#include "support/check.h"

using trtx::json::parse;
using trtx::json::Type;

namespace {
bool accepts(const std::string& s) { return parse(s).ok(); }
}  // namespace

TEST(accepts_documents_of_every_type) {
  auto v = parse(R"( {"a": [1, -2, 3.5, 1e3, true, false, null, "x"], "b": {}} )");
  CHECK_OK(v);
  if (!v.ok()) return;
  const auto* a = v->find("a");
  CHECK(a != nullptr && a->is(Type::Array) && a->array.size() == 8);
  CHECK(a->array[0].is_integer && a->array[0].int_ok && a->array[0].integer == 1);
  CHECK(a->array[1].integer == -2);
  CHECK(!a->array[2].is_integer && a->array[2].number == 3.5);
  CHECK(!a->array[3].is_integer && a->array[3].number == 1000.0);
  CHECK(a->array[4].is(Type::Bool) && a->array[4].boolean);
  CHECK(a->array[6].is(Type::Null));
  CHECK(a->array[7].string == "x");
  CHECK(v->find("b")->is(Type::Object));
  CHECK(v->find("missing") == nullptr);
}

TEST(decodes_escapes_and_surrogate_pairs) {
  auto v = parse(R"("a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\ud83d\ude00")");
  CHECK_OK(v);
  if (!v.ok()) return;
  CHECK_EQ(v->string, std::string("a\"b\\c/d\b\f\n\r\tA\xc3\xa9\xf0\x9f\x98\x80"));
}

TEST(keeps_a_nul_from_an_escape) {
  auto v = parse(R"("x\u0000y")");
  CHECK_OK(v);
  if (v.ok()) CHECK_EQ(v->string, std::string("x\0y", 3));
}

TEST(int64_limits_are_exact) {
  auto hi = parse("9223372036854775807");
  auto lo = parse("-9223372036854775808");
  auto over = parse("9223372036854775808");
  CHECK(hi.ok() && hi->int_ok && hi->integer == INT64_MAX);
  CHECK(lo.ok() && lo->int_ok && lo->integer == INT64_MIN);
  CHECK(over.ok() && over->is_integer && !over->int_ok);
}

TEST(refuses_what_rfc8259_refuses) {
  const char* bad[] = {
      "",         " ",       "{",         "[1,]",        "{\"a\":1,}",  "01",
      "-",        "1.",      ".5",        "1e",          "+1",          "NaN",
      "Infinity", "nul",     "tru",       "'a'",         "[1 2]",       "{\"a\" 1}",
      "{a:1}",    "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"a",
      "[1]x",     "// c\n1", "/* c */ 1", "\"\t\"",      "\"\x01\"",    "{\"a\":1 \"b\":2}",
  };
  for (const char* s : bad) {
    if (accepts(s)) trtx::test::report_failure(__FILE__, __LINE__, std::string("accepted: ") + s);
  }
}

TEST(refuses_invalid_utf8) {
  const std::string bad[] = {
      "\"\xff\"",              // invalid lead byte
      "\"\xc3\"",              // truncated
      "\"\xc0\xaf\"",          // overlong
      "\"\xed\xa0\x80\"",      // encoded surrogate
      "\"\xf4\x90\x80\x80\"",  // beyond U+10FFFF
      "\"\xe2\x28\xa1\"",      // bad continuation
  };
  for (const auto& s : bad) CHECK(!accepts(s));
  CHECK(accepts("\"\xe2\x82\xac\""));  // euro sign
}

TEST(refuses_duplicate_keys) {
  auto v = parse(R"({"a":1,"a":2})");
  CHECK(!v.ok());
  if (!v.ok()) CHECK(v.failure().message.find("duplicate key") != std::string::npos);
}

TEST(bounds_nesting_depth) {
  std::string deep(100000, '[');
  CHECK(!accepts(deep));
  std::string ok_depth = std::string(60, '[') + std::string(60, ']');
  CHECK(accepts(ok_depth));
  trtx::json::Limits tight;
  tight.max_depth = 3;
  CHECK(parse("[[[1]]]", tight).ok());
  CHECK(!parse("[[[[1]]]]", tight).ok());
}

TEST(reports_the_byte_offset) {
  auto v = parse("[1, 2, x]");
  CHECK(!v.ok());
  if (!v.ok()) CHECK_EQ(v.failure().location, std::string("byte 7"));
}

TEST(quoting_keeps_reports_valid_json) {
  std::string out;
  trtx::json::append_quoted(out, std::string("a\"\\\n\x01\xff\xc3\xa9", 8));
  CHECK_EQ(out, std::string("\"a\\\"\\\\\\n\\u0001\\ufffd\xc3\xa9\""));
  CHECK(accepts(out));
}

int main() { return trtx::test::run_all(); }
