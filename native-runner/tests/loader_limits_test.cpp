// The limits trtx's plugins put on hostile input, each met by an input just
// past it (and one at it): the metadata JSON reader (nesting depth, values,
// duplicate keys found without an n^2 scan), the blob parser that uses it,
// and the reference engine's parser (steps, caches per Attend). The
// runtime's own limits and the runner's loader limits (program size, planned
// memory, verification level) are tested through the binary:
// test/runner-limits.test.ts.
#include <string>
#include <vector>

#include "support/blob_builder.h"
#include "support/check.h"
#include "trtx/backend/tensorrt_blob.h"
#include "trtx/engine/standin_engine.h"
#include "trtx/runtime/json.h"

using trtx::Error;
using trtx::test::StandinEngineSpec;
using trtx::test::StandinStepSpec;

namespace {

/// `[0,0,...]` holding `n` zeros: n + 1 values.
std::string zeros(size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += i ? ",0" : "0";
  return s + "]";
}

std::string metadata_with(const std::string& extra) {
  return R"({"io_bindings":[{"name":"x","dtype":"float32","shape":[4],"is_input":true},)"
         R"({"name":"y","dtype":"float32","shape":[4],"is_input":false}],"extra":)" +
         extra + R"(,"hardware_compatible":false,"device_id":0})";
}

Error blob_code(const std::string& metadata) {
  auto blob = trtx::test::make_trt_blob("TR01", metadata, std::vector<uint8_t>(48, 0xAB));
  auto r = trtx::backend::parse_trt_blob(blob.data(), blob.size(), "blob");
  return r.ok() ? Error::Ok : r.error();
}

StandinEngineSpec affine_steps(size_t n) {
  StandinEngineSpec e;
  StandinStepSpec a;
  a.kind = StandinStepSpec::Kind::Affine;
  a.a = 0;
  a.b = 1;
  e.steps.assign(n, a);
  return e;
}

const std::vector<bool> kRoles = {true, false};

}  // namespace

TEST(json_counts_every_value_against_its_limit) {
  trtx::json::Limits limits;
  limits.max_values = 1000;
  CHECK_OK(trtx::json::parse(zeros(999), limits));  // 1000 values: the array and its zeros
  auto over = trtx::json::parse(zeros(1000), limits);
  CHECK(!over.ok());
  if (!over.ok()) CHECK(over.failure().message.find("more than 1000 values") != std::string::npos);
  // The default: a million values (about 150 MB of parsed values at most).
  CHECK_EQ(trtx::json::Limits().max_values, size_t(1000000));
  CHECK(!trtx::json::parse(zeros(1000000)).ok());
}

TEST(json_finds_a_duplicate_among_many_keys) {
  // 200,000 distinct keys: a pairwise comparison would make 2e10 string
  // compares; the set makes 2e5 (this case would not finish in ctest's time).
  std::string s = "{";
  for (int i = 0; i < 200000; ++i) s += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  CHECK_OK(trtx::json::parse(s + "}"));
  auto dup = trtx::json::parse(s + ",\"k7\":1}");
  CHECK(!dup.ok());
  if (!dup.ok()) CHECK(dup.failure().message.find("duplicate key \"k7\"") != std::string::npos);
}

TEST(blob_metadata_is_bounded_in_depth_and_values) {
  CHECK_EQ(blob_code(metadata_with("0")), Error::Ok);
  // The document is level 0, its members 1: 64 arrays inside "extra" reach
  // 64, as src/tensorrt/strict-json.ts counts (the same documents refused).
  CHECK_EQ(blob_code(metadata_with(std::string(64, '[') + std::string(64, ']'))), Error::Ok);
  CHECK_EQ(blob_code(metadata_with(std::string(65, '[') + std::string(65, ']'))), Error::TRT_BLOB_METADATA_JSON);
  CHECK_EQ(blob_code(metadata_with(std::string(64, '[') + "0" + std::string(64, ']'))), Error::TRT_BLOB_METADATA_JSON);
  CHECK_EQ(blob_code(metadata_with(zeros(1000000))), Error::TRT_BLOB_METADATA_JSON);
}

TEST(standin_engine_steps_are_bounded) {
  auto at = trtx::test::build_standin_engine(affine_steps(4096));
  CHECK_OK(trtx::engine::parse_standin_engine(at.data(), at.size(), kRoles, "d"));
  auto past = trtx::test::build_standin_engine(affine_steps(4097));
  auto r = trtx::engine::parse_standin_engine(past.data(), past.size(), kRoles, "d");
  CHECK_ERR(r, Error::EngineFormat);
  if (!r.ok()) CHECK(r.failure().message.find("4097 steps") != std::string::npos);
}

TEST(standin_engine_attend_caches_are_bounded) {
  StandinEngineSpec e;
  StandinStepSpec at;
  at.kind = StandinStepSpec::Kind::Attend;
  at.a = 0;  // query
  at.b = 1;  // output
  at.caches.assign(64, 0);
  e.steps = {at};
  auto ok = trtx::test::build_standin_engine(e);
  CHECK_OK(trtx::engine::parse_standin_engine(ok.data(), ok.size(), kRoles, "d"));
  e.steps[0].caches.assign(65, 0);
  auto past = trtx::test::build_standin_engine(e);
  CHECK_ERR(trtx::engine::parse_standin_engine(past.data(), past.size(), kRoles, "d"), Error::EngineFormat);
}

int main() { return trtx::test::run_all(); }
