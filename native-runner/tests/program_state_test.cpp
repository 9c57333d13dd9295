// Two programs in one process, the shape a server or a test harness takes:
// both have a method `forward` whose one TensorRT delegate computes
// y = scale * x + bias, each program with its own scale, loaded by
// ExecuTorch's Module and bound to its own TensorRTBackend ProgramState.
// Each program's handles, delegate indices, counters and configuration are
// its own; the method name they share conflates nothing.
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/module/module.h>

#include <memory>
#include <string>
#include <vector>

#include "support/blob_builder.h"
#include "support/check.h"
#include "support/program_builder.h"
#include "trtx/backend/tensorrt_backend.h"
#include "trtx/et/device_allocator.h"

namespace et = executorch::runtime;
namespace rt = trtx::runtime;
using executorch::aten::ScalarType;
using executorch::aten::TensorImpl;
using trtx::backend::ProgramState;

namespace {

// float32[2] x -> float32[2] y, one Affine step.
std::vector<uint8_t> affine_blob(float scale, float bias) {
  const std::string metadata =
      "{\"io_bindings\":[{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[2],\"is_input\":true},"
      "{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[2],\"is_input\":false}],"
      "\"hardware_compatible\":false,\"device_id\":0,\"serialized_metadata\":\"\",\"target_platform\":\"linux\"}";
  trtx::test::StandinEngineSpec e;
  trtx::test::StandinStepSpec affine;
  affine.a = 0;
  affine.b = 1;
  affine.scale = scale;
  affine.bias = bias;
  e.steps = {affine};
  return trtx::test::make_trt_blob("TR01", metadata, trtx::test::build_standin_engine(e));
}

void set_up_process() {
  trtx::et::register_device_allocator();
  trtx::et::device_allocator().configure({rt::Target::Host, trtx::et::ArenaFill::Poison, {}});
  CHECK(trtx::backend::register_tensorrt_backend() == et::Error::Ok);
}

// One program as an application holds it: its bytes, its Module, its state.
struct Program {
  std::vector<uint8_t> bytes;
  ProgramState state;
  std::unique_ptr<executorch::extension::Module> module;
  int scratch_made = 0;  // providers this program's configuration made

  explicit Program(float scale) : bytes(trtx::test::delegate_program("forward", affine_blob(scale, 0.5f))) {
    state.configure({rt::Target::Host, [this](const rt::DeviceContext&, const std::string&) {
                       ++scratch_made;
                       return std::make_shared<rt::PrivateScratch>();
                     }});
    module = std::make_unique<executorch::extension::Module>(
        std::make_unique<executorch::extension::BufferDataLoader>(bytes.data(), bytes.size()));
    et::BackendOptions<1> options;
    CHECK(options.set_option(ProgramState::kOption, state.id()) == et::Error::Ok);
    et::LoadBackendOptionsMap map;
    CHECK(map.set_options(trtx::backend::TensorRTBackend::kId, options.view()) == et::Error::Ok);
    CHECK(module->load(map, et::Program::Verification::InternalConsistency) == et::Error::Ok);
  }

  // forward(x) once; y, or NaN when it failed.
  std::vector<float> forward(float x0, float x1) {
    float x[2] = {x0, x1};
    int32_t sizes[1] = {2};
    uint8_t order[1] = {0};
    TensorImpl xi(ScalarType::Float, 1, sizes, x, order);
    auto out = module->execute("forward", {et::EValue(executorch::aten::Tensor(&xi))});
    CHECK(out.ok());
    if (!out.ok() || out->size() != 1 || !(*out)[0].isTensor()) return {NAN, NAN};
    const float* y = (*out)[0].toTensor().const_data_ptr<float>();
    return {y[0], y[1]};
  }
};

}  // namespace

TEST(two_programs_with_the_same_method_names_keep_their_own_delegates) {
  set_up_process();
  // Both configured before either loads a method: each handle is made with
  // its own program's configuration.
  Program a(2.0f), b(3.0f);
  for (int i = 0; i < 3; ++i) CHECK(a.forward(1.0f, 2.0f) == (std::vector<float>{2.5f, 4.5f}));
  CHECK(b.forward(1.0f, 2.0f) == (std::vector<float>{3.5f, 6.5f}));
  CHECK_EQ(a.scratch_made, 1);
  CHECK_EQ(b.scratch_made, 1);
  const auto ia = a.state.delegate_infos("forward");
  const auto ib = b.state.delegate_infos("forward");
  CHECK_EQ(ia.size(), size_t{1});
  CHECK_EQ(ib.size(), size_t{1});
  if (ia.size() == 1 && ib.size() == 1) {
    CHECK_EQ(ia[0].index, size_t{0});
    CHECK_EQ(ib[0].index, size_t{0});  // forward.delegates[0] in its own program
    CHECK_EQ(ia[0].executes, uint64_t{3});
    CHECK_EQ(ib[0].executes, uint64_t{1});
  }
  // Nothing of either reached the process's default state.
  CHECK(trtx::backend::default_program_state().delegate_infos("forward").empty());
  // Unloading one program's forward leaves the other's running.
  CHECK_OK(a.state.drain("forward"));
  CHECK(a.module->unload_method("forward"));
  CHECK(a.state.delegate_infos("forward").empty());
  CHECK_EQ(b.state.delegate_infos("forward").size(), size_t{1});
  CHECK(b.forward(0.0f, 1.0f) == (std::vector<float>{0.5f, 3.5f}));
  CHECK_OK(b.state.check_deferred("forward"));
}

TEST(a_program_bound_to_a_state_that_is_gone_is_refused_at_init) {
  set_up_process();
  std::unique_ptr<Program> p = std::make_unique<Program>(2.0f);
  const int id = p->state.id();
  p.reset();
  // The id of a destroyed state names nothing: init refuses it rather than
  // joining another program's handles.
  std::vector<uint8_t> blob = affine_blob(1.0f, 0.0f);
  static uint8_t arena[4096];
  et::MemoryAllocator allocator(sizeof arena, arena);
  et::BackendOptions<1> options;
  (void)options.set_option(ProgramState::kOption, id);
  et::BackendInitContext ctx(&allocator, nullptr, "forward", nullptr,
                             et::Span<const et::BackendOption>(options.view().data(), options.view().size()));
  et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  auto h = et::get_backend_class(trtx::backend::TensorRTBackend::kId)->init(ctx, &processed, {});
  CHECK(!h.ok());
  if (!h.ok()) CHECK(h.error() == et::Error::InvalidArgument);
  // An option of another type is refused too.
  et::BackendOptions<1> text;
  (void)text.set_option(ProgramState::kOption, "1");
  et::BackendInitContext text_ctx(&allocator, nullptr, "forward", nullptr,
                                  et::Span<const et::BackendOption>(text.view().data(), text.view().size()));
  et::FreeableBuffer again(blob.data(), blob.size(), nullptr);
  auto t = et::get_backend_class(trtx::backend::TensorRTBackend::kId)->init(text_ctx, &again, {});
  CHECK(!t.ok());
  if (!t.ok()) CHECK(t.error() == et::Error::InvalidArgument);
}

int main() { return trtx::test::run_all(); }
