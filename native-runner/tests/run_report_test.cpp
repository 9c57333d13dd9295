// The run report's per-step and per-engine numbers (src/cli/run_report.cpp,
// schemas/runner-report.schema.json): step_time_us (each step and the
// median), program_copies (the copy kernels' staging) apart from the
// delegates' own staging and from engine_stand_in_bytes (what a stand-in
// engine moves inside its enqueue), and the budget's resident and streamed
// bytes per execute. Each field is read back from the rendered JSON.
#include "run_report.h"

#include <string>

#include "support/check.h"
#include "trtx/backend/backend.h"
#include "trtx/runtime/json.h"

using trtx::backend::resolve_budget;
using trtx::cli::Report;
using trtx::cli::StepRecord;
namespace json = trtx::json;

namespace {

const json::Value* field(const json::Value& v, std::initializer_list<const char*> path) {
  const json::Value* cur = &v;
  for (const char* key : path) {
    cur = cur == nullptr ? nullptr : cur->find(key);
  }
  return cur;
}

uint64_t count_at(const json::Value& v, std::initializer_list<const char*> path) {
  const json::Value* f = field(v, path);
  CHECK(f != nullptr && f->is(json::Type::Number) && f->int_ok);
  return f != nullptr && f->int_ok ? static_cast<uint64_t>(f->integer) : ~uint64_t{0};
}

std::string string_at(const json::Value& v, std::initializer_list<const char*> path) {
  const json::Value* f = field(v, path);
  CHECK(f != nullptr && f->is(json::Type::String));
  return f != nullptr ? f->string : "";
}

double number_at(const json::Value& v, std::initializer_list<const char*> path) {
  const json::Value* f = field(v, path);
  CHECK(f != nullptr && f->is(json::Type::Number));
  return f != nullptr ? f->number : -1.0;
}

// One method, one delegate (a streaming engine of 1000 weight bytes under a
// 300-byte budget), three steps whose traffic is made up so every counter
// differs from the others.
Report sample_report() {
  Report r;
  trtx::cli::MethodRecord m;
  m.name = "forward";
  trtx::backend::DelegateInfo d;
  d.backend_id = "TensorRTBackend";
  d.engine = "reference-program";
  d.budget = resolve_budget(300, std::nullopt, true, 1000);
  d.copies = {40, 50, 0};
  d.engine_stand_in = {24, 48, 0};
  m.delegates.push_back(d);
  const double times[] = {30.0, 10.0, 20.0, 50.0};
  for (int s = 0; s < 4; ++s) {
    StepRecord step;
    step.step = s;
    step.step_us = times[s];
    step.copies = {110, 220, 0};
    step.program_copies = {100, 200, 0};
    step.engine_stand_in = {6, 12, 0};
    trtx::cli::DelegateStep ds;
    ds.copies = {10, 20, 0};
    ds.engine_stand_in = {6, 12, 0};
    step.delegates.push_back(ds);
    m.steps.push_back(step);
  }
  r.methods.push_back(m);
  return r;
}

}  // namespace

TEST(the_budget_says_what_stays_resident_and_what_streams) {
  auto partial = resolve_budget(300, std::nullopt, true, 1000);
  CHECK_EQ(partial.resident_bytes, uint64_t{300});
  CHECK_EQ(partial.streamed_bytes_per_execute, uint64_t{700});
  auto covered = resolve_budget(std::nullopt, 5000, true, 1000);  // clamped
  CHECK_EQ(covered.resident_bytes, uint64_t{1000});
  CHECK_EQ(covered.streamed_bytes_per_execute, uint64_t{0});
  auto automatic = resolve_budget(std::nullopt, std::nullopt, true, 1000);
  CHECK_EQ(automatic.resident_bytes, uint64_t{1000});
  CHECK_EQ(automatic.streamed_bytes_per_execute, uint64_t{0});
  auto zero = resolve_budget(0, std::nullopt, true, 1000);
  CHECK_EQ(zero.resident_bytes, uint64_t{0});
  CHECK_EQ(zero.streamed_bytes_per_execute, uint64_t{1000});
  auto not_streaming = resolve_budget(10, std::nullopt, false, 1000);  // ignored: everything stays
  CHECK_EQ(not_streaming.resident_bytes, uint64_t{1000});
  CHECK_EQ(not_streaming.streamed_bytes_per_execute, uint64_t{0});
}

