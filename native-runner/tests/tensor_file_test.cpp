// TRXT tensor files (docs/reference-lowering.md section 3): the round trip,
// every truncation and the malformed shapes refused with a location, the
// streaming writer; and, given the runner and the corpus's add.pte (argv[1],
// argv[2]), `trtx-runner run --inputs --outputs` end to end: recorded inputs
// replace the pattern, the outputs come back in execution order, and a bad
// file, a missing record or a record of another dtype is a usage error.
#include "tensor_file.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/check.h"

using trtx::Error;
using trtx::cli::TensorRecord;
using trtx::cli::ValueKind;

namespace {

std::string g_runner, g_add_pte;

TensorRecord tensor(const std::string& method, uint32_t step, uint32_t index, std::vector<float> values,
                    std::vector<int64_t> sizes) {
  TensorRecord r;
  r.method = method;
  r.step = step;
  r.index = index;
  r.kind = ValueKind::Tensor;
  r.dtype = 6;  // Float
  r.sizes = std::move(sizes);
  r.bytes.resize(values.size() * 4);
  if (!values.empty()) std::memcpy(r.bytes.data(), values.data(), r.bytes.size());
  return r;
}

std::vector<TensorRecord> sample() {
  std::vector<TensorRecord> v = {tensor("forward", 0, 0, {1.5f, -2.0f}, {1, 2}), tensor("decode", 3, 1, {}, {0, 4})};
  TensorRecord i;
  i.method = "decode";
  i.kind = ValueKind::Int;
  const int64_t x = -7;
  i.bytes.assign(reinterpret_cast<const uint8_t*>(&x), reinterpret_cast<const uint8_t*>(&x) + 8);
  TensorRecord b;
  b.method = "decode";
  b.index = 2;
  b.kind = ValueKind::Bool;
  b.bytes = {1};
  TensorRecord n;
  n.method = "decode";
  n.index = 3;
  n.kind = ValueKind::None;
  v.push_back(i);
  v.push_back(b);
  v.push_back(n);
  return v;
}

bool same(const TensorRecord& a, const TensorRecord& b) {
  return a.method == b.method && a.step == b.step && a.index == b.index && a.kind == b.kind && a.dtype == b.dtype &&
         a.sizes == b.sizes && a.bytes == b.bytes;
}

void refused(const std::vector<uint8_t>& bytes, const char* says) {
  auto r = trtx::cli::parse_tensor_file(bytes.data(), bytes.size(), "in.trxt");
  CHECK_ERR(r, Error::InvalidArgument);
  if (!r.ok() && r.failure().message.find(says) == std::string::npos) {
    std::fprintf(stderr, "expected '%s' in: %s: %s\n", says, r.failure().location.c_str(), r.failure().message.c_str());
    CHECK(false);
  }
}

// Byte offset of record 0's fields in a one-record file of method "forward".
constexpr size_t kKind = 12 + 4 + 7 + 8, kDtype = kKind + 4, kNdim = kDtype + 4;

void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

int run(const std::string& args, std::string* err) {
  const std::string cmd = g_runner + " run " + g_add_pte + " --device cpu " + args + " 2> stderr.txt";
  const int status = std::system(cmd.c_str());
  std::ifstream f("stderr.txt");
  if (err != nullptr) *err = std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace

TEST(round_trips) {
  const auto records = sample();
  const auto bytes = trtx::cli::encode_tensor_file(records);
  auto back = trtx::cli::parse_tensor_file(bytes.data(), bytes.size(), "f");
  CHECK_OK(back);
  if (!back.ok()) return;
  CHECK_EQ(back->size(), records.size());
  for (size_t i = 0; i < records.size() && i < back->size(); ++i) CHECK(same(records[i], (*back)[i]));
  trtx::cli::RecordedValues values(back.get());
  CHECK(values.find("decode", 0, 2) != nullptr && values.find("decode", 0, 2)->bytes[0] == 1);
  CHECK(values.find("forward", 1, 0) == nullptr);
}

TEST(every_truncation_is_refused) {
  const auto bytes = trtx::cli::encode_tensor_file(sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = trtx::cli::parse_tensor_file(bytes.data(), n, "cut.trxt");
    CHECK_ERR(r, Error::InvalidArgument);
    if (!r.ok()) CHECK(r.failure().location.rfind("cut.trxt", 0) == 0);
  }
  auto extra = bytes;
  extra.push_back(0);
  refused(extra, "after the last");
}

TEST(malformed_records_are_refused) {
  const auto one = trtx::cli::encode_tensor_file({tensor("forward", 0, 0, {1.0f, 2.0f}, {2})});
  auto b = one;
  b[0] = 'X';
  refused(b, "magic");
  b = one;
  put32(b, 4, 2);
  refused(b, "version 2");
  b = one;
  put32(b, 8, 0xFFFFFFFF);
  refused(b, "cannot fit");
  b = one;
  put32(b, 12, 0);
  refused(b, "method_len 0");
  b = one;
  put32(b, 12, 1u << 20);
  refused(b, "method_len");
  b = one;
  put32(b, kKind, 5);
  refused(b, "kind 5");
  b = one;
  put32(b, kDtype, 99);
  refused(b, "dtype 99");
  b = one;
  put32(b, kDtype, 4);  // int64: 16 bytes for 2 elements, the record has 8
  refused(b, "nbytes is 8");
  b = one;
  put32(b, kNdim, 1000);
  refused(b, "ndim 1000");
  b = one;
  for (int i = 0; i < 8; ++i) b[kNdim + 4 + i] = 0xFF;  // size -1
  refused(b, "negative");
  TensorRecord i;
  i.method = "m";
  i.kind = ValueKind::Int;
  i.bytes = {1, 2, 3};
  refused(trtx::cli::encode_tensor_file({i}), "takes 8");
  TensorRecord bad_bool;
  bad_bool.method = "m";
  bad_bool.kind = ValueKind::Bool;
  bad_bool.bytes = {7};
  refused(trtx::cli::encode_tensor_file({bad_bool}), "0 or 1");
  const auto r = tensor("forward", 1, 2, {1.0f}, {1});
  refused(trtx::cli::encode_tensor_file({r, r}), "repeats method 'forward' step 1 index 2");
}

TEST(the_writer_streams_and_patches_the_count) {
  trtx::cli::TensorFileWriter w;
  CHECK_OK(w.open("writer.trxt"));
  for (const auto& r : sample()) CHECK_OK(w.add(r));
  CHECK_OK(w.close());
  auto back = trtx::cli::read_tensor_file("writer.trxt");
  CHECK_OK(back);
  if (back.ok()) CHECK_EQ(back->size(), sample().size());
  CHECK_ERR(trtx::cli::read_tensor_file("no/such/file.trxt"), Error::InvalidArgument);
}

TEST(run_feeds_recorded_inputs_and_writes_every_output) {
  if (g_runner.empty()) return;
  std::vector<TensorRecord> in;
  for (uint32_t s = 0; s < 3; ++s) {
    in.push_back(tensor("forward", s, 0, {10.0f * (s + 1)}, {1}));
    in.push_back(tensor("forward", s, 1, {0.25f + s}, {1}));
  }
  write("add_inputs.trxt", trtx::cli::encode_tensor_file(in));
  std::remove("add_outputs.trxt");
  std::string err;
  CHECK_EQ(run("--steps 3 --inputs add_inputs.trxt --outputs add_outputs.trxt --report add_io.json", &err), 0);
  auto out = trtx::cli::read_tensor_file("add_outputs.trxt");
  CHECK_OK(out);
  if (!out.ok()) return;
  CHECK_EQ(out->size(), size_t{3});
  for (uint32_t s = 0; s < 3 && s < out->size(); ++s) {
    const TensorRecord& r = (*out)[s];
    CHECK(r.method == "forward" && r.step == s && r.index == 0 && r.kind == ValueKind::Tensor && r.dtype == 6);
    CHECK(r.sizes == std::vector<int64_t>{1} && r.bytes.size() == 4);
    float v = 0;
    if (r.bytes.size() == 4) std::memcpy(&v, r.bytes.data(), 4);
    CHECK_EQ(v, 10.0f * (s + 1) + 0.25f + s);
  }
  // Without --inputs the pattern runs and the outputs file still comes back.
  CHECK_EQ(run("--steps 2 --outputs add_pattern.trxt --report add_pattern.json", nullptr), 0);
  auto pattern = trtx::cli::read_tensor_file("add_pattern.trxt");
  CHECK(pattern.ok() && pattern->size() == 2);
}

TEST(run_refuses_bad_inputs_as_usage) {
  if (g_runner.empty()) return;
  std::vector<TensorRecord> in = {tensor("forward", 0, 0, {1.0f}, {1}), tensor("forward", 0, 1, {2.0f}, {1})};
  const auto good = trtx::cli::encode_tensor_file(in);
  std::string err;
  write("cut.trxt", std::vector<uint8_t>(good.begin(), good.end() - 3));
  CHECK_EQ(run("--inputs cut.trxt --report cut.json", &err), 2);
  CHECK(err.find("cut.trxt: record 1") != std::string::npos && err.find("truncated") != std::string::npos);
  // Step 1 has no records.
  write("one_step.trxt", good);
  CHECK_EQ(run("--steps 2 --inputs one_step.trxt --report one_step.json", &err), 2);
  CHECK(err.find("forward.steps[1].inputs[0]: --inputs has no record for method 'forward' step 1 input 0") !=
        std::string::npos);
  std::vector<TensorRecord> wrong = in;
  wrong[1].dtype = 3;  // int32, the same 4 bytes
  write("wrong.trxt", trtx::cli::encode_tensor_file(wrong));
  CHECK_EQ(run("--inputs wrong.trxt --report wrong.json", &err), 2);
  CHECK(err.find("--inputs records int32[1] (4 bytes) for method 'forward' step 0 input 1, which is float32[1]") !=
        std::string::npos);
  std::vector<TensorRecord> shape = in;
  shape[0] = tensor("forward", 0, 0, {1.0f, 2.0f}, {2});
  write("shape.trxt", trtx::cli::encode_tensor_file(shape));
  CHECK_EQ(run("--inputs shape.trxt --report shape.json", &err), 2);
  CHECK(err.find("float32[2]") != std::string::npos);
  CHECK_EQ(run("--inputs", &err), 2);
}

int main(int argc, char** argv) {
  if (argc > 2) {
    g_runner = argv[1];
    g_add_pte = argv[2];
  }
  return trtx::test::run_all();
}
