// The program loader and method loader on hostile bytes: each malformed
// index or extent is a clear error with a code and a location, and no
// truncation or byte flip crashes (run under AddressSanitizer in CI).
// With --corpus DIR it also loads ExecuTorch's own files and mutates them.
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/check.h"
#include "support/program_builder.h"
#include "trtx/backend/backend.h"
#include "trtx/executor/method.h"
#include "trtx/program/program.h"

using trtx::Error;
using trtx::ScalarType;
using namespace trtx::test;
namespace rt = trtx::runtime;

namespace {

std::string g_corpus;

trtx::Result<std::unique_ptr<trtx::program::Program>> load_bytes(const std::vector<uint8_t>& bytes) {
  // The loader copies what it keeps, so the caller's vector may go away.
  auto copy = std::make_shared<std::vector<uint8_t>>(bytes);
  struct Owning : trtx::program::DataLoader {
    std::shared_ptr<std::vector<uint8_t>> data;
    trtx::program::BufferDataLoader inner;
    explicit Owning(std::shared_ptr<std::vector<uint8_t>> d) : data(d), inner(d->data(), d->size()) {}
    uint64_t size() const override { return inner.size(); }
    trtx::Status read(uint64_t o, size_t n, void* dst) const override { return inner.read(o, n, dst); }
  };
  return trtx::program::Program::load(std::make_unique<Owning>(copy));
}

// Loads the program and every method on the host target; returns the first
// failure's code (Ok when everything loads).
Error load_all(const std::vector<uint8_t>& bytes, std::string* where = nullptr) {
  trtx::backend::register_builtin_backends();
  auto p = load_bytes(bytes);
  if (!p.ok()) {
    if (where) *where = p.failure().location;
    return p.error();
  }
  rt::DeviceContext dev(rt::Target::Host, 0);
  trtx::executor::MethodOptions opts;
  opts.device = &dev;
  for (const auto& name : (*p)->method_names()) {
    auto m = trtx::executor::Method::load(**p, name, opts);
    if (!m.ok()) {
      if (where) *where = m.failure().location;
      return m.error();
    }
  }
  return Error::Ok;
}

// add.out over two inputs into an output, all in host arena 1.
ProgramSpec add_program() {
  auto t = [](uint64_t off) {
    TensorSpec s;
    s.dtype = ScalarType::Float;
    s.sizes = {4};
    s.alloc = std::make_pair(1u, off);
    return ValueSpec::of(s);
  };
  PlanSpec p;
  p.values = {t(0), t(16), t(32), ValueSpec::integer(1)};
  p.inputs = {0, 1};
  p.outputs = {2};
  p.operators = {{"aten::add", "out"}};
  p.instructions = {InstrSpec::kernel(0, {0, 1, 3, 2, 2})};
  p.arena_sizes = {0, 48};
  ProgramSpec spec;
  spec.plans.push_back(p);
  return spec;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  return std::vector<uint8_t>(s.begin(), s.end());
}

void fuzz(const std::vector<uint8_t>& good) {
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(n));
    CHECK(load_all(cut) != Error::Ok);
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t x : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xFF)}) {
      auto m = good;
      m[i] ^= x;
      (void)load_all(m);
    }
  }
}

}  // namespace

TEST(loads_a_valid_program) {
  CHECK_EQ(load_all(build_program(add_program())), Error::Ok);
  CHECK_EQ(load_all(build_program(make_kv_program(KvOptions{}))), Error::Ok);
  KvOptions zc;
  zc.zero_copy = true;
  CHECK_EQ(load_all(build_program(make_kv_program(zc))), Error::Ok);
}

TEST(refuses_a_bad_header) {
  auto good = build_program(add_program());
  CHECK_EQ(load_all(std::vector<uint8_t>(good.begin(), good.begin() + 7)), Error::ProgramTruncated);
  auto bad_id = good;
  std::memcpy(bad_id.data() + 4, "ET11", 4);
  CHECK_EQ(load_all(bad_id), Error::ProgramIdentifier);
}