TEST(the_report_separates_program_staging_from_the_stand_in_engine) {
  const std::string text = trtx::cli::render_report(sample_report(), trtx::cli::RunOptions{}, 0, nullptr);
  auto doc = json::parse(text);
  CHECK_OK(doc);
  if (!doc.ok()) return;
  const json::Value* methods = doc->find("methods");
  CHECK(methods != nullptr && methods->array.size() == 1);
  if (methods == nullptr || methods->array.size() != 1) return;
  const json::Value& m = methods->array[0];
  // Wall time: each step in order, and the median of an even count.
  const json::Value* each = field(m, {"step_time_us", "each"});
  CHECK(each != nullptr && each->array.size() == 4);
  if (each != nullptr && each->array.size() == 4) CHECK_EQ(each->array[1].number, 10.0);
  CHECK_EQ(count_at(m, {"step_time_us", "count"}), uint64_t{4});
  CHECK_EQ(number_at(m, {"step_time_us", "median"}), 25.0);
  CHECK_EQ(number_at(m, {"step_time_us", "min"}), 10.0);
  CHECK_EQ(number_at(m, {"step_time_us", "max"}), 50.0);
  // Per step: all staging (unchanged), the kernels' part, the stand-in apart.
  const json::Value& step = m.find("steps")->array[2];
  CHECK_EQ(count_at(step, {"h2d_bytes"}), uint64_t{110});
  CHECK_EQ(count_at(step, {"program_copies", "h2d_bytes"}), uint64_t{100});
  CHECK_EQ(count_at(step, {"program_copies", "d2h_bytes"}), uint64_t{200});
  CHECK_EQ(count_at(step, {"engine_stand_in_bytes", "h2d_bytes"}), uint64_t{6});
  CHECK_EQ(count_at(step, {"engine_stand_in_bytes", "d2h_bytes"}), uint64_t{12});
  const json::Value& ds = step.find("delegates")->array[0];
  CHECK_EQ(count_at(ds, {"h2d_bytes"}), uint64_t{10});
  CHECK_EQ(count_at(ds, {"engine_stand_in_bytes", "d2h_bytes"}), uint64_t{12});
  // Per delegate: totals, and the budget per execute.
  const json::Value& d = m.find("delegates")->array[0];
  CHECK_EQ(count_at(d, {"engine_stand_in_bytes", "h2d_bytes"}), uint64_t{24});
  CHECK_EQ(count_at(d, {"h2d_bytes"}), uint64_t{40});
  CHECK_EQ(string_at(d, {"budget", "streamable_bytes"}), std::string("1000"));
  CHECK_EQ(string_at(d, {"budget", "effective"}), std::string("300"));
  CHECK_EQ(string_at(d, {"budget", "resident_bytes"}), std::string("300"));
  CHECK_EQ(string_at(d, {"budget", "streamed_bytes_per_execute"}), std::string("700"));
}

TEST(a_delegate_step_is_the_difference_of_its_counters) {
  trtx::backend::DelegateInfo before, now;
  before.engine_stand_in = {8, 16, 0};
  now.engine_stand_in = {24, 48, 0};
  auto ds = trtx::cli::delegate_step(0, now, &before);
  CHECK_EQ(ds.engine_stand_in.h2d_bytes, uint64_t{16});
  CHECK_EQ(ds.engine_stand_in.d2h_bytes, uint64_t{32});
  auto first = trtx::cli::delegate_step(0, now, nullptr);
  CHECK_EQ(first.engine_stand_in.d2h_bytes, uint64_t{48});
}

TEST(no_completed_step_gives_null_times) {
  Report r;
  r.methods.emplace_back();
  r.methods[0].name = "forward";
  auto doc = json::parse(trtx::cli::render_report(r, trtx::cli::RunOptions{}, 1, nullptr));
  CHECK_OK(doc);
  if (!doc.ok()) return;
  const json::Value* median = field(doc->find("methods")->array[0], {"step_time_us", "median"});
  CHECK(median != nullptr && median->is(json::Type::Null));
}

int main() { return trtx::test::run_all(); }
