// Compile specs the toolchain owns, and budget resolution (docs/file-format.md,
// docs/runtime-contracts.md): malformed values are invalid programs, never silent defaults.
#include "trtx/backend/compile_specs.h"

#include <string>
#include <vector>

#include "support/check.h"
#include "trtx/backend/backend.h"
#include "trtx/runtime/byte_count.h"

using trtx::Error;
using trtx::backend::CompileSpecView;
using trtx::backend::parse_budget_bytes;
using trtx::backend::parse_trt_compile_specs;
using trtx::backend::resolve_budget;

namespace {
std::vector<CompileSpecView> specs(std::vector<std::pair<std::string, std::string>>& storage) {
  std::vector<CompileSpecView> v;
  for (auto& kv : storage) v.push_back(CompileSpecView{kv.first, kv.second});
  return v;
}
}  // namespace

TEST(budget_accepts_decimal_bytes_below_2_63) {
  CHECK(parse_budget_bytes("0", "b").ok() && *parse_budget_bytes("0", "b") == 0);
  CHECK(*parse_budget_bytes("8589934592", "b") == 8589934592ull);
  CHECK(*parse_budget_bytes("9223372036854775807", "b") == 9223372036854775807ull);
  CHECK(*parse_budget_bytes("007", "b") == 7);
  // std::from_chars reads a minus sign into int64; zero is not negative.
  CHECK(parse_budget_bytes("-0", "b").ok() && *parse_budget_bytes("-0", "b") == 0);
  CHECK(parse_budget_bytes("-000", "b").ok() && *parse_budget_bytes("-000", "b") == 0);
}

TEST(budget_refuses_everything_else) {
  const std::string bad[] = {"",
                             "-1",
                             "-",
                             "--0",
                             "+1",
                             " 1",
                             "1 ",
                             "8GiB",
                             "1e9",
                             "0x10",
                             "9223372036854775808",
                             "99999999999999999999999",
                             std::string("12\0", 3),
                             "1.5"};
  for (const auto& b : bad) CHECK_ERR(parse_budget_bytes(b, "b"), Error::CompileSpecInvalid);
}

// --max-planned-bytes shares the budget's digit rules, but its refusals are
// usage errors that name the option, not a compile spec's "budget".
TEST(a_byte_count_option_shares_the_digit_rules_and_names_itself) {
  CHECK(*trtx::parse_byte_count_option("4096", "--max-planned-bytes") == 4096);
  CHECK(*trtx::parse_byte_count_option("-0", "--max-planned-bytes") == 0);
  for (const char* b : {"", "-", "-1", "+1", "12G", "1e9", "9223372036854775808"}) {
    auto r = trtx::parse_byte_count_option(b, "--max-planned-bytes");
    CHECK_ERR(r, Error::InvalidArgument);
    if (r.ok()) continue;
    CHECK_EQ(r.failure().location, std::string("--max-planned-bytes"));
    CHECK(r.failure().message.rfind("--max-planned-bytes", 0) == 0);
    CHECK(r.failure().message.find("budget") == std::string::npos);
  }
  auto r = trtx::parse_byte_count_option("12G", "--max-planned-bytes");
  if (!r.ok()) {
    CHECK_EQ(r.failure().message, std::string("--max-planned-bytes '12G' is not decimal bytes (digits only: no '+', "
                                              "space, unit or NUL)"));
  }
  auto b = parse_budget_bytes("12G", "w");
  if (!b.ok()) CHECK(b.failure().message.rfind("budget '12G'", 0) == 0);
}

TEST(reads_the_three_owned_keys_and_ignores_others) {
  std::vector<std::pair<std::string, std::string>> s = {{"target_device", "cuda:3"},
                                                        {"weight_streaming_budget", "1024"},
                                                        {"zero_copy_kv", R"(["k_out","v_out"])"},
                                                        {"some_other_backend_key", "\xff"}};
  auto r = parse_trt_compile_specs(specs(s), "d");
  CHECK_OK(r);
  if (!r.ok()) return;
  CHECK(r->target_device.has_value() && *r->target_device == 3);
  CHECK(r->budget.has_value() && *r->budget == 1024);
  CHECK(r->zero_copy_kv.has_value() && r->zero_copy_kv->size() == 2 && (*r->zero_copy_kv)[1] == "v_out");
}

TEST(absent_keys_stay_absent) {
  std::vector<std::pair<std::string, std::string>> s;
  auto r = parse_trt_compile_specs(specs(s), "d");
  CHECK_OK(r);
  if (r.ok()) CHECK(!r->budget.has_value() && !r->target_device.has_value() && !r->zero_copy_kv.has_value());
}

