// Reference engine version 3 (docs/reference-lowering.md section 1,
// native-runner/README.md "The reference engine"): the weights are the
// outer program's named data. A program built here (support/
// program_builder.h) whose forward adds an EXTERNAL constant runs with the
// constant resolved through the real PteDataMap of an outer program that
// carries the bytes; every refusal (no map, a missing key, an entry of
// another size) names what is wrong; the backend hands init's map over; and
// a weight past 4 GiB of a sparse 5 GiB program reaches the engine through
// the runner's own loader.
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/executor/program.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "guarded_loader.h"
#include "support/binding_view.h"
#include "support/blob_builder.h"
#include "support/check.h"
#include "support/program_builder.h"
#include "trtx/backend/tensorrt_backend.h"
#include "trtx/engine/program_executor.h"
#include "trtx/engine/standin_engine.h"
#include "trtx/et/device_allocator.h"

namespace et = executorch::runtime;
using trtx::Error;
using trtx::ScalarType;
using trtx::engine::BindingView;
using trtx::engine::parse_standin_engine;
using trtx::test::StandinEngineSpec;
namespace rt = trtx::runtime;

namespace {

BindingView view(const std::string& name, bool in, void* data, ScalarType t, std::vector<int64_t> sizes) {
  return trtx::test::binding_view(name, in, data, t, std::move(sizes));
}

std::vector<uint8_t> float_bytes(std::vector<float> v) {
  std::vector<uint8_t> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// The outer program, loaded by ExecuTorch: its get_named_data_map() is the
// PteDataMap a delegate's init receives (runtime/executor/program.h).
struct Outer {
  explicit Outer(std::vector<uint8_t> bytes)
      : storage(bytes.size() + 16),
        data(storage.data() + (16 - reinterpret_cast<uintptr_t>(storage.data()) % 16) % 16),
        loader(data, bytes.size()) {
    std::memcpy(data, bytes.data(), bytes.size());
    auto p = et::Program::load(&loader, et::Program::Verification::InternalConsistency);
    CHECK(p.ok());
    if (p.ok()) program = std::make_unique<et::Program>(std::move(p.get()));
  }
  const et::NamedDataMap* map() const {
    if (!program) return nullptr;
    auto m = program->get_named_data_map();
    return m.ok() ? m.get() : nullptr;
  }
  std::vector<uint8_t> storage;
  uint8_t* data;
  executorch::extension::BufferDataLoader loader;
  std::unique_ptr<et::Program> program;
};

trtx::Result<std::unique_ptr<trtx::engine::EngineExecutor>> v3_executor(const std::vector<uint8_t>& program,
                                                                        const et::NamedDataMap* named) {
  StandinEngineSpec e;
  e.version = 3;
  e.program = program;
  e.streamable = 8;
  e.streaming = true;
  auto bytes = trtx::test::build_standin_engine(e);
  const std::vector<bool> roles = {true, false};
  auto parsed = parse_standin_engine(bytes.data(), bytes.size(), roles, "forward.delegates[0]");
  if (!parsed.ok()) return parsed.take_failure();
  return trtx::engine::make_program_executor(parsed.get(), rt::DeviceContext(rt::Target::Host, 0), roles,
                                             "forward.delegates[0]", named);
}

void check_message(const trtx::Failure& f, const std::string& says) {
  if (f.message.find(says) != std::string::npos) return;
  std::fprintf(stderr, "message: %s\n  lacks: %s\n", f.message.c_str(), says.c_str());
  CHECK(false);
}

}  // namespace

TEST(version_3_reads_its_weights_from_the_outer_programs_named_data) {
  Outer outer(trtx::test::add_constant_program("w", {{"w", float_bytes({10.0f, 20.0f})}}));
  CHECK(outer.map() != nullptr);
  auto ex = v3_executor(trtx::test::add_constant_program("w"), outer.map());
  CHECK_OK(ex);
  if (!ex.ok()) return;
  CHECK_EQ(std::string(ex.get()->kind()), std::string("reference-program"));
  for (int step = 0; step < 2; ++step) {
    float x[2] = {1.0f + step, 2.0f}, out[2] = {-1.0f, -1.0f};
    std::vector<BindingView> b = {view("x", true, x, ScalarType::Float, {2}),
                                  view("output0", false, out, ScalarType::Float, {2})};
    CHECK_OK(ex.get()->check_bindings(b, "d"));
    CHECK_OK(ex.get()->enqueue(b, nullptr, 0, rt::StreamRef{}, "d"));
    CHECK_EQ(out[0], 11.0f + step);
    CHECK_EQ(out[1], 22.0f);
  }
  // The stand-in's own traffic: each enqueue reads x to the host and writes
  // the output back (8 bytes each way), counted apart from any staging.
  const rt::CopyCounters moved = ex.get()->stand_in_copies();
  CHECK_EQ(moved.d2h_bytes, uint64_t{16});
  CHECK_EQ(moved.h2d_bytes, uint64_t{16});
}

TEST(version_3_without_a_named_data_map_is_refused) {
  auto r = v3_executor(trtx::test::add_constant_program("w"), nullptr);
  CHECK_ERR(r, Error::EngineFormat);
  if (r.ok()) return;
  CHECK_EQ(r.failure().location, std::string("forward.delegates[0].engine"));
  check_message(r.failure(), "no named data map");
}

TEST(version_3_names_a_key_the_named_data_lacks) {
  Outer outer(trtx::test::add_constant_program("w", {{"layers.0.weight", float_bytes({1.0f, 2.0f})}}));
  auto r = v3_executor(trtx::test::add_constant_program("w"), outer.map());
  CHECK_ERR(r, Error::EngineFormat);
  if (r.ok()) return;
  check_message(r.failure(), "constant 'w' (float32[2], 8 bytes) from the program's named data, which has no such key");
}

TEST(version_3_refuses_an_entry_of_another_size) {
  // Shorter, ExecuTorch's kernel would read past the entry; longer, the key
  // names other bytes than the engine was built with.
  for (size_t n : {4u, 12u}) {
    Outer outer(trtx::test::add_constant_program("w", {{"w", std::vector<uint8_t>(n, 0)}}));
    auto r = v3_executor(trtx::test::add_constant_program("w"), outer.map());
    CHECK_ERR(r, Error::EngineFormat);
    if (r.ok()) continue;
    check_message(r.failure(), "holds " + std::to_string(n) +
                                   " bytes under 'w'; the engine's program declares it "
                                   "float32[2], 8 bytes");
  }
}

TEST(version_2_with_external_constants_is_refused_not_run) {
  // Version 2 carries its weights: ExecuTorch gets no map and refuses the
  // EXTERNAL constant (InvalidState), the runner says EngineFormat.
  Outer outer(trtx::test::add_constant_program("w", {{"w", float_bytes({1.0f, 2.0f})}}));
  StandinEngineSpec e;
  e.version = 2;
  e.program = trtx::test::add_constant_program("w");
  auto bytes = trtx::test::build_standin_engine(e);
  auto parsed = parse_standin_engine(bytes.data(), bytes.size(), {true, false}, "d");
  CHECK_OK(parsed);
  if (!parsed.ok()) return;
  auto r = trtx::engine::make_program_executor(parsed.get(), rt::DeviceContext(rt::Target::Host, 0), {true, false}, "d",
                                               outer.map());
  CHECK_ERR(r, Error::EngineFormat);
}

TEST(the_backend_hands_a_version_3_engine_the_named_data_map) {
  trtx::et::register_device_allocator();
  trtx::et::device_allocator().configure({rt::Target::Host, trtx::et::ArenaFill::Poison, {}});
  CHECK(trtx::backend::register_tensorrt_backend() == et::Error::Ok);
  trtx::backend::default_program_state().configure({rt::Target::Host, {}, trtx::backend::TrtContract::ZeroCopy});
  et::BackendInterface* backend = et::get_backend_class("TensorRTBackend");
  CHECK(backend != nullptr);
  if (backend == nullptr) return;
  const std::string metadata =
      "{\"io_bindings\":[{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[2],\"is_input\":true},"
      "{\"name\":\"output0\",\"dtype\":\"float32\",\"shape\":[2],\"is_input\":false}],"
      "\"hardware_compatible\":false,\"device_id\":0,\"serialized_metadata\":\"\",\"target_platform\":\"linux\"}";
  StandinEngineSpec e;
  e.version = 3;
  e.program = trtx::test::add_constant_program("w");
  std::vector<uint8_t> blob = trtx::test::make_trt_blob("TR01", metadata, trtx::test::build_standin_engine(e));
  Outer outer(trtx::test::add_constant_program("w", {{"w", float_bytes({0.5f, 0.25f})}}));
  static uint8_t arena[4096];
  et::MemoryAllocator runtime_allocator(sizeof arena, arena);
  // Without the map (a program with no named data) init refuses the engine.
  et::BackendInitContext bare(&runtime_allocator, nullptr, "v3bare", nullptr, {});
  et::FreeableBuffer first(blob.data(), blob.size(), nullptr);
  auto refused = backend->init(bare, &first, {});
  CHECK(!refused.ok());
  et::BackendInitContext ctx(&runtime_allocator, nullptr, "v3method", outer.map(), {});
  et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  auto h = backend->init(ctx, &processed, {});
  CHECK(h.ok());
  if (!h.ok()) return;
  float x[2] = {1.0f, 2.0f}, out[2] = {0.0f, 0.0f};
  int32_t sizes[1] = {2};
  uint8_t order[1] = {0};
  executorch::aten::TensorImpl xi(executorch::aten::ScalarType::Float, 1, sizes, x, order);
  executorch::aten::TensorImpl oi(executorch::aten::ScalarType::Float, 1, sizes, out, order);
  et::EValue xv{executorch::aten::Tensor(&xi)}, ov{executorch::aten::Tensor(&oi)};
  std::vector<et::EValue*> args = {&xv, &ov};
  et::BackendExecutionContext exec;
  CHECK(backend->execute(exec, h.get(), et::Span<et::EValue*>(args.data(), args.size())) == et::Error::Ok);
  CHECK_EQ(out[0], 1.5f);
  CHECK_EQ(out[1], 2.25f);
  // The delegate reports what the stand-in moved apart from its staging.
  const auto infos = trtx::backend::default_program_state().delegate_infos("v3method");
  CHECK(infos.size() == 1);
  if (infos.size() == 1) {
    CHECK_EQ(infos[0].engine_stand_in.d2h_bytes, uint64_t{8});
    CHECK_EQ(infos[0].engine_stand_in.h2d_bytes, uint64_t{8});
  }
  backend->destroy(h.get());
}

TEST(a_weight_past_4_gib_of_a_5_gib_program_reaches_the_engine_through_the_runners_loader) {
  // The runner opens a program as GuardedLoader over MmapDataLoader
  // (loaded_program.cpp): a 5 GiB file whose one named entry lies past 4 GiB
  // (sparse: the hole costs no disk) passes the load limits, and the entry
  // reaches a version-3 engine through u64 segment offsets, unread until
  // ExecuTorch asks for it.
  const uint64_t base = (uint64_t{5} << 30) - 4096;
  const std::string path = "program_engine_test_5gib.pte";
  const std::vector<uint8_t> program = trtx::test::add_constant_program("w", {{"w", float_bytes({3.0f, 4.0f})}}, base);
  const std::vector<uint8_t> w = float_bytes({3.0f, 4.0f});
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  CHECK(fd >= 0);
  if (fd < 0) return;
  const bool written = ::pwrite(fd, program.data(), program.size(), 0) == static_cast<ssize_t>(program.size()) &&
                       ::pwrite(fd, w.data(), w.size(), static_cast<off_t>(base)) == static_cast<ssize_t>(w.size()) &&
                       ::ftruncate(fd, static_cast<off_t>(uint64_t{5} << 30)) == 0;
  ::close(fd);
  CHECK(written);
  {
    using executorch::extension::MmapDataLoader;
    auto mapped = MmapDataLoader::from(path.c_str(), MmapDataLoader::MlockConfig::NoMlock);
    CHECK(mapped.ok());
    if (!mapped.ok()) return (void)std::remove(path.c_str());
    trtx::integration::GuardedLoader loader(std::make_unique<MmapDataLoader>(std::move(mapped.get())), {});
    auto outer = et::Program::load(&loader, et::Program::Verification::InternalConsistency);
    CHECK(outer.ok());
    auto map = outer.ok() ? outer->get_named_data_map() : et::Result<const et::NamedDataMap*>(et::Error::NotFound);
    CHECK(map.ok());
    if (map.ok()) {
      auto ex = v3_executor(trtx::test::add_constant_program("w"), map.get());
      CHECK_OK(ex);
      float x[2] = {1.0f, 2.0f}, out[2] = {0.0f, 0.0f};
      std::vector<BindingView> b = {view("x", true, x, ScalarType::Float, {2}),
                                    view("output0", false, out, ScalarType::Float, {2})};
      if (ex.ok()) CHECK_OK(ex.get()->enqueue(b, nullptr, 0, rt::StreamRef{}, "d"));
      CHECK_EQ(out[0], 4.0f);
      CHECK_EQ(out[1], 6.0f);
    }
  }
  std::remove(path.c_str());
}

int main() { return trtx::test::run_all(); }
