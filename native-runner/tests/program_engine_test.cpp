// Reference engine version 2 (docs/reference-lowering.md section 1): the
// format's accept and refuse cases, and the program executor running
// ExecuTorch's own add.pte (the corpus, argv[1]) as an engine: the sum, an
// aliased output written in place, bindings of the wrong type or shape,
// input/output counts that disagree, a program the runtime lacks kernels for
// (argv[2]), and the backend dispatching a version-2 blob to it. Version 3
// is program_engine_v3_test.cpp.
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/executor/program.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "support/binding_view.h"
#include "support/blob_builder.h"
#include "support/check.h"
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

std::string g_add_pte, g_missing_ops_pte;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

BindingView view(const std::string& name, bool in, void* data, ScalarType t, std::vector<int64_t> sizes) {
  return trtx::test::binding_view(name, in, data, t, std::move(sizes));
}

std::vector<uint8_t> v2_engine(const std::vector<uint8_t>& program) {
  StandinEngineSpec e;
  e.version = 2;
  e.program = program;
  e.scratch_base = 96;
  e.streamable = 1234;
  e.streaming = true;
  return trtx::test::build_standin_engine(e);
}

trtx::Result<std::unique_ptr<trtx::engine::EngineExecutor>> executor(const std::vector<uint8_t>& program,
                                                                     const std::vector<bool>& roles) {
  auto bytes = v2_engine(program);
  auto parsed = parse_standin_engine(bytes.data(), bytes.size(), roles, "forward.delegates[0]");
  if (!parsed.ok()) return parsed.take_failure();
  return trtx::engine::make_program_executor(parsed.get(), rt::DeviceContext(rt::Target::Host, 0), roles,
                                             "forward.delegates[0]");
}

const std::vector<bool> kAddRoles = {true, true, false};

}  // namespace

TEST(version_2_parses_and_owns_an_aligned_program) {
  std::vector<uint8_t> program(1000);
  for (size_t i = 0; i < program.size(); ++i) program[i] = static_cast<uint8_t>(i * 7);
  auto bytes = v2_engine(program);
  auto parsed = parse_standin_engine(bytes.data(), bytes.size(), kAddRoles, "d");
  CHECK_OK(parsed);
  if (!parsed.ok()) return;
  CHECK_EQ(parsed->version, 2u);
  CHECK(parsed->steps.empty());
  CHECK(parsed->program != nullptr);
  if (parsed->program == nullptr) return;
  CHECK_EQ(parsed->program->size(), program.size());
  CHECK(std::memcmp(parsed->program->data(), program.data(), program.size()) == 0);
  CHECK_EQ(reinterpret_cast<uintptr_t>(parsed->program->data()) % 64, uintptr_t{0});
  CHECK_EQ(parsed->scratch_base, uint64_t{96});
  CHECK_EQ(parsed->streamable_weight_bytes, uint64_t{1234});
  CHECK(parsed->weight_streaming);
  // Version 1 still parses, without a program.
  StandinEngineSpec v1;
  auto v1_bytes = trtx::test::build_standin_engine(v1);
  auto p1 = parse_standin_engine(v1_bytes.data(), v1_bytes.size(), kAddRoles, "d");
  CHECK_OK(p1);
  if (p1.ok()) CHECK(p1->version == 1 && p1->program == nullptr);
}

TEST(refuses_every_other_combination) {
  auto refused = [](const StandinEngineSpec& e, const char* says) {
    auto bytes = trtx::test::build_standin_engine(e);
    auto r = parse_standin_engine(bytes.data(), bytes.size(), kAddRoles, "forward.delegates[0]");
    CHECK_ERR(r, Error::EngineFormat);
    if (r.ok()) return;
    CHECK_EQ(r.failure().location, std::string("forward.delegates[0].engine"));
    if (r.failure().message.find(says) == std::string::npos) {
      std::fprintf(stderr, "message: %s\n", r.failure().message.c_str());
      CHECK(false);
    }
  };
  StandinEngineSpec no_program;
  no_program.version = 2;
  refused(no_program, "version 2 has no program");
  StandinEngineSpec with_steps;
  with_steps.version = 2;
  with_steps.program = {1, 2, 3};
  with_steps.steps.resize(1);
  with_steps.steps[0].b = 2;
  refused(with_steps, "synthetic steps");
  StandinEngineSpec v1_program;
  v1_program.program = {1, 2, 3};
  refused(v1_program, "version 1");
  StandinEngineSpec v3_no_program;
  v3_no_program.version = 3;
  refused(v3_no_program, "version 3 has no program");
  StandinEngineSpec v3_with_steps = with_steps;
  v3_with_steps.version = 3;
  refused(v3_with_steps, "synthetic steps");
  for (uint32_t v : {0u, 4u, 0xFFFFFFFFu}) {
    StandinEngineSpec unknown;
    unknown.version = v;
    unknown.program = {1};
    refused(unknown, "not one this runner knows");
  }
  // The v1 checks still apply to a v2 engine's scratch.
  StandinEngineSpec bad_scratch;
  bad_scratch.version = 2;
  bad_scratch.program = {1};
  bad_scratch.scratch_per_unit = 4;
  bad_scratch.scratch_unit_binding = 9;
  refused(bad_scratch, "scratch.unit_binding");
}