TEST(refuses_malformed_and_repeated_specs) {
  const std::vector<std::vector<std::pair<std::string, std::string>>> bad = {
      {{"weight_streaming_budget", "auto"}},
      {{"weight_streaming_budget", ""}},
      {{"weight_streaming_budget", "1"}, {"weight_streaming_budget", "1"}},
      {{"target_device", "cuda:"}},
      {{"target_device", "cuda:-1"}},
      {{"target_device", "gpu:0"}},
      {{"target_device", "cuda :0"}},
      {{"target_device", "cuda:0:1"}},
      {{"target_device", "cuda:1__0"}},
      {{"target_device", "cuda:128"}},
      {{"target_device", "cuda:999"}},
      {{"zero_copy_kv", R"(["a"])"}, {"zero_copy_kv", R"(["b"])"}},
      {{"zero_copy_kv", "k_out"}},
      {{"zero_copy_kv", "[]"}},
      {{"zero_copy_kv", "[1]"}},
      {{"zero_copy_kv", R"(["a","a"])"}},
      {{"zero_copy_kv", R"([""])"}},
  };
  for (auto s : bad) CHECK_ERR(parse_trt_compile_specs(specs(s), "d"), Error::CompileSpecInvalid);
}

TEST(a_repeated_zero_copy_kv_name_is_shown_escaped) {
  // The name comes from the file: a terminal control byte in it is shown, never sent.
  std::vector<std::pair<std::string, std::string>> s = {{"zero_copy_kv", R"(["k\u001b[2J","k\u001b[2J"])"}};
  auto r = parse_trt_compile_specs(specs(s), "d");
  CHECK_ERR(r, Error::CompileSpecInvalid);
  if (!r.ok()) CHECK_EQ(r.failure().message, std::string("zero_copy_kv names 'k\\x1b[2J' twice"));
}

TEST(reads_target_device_as_executorch_does) {
  // exir/passes/propagate_device_pass.py _parse_device_spec_value: strip,
  // lower-case, int() the index; no index means 0.
  const std::pair<std::string, int> good[] = {{"cuda", 0},    {"CUDA:0", 0},    {" cuda:0", 0}, {"cuda:0\n", 0},
                                              {"cuda: 1", 1}, {"cuda:+1", 1},   {"cuda:01", 1}, {"cuda:1_0", 10},
                                              {"cuda:-0", 0}, {"cuda:127", 127}};
  for (const auto& g : good) {
    std::vector<std::pair<std::string, std::string>> s = {{"target_device", g.first}};
    auto r = parse_trt_compile_specs(specs(s), "d");
    CHECK_OK(r);
    if (r.ok()) CHECK(r->target_device.has_value() && *r->target_device == g.second);
  }
  std::vector<std::pair<std::string, std::string>> cpu = {{"target_device", "cpu"}};
  auto r = parse_trt_compile_specs(specs(cpu), "d");
  CHECK_OK(r);
  if (r.ok()) CHECK(!r->target_device.has_value());
}

TEST(a_repeated_key_other_than_the_budget_keeps_the_first) {
  std::vector<std::pair<std::string, std::string>> s = {{"target_device", "cuda:1"},
                                                        {"target_device", "cuda:0"},
                                                        {"zero_copy_kv", R"(["o"])"},
                                                        {"zero_copy_kv", R"(["o"])"}};
  auto r = parse_trt_compile_specs(specs(s), "d");
  CHECK_OK(r);
  if (r.ok()) CHECK(*r->target_device == 1 && r->zero_copy_kv->size() == 1);
}

TEST(budget_resolution_prefers_option_then_spec_then_automatic) {
  auto opt = resolve_budget(100, 200, true, 1000);
  CHECK_EQ(opt.source, std::string("option"));
  CHECK(opt.requested == 100ull && opt.effective == 100ull && !opt.clamped && opt.ignored.empty());
  auto spec = resolve_budget(std::nullopt, 200, true, 1000);
  CHECK_EQ(spec.source, std::string("spec"));
  CHECK(spec.effective == 200ull);
  auto automatic = resolve_budget(std::nullopt, std::nullopt, true, 1000);
  CHECK_EQ(automatic.source, std::string("automatic"));
  CHECK(!automatic.requested.has_value() && automatic.effective == 1000ull);
}

TEST(budget_is_clamped_to_the_streamable_size) {
  auto r = resolve_budget(5000, std::nullopt, true, 1000);
  CHECK(r.clamped && r.requested == 5000ull && r.effective == 1000ull);
  auto exact = resolve_budget(1000, std::nullopt, true, 1000);
  CHECK(!exact.clamped && exact.effective == 1000ull);
}

TEST(an_engine_without_streaming_ignores_a_budget_and_says_why) {
  auto r = resolve_budget(std::nullopt, 200, false, 0);
  CHECK(!r.effective.has_value());
  CHECK(r.ignored.find("not built with weight streaming") != std::string::npos);
  auto none = resolve_budget(std::nullopt, std::nullopt, false, 0);
  CHECK(none.ignored.empty() && !none.effective.has_value());
}

int main() { return trtx::test::run_all(); }