TEST(checks_the_extended_header) {
  std::vector<uint8_t> head(64, 0);
  std::memcpy(head.data() + 4, "ET12", 4);
  std::memcpy(head.data() + 8, "eh00", 4);
  auto put = [&](size_t at, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) head[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  put(12, 16, 4);  // length too small
  auto r = trtx::program::parse_file_header(head.data(), head.size(), 64);
  CHECK_ERR(r, Error::ProgramExtendedHeader);
  put(12, 32, 4);
  put(16, 1000, 8);  // program_size past the file
  CHECK_ERR(trtx::program::parse_file_header(head.data(), head.size(), 64), Error::ProgramTruncated);
  put(16, 48, 8);
  put(24, 40, 8);  // segment base inside the program
  CHECK_ERR(trtx::program::parse_file_header(head.data(), head.size(), 64), Error::ProgramExtendedHeader);
  put(24, 48, 8);
  put(32, 1ull << 62, 8);  // segment data past the file
  CHECK_ERR(trtx::program::parse_file_header(head.data(), head.size(), 64), Error::ProgramTruncated);
  put(32, 16, 8);
  auto ok = trtx::program::parse_file_header(head.data(), head.size(), 64);
  CHECK_OK(ok);
  if (ok.ok()) CHECK(ok->has_extended_header && ok->program_size == 48 && ok->segment_base_offset == 48);
  put(24, 0, 8);  // a data size with no base
  CHECK_ERR(trtx::program::parse_file_header(head.data(), head.size(), 64), Error::ProgramExtendedHeader);
  // A header cut off by the end of the file.
  CHECK_ERR(trtx::program::parse_file_header(head.data(), 20, 20), Error::ProgramTruncated);
}

TEST(refuses_a_flatbuffer_that_fails_verification) {
  auto good = build_program(add_program());
  auto bad = good;
  bad[0] = 0xF0;  // root offset far outside the buffer
  bad[1] = 0xFF;
  CHECK_EQ(load_all(bad), Error::ProgramVerification);
}

TEST(refuses_out_of_range_indices_and_extents) {
  struct Case {
    const char* name;
    void (*edit)(ProgramSpec&);
    Error code;
    const char* where;
  };
  const Case cases[] = {
      {"memory id 0 (reserved)", [](ProgramSpec& s) { s.plans[0].values[0].tensor.alloc->first = 0; },
       Error::IndexOutOfRange, "forward.values[0].allocation_info.memory_id"},
      {"memory id past the arenas", [](ProgramSpec& s) { s.plans[0].values[0].tensor.alloc->first = 5; },
       Error::IndexOutOfRange, "forward.values[0].allocation_info.memory_id"},
      {"tensor past its arena", [](ProgramSpec& s) { s.plans[0].values[2].tensor.alloc->second = 40; },
       Error::ExtentOutOfRange, "forward.values[2].allocation_info"},
      {"offset that wraps", [](ProgramSpec& s) { s.plans[0].values[2].tensor.alloc->second = ~uint64_t(0) - 4; },
       Error::ExtentOutOfRange, "forward.values[2].allocation_info"},
      {"negative arena", [](ProgramSpec& s) { s.plans[0].arena_sizes[1] = -1; }, Error::InvalidProgram,
       "forward.non_const_buffer_sizes[1]"},
      {"huge arena", [](ProgramSpec& s) { s.plans[0].arena_sizes[1] = int64_t(1) << 60; },
       Error::MemoryAllocationFailed, "forward.non_const_buffer_sizes[1]"},
      {"constant index past the buffers", [](ProgramSpec& s) {
         s.plans[0].values[1].tensor.alloc.reset();
         s.plans[0].values[1].tensor.data_buffer_idx = 3;
       },
       Error::IndexOutOfRange, "forward.values[1].data_buffer_idx"},
      {"constant larger than its buffer", [](ProgramSpec& s) {
         s.plans[0].values[1].tensor.alloc.reset();
         s.plans[0].values[1].tensor.data_buffer_idx = 1;
         s.constant_buffers = {{}, std::vector<uint8_t>(8, 0)};
       },
       Error::ExtentOutOfRange, "forward.values[1]"},
      {"initial state without mutable segments", [](ProgramSpec& s) { s.plans[0].values[1].tensor.data_buffer_idx = 1; },
       Error::IndexOutOfRange, "forward.values[1].data_buffer_idx"},
      {"op index past the operators", [](ProgramSpec& s) { s.plans[0].instructions[0].index = 1; },
       Error::IndexOutOfRange, "forward.chains[0].instructions[0].op_index"},
      {"argument past the values", [](ProgramSpec& s) { s.plans[0].instructions[0].args[1] = 99; },
       Error::IndexOutOfRange, "forward.chains[0].instructions[0].args[1]"},
      {"negative argument", [](ProgramSpec& s) { s.plans[0].instructions[0].args[0] = -1; },
       Error::IndexOutOfRange, "forward.chains[0].instructions[0].args[0]"},
      {"input past the values", [](ProgramSpec& s) { s.plans[0].inputs[1] = 4; }, Error::IndexOutOfRange,
       "forward.inputs[1]"},
      {"delegate index past the delegates", [](ProgramSpec& s) { s.plans[0].instructions.push_back(InstrSpec::delegate(0, {})); },
       Error::IndexOutOfRange, "forward.chains[0].instructions[1].delegate_index"},
      {"jump past the chain", [](ProgramSpec& s) {
         InstrSpec j;
         j.kind = InstrSpec::Kind::JumpFalse;
         j.a = 3;
         j.b = 7;
         s.plans[0].instructions.push_back(j);
       },
       Error::IndexOutOfRange, "forward.chains[0].instructions[1].destination_instruction"},
      {"move past the values", [](ProgramSpec& s) {
         InstrSpec m;
         m.kind = InstrSpec::Kind::Move;
         m.a = 0;
         m.b = 50;
         s.plans[0].instructions.push_back(m);
       },
       Error::IndexOutOfRange, "forward.chains[0].instructions[1].move_to"},
      {"unknown operator", [](ProgramSpec& s) { s.plans[0].operators[0] = {"cortex_m::pad", "out"}; },
       Error::OperatorMissing, "forward.chains[0].instructions[0]"},
      {"tensor declaring cuda in a host arena", [](ProgramSpec& s) { s.plans[0].values[0].tensor.cuda = true; },
       Error::InvalidProgram, "forward.values[0].extra_tensor_info.device_type"},
      {"device entry for reserved arena 0", [](ProgramSpec& s) { s.plans[0].cuda_arenas = {0}; },
       Error::IndexOutOfRange, "forward.non_const_buffer_device[0].buffer_idx"},
      {"unknown backend", [](ProgramSpec& s) {
         DelegateSpec d;
         d.id = "XnnpackBackend";
         s.plans[0].delegates.push_back(d);
         s.inline_blobs.push_back({1, 2, 3});
       },
       Error::DelegateInvalidCompatibility, "forward.delegates[0].id"},
      {"inline blob index past the blobs", [](ProgramSpec& s) {
         DelegateSpec d;
         d.inline_index = 4;
         s.plans[0].delegates.push_back(d);
       },
       Error::IndexOutOfRange, "forward.delegates[0].processed.index"},
      {"an empty chain is valid", [](ProgramSpec& s) { s.plans[0].instructions.clear(); }, Error::Ok, ""},
  };
  for (const auto& c : cases) {
    ProgramSpec spec = add_program();
    c.edit(spec);
    std::string where;
    Error got = load_all(build_program(spec), &where);
    if (got != c.code || (c.code != Error::Ok && where != c.where)) {
      report_failure(__FILE__, __LINE__,
                     std::string(c.name) + ": got " + trtx::error_name(got) + " at '" + where + "', expected " +
                         trtx::error_name(c.code) + " at '" + c.where + "'");
    }
  }
}

TEST(unknown_operator_error_names_every_missing_operator) {
  ProgramSpec spec = add_program();
  spec.plans[0].operators = {{"cortex_m::quantize_per_tensor", "out"}, {"cortex_m::pad", "out"}};
  spec.plans[0].instructions.push_back(InstrSpec::kernel(1, {0, 2, 2}));
  trtx::backend::register_builtin_backends();
  auto p = load_bytes(build_program(spec));
  CHECK_OK(p);
  if (!p.ok()) return;
  rt::DeviceContext dev(rt::Target::Host, 0);
  trtx::executor::MethodOptions opts;
  opts.device = &dev;
  auto m = trtx::executor::Method::load(**p, "forward", opts);
  CHECK_ERR(m, Error::OperatorMissing);
  if (!m.ok()) {
    CHECK(m.failure().message.find("unknown operator cortex_m::quantize_per_tensor.out") != std::string::npos);
    CHECK(m.failure().message.find("cortex_m::pad.out") != std::string::npos);
  }
}

TEST(blob_refusals_surface_at_method_load_with_their_codes) {
  ProgramSpec spec = make_kv_program(KvOptions{});
  auto& blob = spec.inline_blobs[0];
  std::memcpy(blob.data(), "TR01", 4);  // aliasing in a TR01 blob
  std::string where;
  CHECK_EQ(load_all(build_program(spec), &where), Error::TRT_ALIAS_IN_TR01);
  CHECK_EQ(where, std::string("forward.delegates[0].blob.header.magic"));
}

TEST(no_truncation_or_byte_flip_crashes_the_loader) {
  fuzz(build_program(add_program()));
  fuzz(build_program(make_kv_program(KvOptions{})));
}

TEST(corpus_files_load_and_survive_mutation) {
  if (g_corpus.empty()) return;
  for (const char* name : {"add.pte", "add-segment.pte", "module-linear-inline-constants.pte"}) {
    auto bytes = read_file(g_corpus + "/" + name);
    CHECK(!bytes.empty());
    std::string where;
    Error e = load_all(bytes, &where);
    if (e != Error::Ok) report_failure(__FILE__, __LINE__, std::string(name) + ": " + trtx::error_name(e) + " at " + where);
    fuzz(bytes);
  }
  auto kws = read_file(g_corpus + "/keyword-spotting-cortex-m.pte");
  CHECK_EQ(load_all(kws), Error::OperatorMissing);
}

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--corpus") g_corpus = argv[i + 1];
  }
  return trtx::test::run_all(g_corpus.empty() ? nullptr : "corpus");
}