TEST(a_program_executorch_refuses_is_refused_at_init) {
  auto r = executor(std::vector<uint8_t>(256, 0x5A), kAddRoles);
  CHECK_ERR(r, Error::EngineFormat);
  if (!r.ok()) CHECK_EQ(r.failure().location, std::string("forward.delegates[0].engine"));
}

TEST(runs_executorchs_add_as_an_engine) {
  if (g_add_pte.empty()) return;
  auto ex = executor(read_file(g_add_pte), kAddRoles);
  CHECK_OK(ex);
  if (!ex.ok()) return;
  CHECK_EQ(std::string(ex.get()->kind()), std::string("reference-program"));
  CHECK_EQ(ex.get()->streamable_weight_bytes(), uint64_t{1234});
  CHECK(ex.get()->weight_streaming());
  for (int step = 0; step < 3; ++step) {
    float x = 2.5f + step, y = 4.0f * step - 1.0f, out = -99.0f;
    std::vector<BindingView> b = {view("x", true, &x, ScalarType::Float, {1}),
                                  view("y", true, &y, ScalarType::Float, {1}),
                                  view("output0", false, &out, ScalarType::Float, {1})};
    CHECK_OK(ex.get()->check_bindings(b, "forward.delegates[0]"));
    auto need = ex.get()->scratch_bytes(b, "forward.delegates[0]");
    CHECK_OK(need);
    if (need.ok()) CHECK_EQ(need.get(), uint64_t{96});
    CHECK_OK(ex.get()->enqueue(b, nullptr, 0, rt::StreamRef{}, "forward.delegates[0]"));
    CHECK_EQ(out, x + y);
    CHECK_OK(ex.get()->check_deferred("forward.delegates[0]"));
  }
}

TEST(an_aliased_output_is_written_through_its_input) {
  if (g_add_pte.empty()) return;
  auto ex = executor(read_file(g_add_pte), kAddRoles);
  CHECK_OK(ex);
  if (!ex.ok()) return;
  // The delegate binds an aliased output to its input's memory: the cache
  // (x) ends up holding x + y, read fully before it is written.
  float cache = 1.5f, y = 0.25f;
  for (int step = 0; step < 3; ++step) {
    std::vector<BindingView> b = {view("cache", true, &cache, ScalarType::Float, {1}),
                                  view("y", true, &y, ScalarType::Float, {1}),
                                  view("cache_out", false, &cache, ScalarType::Float, {1})};
    CHECK_OK(ex.get()->check_bindings(b, "d"));
    CHECK_OK(ex.get()->enqueue(b, nullptr, 0, rt::StreamRef{}, "d"));
  }
  CHECK_EQ(cache, 1.5f + 3 * 0.25f);
}

TEST(bindings_of_another_type_or_shape_are_refused) {
  if (g_add_pte.empty()) return;
  auto ex = executor(read_file(g_add_pte), kAddRoles);
  CHECK_OK(ex);
  if (!ex.ok()) return;
  float f[2] = {0, 0}, out = 0;
  int64_t i = 0;
  std::vector<BindingView> wrong_type = {view("x", true, &i, ScalarType::Long, {1}),
                                         view("y", true, f, ScalarType::Float, {1}),
                                         view("output0", false, &out, ScalarType::Float, {1})};
  auto r = ex.get()->check_bindings(wrong_type, "forward.delegates[0]");
  CHECK_ERR(r, Error::DelegateExecutionFailed);
  if (!r.ok()) {
    CHECK(r.failure().message.find("binding 'x' (input 0 of the engine's program) is int64[1]") != std::string::npos);
    CHECK(r.failure().message.find("expects float32[1]") != std::string::npos);
  }
  std::vector<BindingView> wrong_shape = {view("x", true, f, ScalarType::Float, {1}),
                                          view("y", true, f, ScalarType::Float, {1}),
                                          view("output0", false, f, ScalarType::Float, {2})};
  auto s = ex.get()->check_bindings(wrong_shape, "forward.delegates[0]");
  CHECK_ERR(s, Error::DelegateExecutionFailed);
  if (!s.ok()) CHECK(s.failure().message.find("'output0' (output 0") != std::string::npos);
}

TEST(input_and_output_counts_must_equal_the_bindings) {
  if (g_add_pte.empty()) return;
  const auto program = read_file(g_add_pte);
  for (const std::vector<bool>& roles : std::vector<std::vector<bool>>{
           {true, false}, {true, true, true, false}, {true, true, false, false}, {true, true}}) {
    auto r = executor(program, roles);
    CHECK_ERR(r, Error::EngineFormat);
    if (!r.ok()) {
      CHECK_EQ(r.failure().location, std::string("forward.delegates[0].engine"));
      CHECK(r.failure().message.find("takes 2 inputs and returns 1 outputs") != std::string::npos);
    }
  }
}

TEST(a_missing_kernel_is_operator_missing) {
  if (g_missing_ops_pte.empty()) return;
  const auto program = read_file(g_missing_ops_pte);
  // The roles its forward has, so only the kernels are missing.
  auto loader = executorch::extension::FileDataLoader::from(g_missing_ops_pte.c_str());
  CHECK(loader.ok());
  if (!loader.ok()) return;
  auto p = et::Program::load(&loader.get());
  CHECK(p.ok());
  if (!p.ok()) return;
  auto meta = p->method_meta("forward");
  CHECK(meta.ok());
  if (!meta.ok()) return;
  std::vector<bool> roles(meta->num_inputs(), true);
  roles.resize(meta->num_inputs() + meta->num_outputs(), false);
  auto r = executor(program, roles);
  CHECK_ERR(r, Error::OperatorMissing);
  if (!r.ok()) CHECK(r.failure().message.find("no kernel") != std::string::npos);
}

TEST(the_backend_runs_a_version_2_blob_with_the_program_executor) {
  if (g_add_pte.empty()) return;
  trtx::et::register_device_allocator();
  trtx::et::device_allocator().configure({rt::Target::Host, trtx::et::ArenaFill::Poison, {}});
  CHECK(trtx::backend::register_tensorrt_backend() == et::Error::Ok);
  trtx::backend::default_program_state().configure({rt::Target::Host, {}, trtx::backend::TrtContract::ZeroCopy});
  et::BackendInterface* backend = et::get_backend_class("TensorRTBackend");
  CHECK(backend != nullptr);
  if (backend == nullptr) return;
  const std::string metadata =
      "{\"io_bindings\":[{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[1],\"is_input\":true},"
      "{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[1],\"is_input\":true},"
      "{\"name\":\"output0\",\"dtype\":\"float32\",\"shape\":[1],\"is_input\":false}],"
      "\"hardware_compatible\":false,\"device_id\":0,\"serialized_metadata\":\"\",\"target_platform\":\"linux\"}";
  std::vector<uint8_t> blob = trtx::test::make_trt_blob("TR02", metadata, v2_engine(read_file(g_add_pte)));
  static uint8_t arena[4096];
  et::MemoryAllocator runtime_allocator(sizeof arena, arena);
  et::BackendInitContext ctx(&runtime_allocator, nullptr, "v2method", nullptr, {});
  et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  auto h = backend->init(ctx, &processed, {});
  CHECK(h.ok());
  if (!h.ok()) return;
  const auto infos = trtx::backend::default_program_state().delegate_infos("v2method");
  CHECK(infos.size() == 1 && infos[0].engine == "reference-program");
  float x = 3.0f, y = 0.5f, out = 0.0f;
  int32_t sizes[1] = {1};
  uint8_t order[1] = {0};
  executorch::aten::TensorImpl xi(executorch::aten::ScalarType::Float, 1, sizes, &x, order);
  executorch::aten::TensorImpl yi(executorch::aten::ScalarType::Float, 1, sizes, &y, order);
  executorch::aten::TensorImpl oi(executorch::aten::ScalarType::Float, 1, sizes, &out, order);
  et::EValue xv{executorch::aten::Tensor(&xi)}, yv{executorch::aten::Tensor(&yi)}, ov{executorch::aten::Tensor(&oi)};
  std::vector<et::EValue*> args = {&xv, &yv, &ov};
  et::BackendExecutionContext exec;
  CHECK(backend->execute(exec, h.get(), et::Span<et::EValue*>(args.data(), args.size())) == et::Error::Ok);
  CHECK_EQ(out, 3.5f);
  backend->destroy(h.get());
}

int main(int argc, char** argv) {
  if (argc > 1) g_add_pte = argv[1];
  if (argc > 2) g_missing_ops_pte = argv[2];
  if (g_add_pte.empty()) std::fprintf(stderr, "no add.pte given: the program executor cases are skipped\n");
  return trtx::test::run_all();
}
