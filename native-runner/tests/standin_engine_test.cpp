// The reference engine: format checks, each step's arithmetic against the
// schema's formulas, determinism, and (CUDA builds with a GPU) the CUDA
// executor against the CPU one.
#include "trtx/engine/standin_engine.h"

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "support/binding_view.h"
#include "support/blob_builder.h"
#include "support/check.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/half.h"

using trtx::Error;
using trtx::ScalarType;
using trtx::engine::BindingView;
using trtx::engine::parse_standin_engine;
using trtx::test::StandinEngineSpec;
using trtx::test::StandinStepSpec;
namespace rt = trtx::runtime;

namespace {

BindingView view(const std::string& name, bool in, void* data, ScalarType t, std::vector<int64_t> sizes) {
  return trtx::test::binding_view(name, in, data, t, std::move(sizes));
}

// Bindings: 0 pos (int64[1]), 1 x (f32[1,8]), 2 cache (f32[2,3,4]), 3 state
// (f32[2,4]), 4 logits out (f32[8]), 5 state_out (f32[2,4]).
StandinEngineSpec kv_engine() {
  StandinEngineSpec e;
  StandinStepSpec kv;
  kv.kind = StandinStepSpec::Kind::KvWrite;
  kv.a = 2;
  kv.b = 0;
  kv.c = 1;
  kv.seq_dim = 1;
  kv.salt = 0.5f;
  StandinStepSpec ring;
  ring.kind = StandinStepSpec::Kind::RingShift;
  ring.a = 3;
  ring.b = 1;
  ring.c = 5;
  StandinStepSpec att;
  att.kind = StandinStepSpec::Kind::Attend;
  att.caches = {2, 3};
  att.a = 1;
  att.b = 4;
  e.steps = {kv, ring, att};
  return e;
}
const std::vector<bool> kRoles = {true, true, true, true, false, false};

struct Buffers {
  int64_t pos[1] = {1};
  float x[8];
  float cache[24];
  float state[8];
  float logits[8];
  float state_out[8];
  Buffers() {
    for (int i = 0; i < 8; ++i) x[i] = static_cast<float>(i - 3) / 16.0f;
    for (int i = 0; i < 24; ++i) cache[i] = static_cast<float>(i % 5) / 8.0f;
    for (int i = 0; i < 8; ++i) state[i] = static_cast<float>(i) / 4.0f;
    std::memset(logits, 0, sizeof logits);
    std::memset(state_out, 0, sizeof state_out);
  }
  std::vector<BindingView> views() {
    return {view("pos", true, pos, ScalarType::Long, {1}),
            view("x", true, x, ScalarType::Float, {1, 8}),
            view("cache", true, cache, ScalarType::Float, {2, 3, 4}),
            view("state", true, state, ScalarType::Float, {2, 4}),
            view("logits", false, logits, ScalarType::Float, {8}),
            view("state_out", false, state_out, ScalarType::Float, {2, 4})};
  }
};

std::unique_ptr<trtx::engine::EngineExecutor> cpu_executor(const StandinEngineSpec& spec,
                                                           const std::vector<bool>& roles) {
  auto bytes = trtx::test::build_standin_engine(spec);
  auto parsed = parse_standin_engine(bytes.data(), bytes.size(), roles, "d");
  if (!parsed.ok()) return nullptr;
  auto ex = trtx::engine::make_standin_executor(parsed.get(), rt::DeviceContext(rt::Target::Host, 0));
  return ex.ok() ? std::move(ex.get()) : nullptr;
}

}  // namespace

TEST(classifies_engine_bytes) {
  const uint8_t plan[8] = {'f', 't', 'r', 't', 0, 0, 0, 0};
  CHECK(trtx::engine::classify_engine(plan, 8) == trtx::engine::EngineKind::TensorRTPlan);
  auto ref = trtx::test::build_standin_engine(StandinEngineSpec{});
  CHECK(trtx::engine::classify_engine(ref.data(), ref.size()) == trtx::engine::EngineKind::Reference);
  const uint8_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(trtx::engine::classify_engine(junk, 8) == trtx::engine::EngineKind::Unknown);
  CHECK(trtx::engine::classify_engine(junk, 2) == trtx::engine::EngineKind::Unknown);
}

TEST(refuses_unknown_versions_and_corrupt_bytes) {
  StandinEngineSpec v2;
  v2.version = 2;
  auto bytes = trtx::test::build_standin_engine(v2);
  CHECK_ERR(parse_standin_engine(bytes.data(), bytes.size(), kRoles, "d"), Error::EngineFormat);
  auto good = trtx::test::build_standin_engine(kv_engine());
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(n));
    auto r = parse_standin_engine(cut.data(), cut.size(), kRoles, "d");
    CHECK(!r.ok());
  }
  for (size_t i = 0; i < good.size(); ++i) {
    auto m = good;
    m[i] ^= 0xFF;
    (void)parse_standin_engine(m.data(), m.size(), kRoles, "d");
  }
}

TEST(checks_binding_roles_and_indices) {
  StandinEngineSpec e;
  StandinStepSpec a;
  a.kind = StandinStepSpec::Kind::Affine;
  a.a = 0;
  a.b = 0;  // output names an input binding
  e.steps = {a};
  auto bytes = trtx::test::build_standin_engine(e);
  CHECK_ERR(parse_standin_engine(bytes.data(), bytes.size(), {true, false}, "d"), Error::EngineFormat);
  e.steps[0].b = 7;
  bytes = trtx::test::build_standin_engine(e);
  CHECK_ERR(parse_standin_engine(bytes.data(), bytes.size(), {true, false}, "d"), Error::EngineFormat);
  StandinEngineSpec kv = kv_engine();
  kv.steps[0].a = 4;  // KvWrite cache must be an input
  bytes = trtx::test::build_standin_engine(kv);
  CHECK_ERR(parse_standin_engine(bytes.data(), bytes.size(), kRoles, "d"), Error::EngineFormat);
}

TEST(steps_compute_what_the_schema_says) {
  auto ex = cpu_executor(kv_engine(), kRoles);
  CHECK(ex != nullptr);
  if (!ex) return;
  Buffers b;
  Buffers before;
  auto views = b.views();
  CHECK_OK(ex->check_bindings(views, "d"));
  auto need = ex->scratch_bytes(views, "d");
  CHECK_OK(need);
  CHECK_EQ(*need, uint64_t(2 * 8 * 4));  // Attend's partial sums
  std::vector<float> scratch(static_cast<size_t>(*need / 4));
  CHECK_OK(ex->enqueue(views, scratch.data(), *need, rt::StreamRef{}, "d"));
  // KvWrite: cache[o, pos, i] = x[(o*4 + i) mod 8] * (1 + 0.5 o), outer 2, seq 3, inner 4.
  for (int o = 0; o < 2; ++o) {
    for (int s = 0; s < 3; ++s) {
      for (int i = 0; i < 4; ++i) {
        int k = (o * 3 + s) * 4 + i;
        float want = s == 1 ? before.x[(o * 4 + i) % 8] * (1.0f + 0.5f * o) : before.cache[k];
        CHECK_EQ(b.cache[k], want);
      }
    }
  }
  // RingShift: out[r, t] = in[r, t + 1], last column from x[r mod 8].
  for (int r = 0; r < 2; ++r) {
    for (int t = 0; t < 4; ++t) CHECK_EQ(b.state_out[r * 4 + t], t < 3 ? before.state[r * 4 + t + 1] : before.x[r]);
  }
  // Attend over the concatenation [cache (24), state (8)], n = 8.
  std::vector<double> cat(b.cache, b.cache + 24);
  cat.insert(cat.end(), before.state, before.state + 8);
  for (int j = 0; j < 8; ++j) {
    double want = before.x[j % 8];
    for (size_t k = static_cast<size_t>(j); k < cat.size(); k += 8)
      want += cat[k] * ((static_cast<int>(k % 13) - 6) / 64.0);
    CHECK(std::fabs(b.logits[j] - want) < 1e-6);
  }
}

TEST(same_inputs_same_bits) {
  auto ex = cpu_executor(kv_engine(), kRoles);
  if (!ex) return;
  Buffers a, c;
  std::vector<float> s1(64), s2(64, 123.0f);  // scratch contents must not matter
  auto va = a.views();
  auto vc = c.views();
  CHECK_OK(ex->enqueue(va, s1.data(), 256, rt::StreamRef{}, "d"));
  CHECK_OK(ex->enqueue(vc, s2.data(), 256, rt::StreamRef{}, "d"));
  CHECK(std::memcmp(a.logits, c.logits, sizeof a.logits) == 0);
  CHECK(std::memcmp(a.cache, c.cache, sizeof a.cache) == 0);
}

TEST(position_outside_the_cache_is_an_error_and_writes_nothing) {
  auto ex = cpu_executor(kv_engine(), kRoles);
  if (!ex) return;
  for (int64_t pos : {int64_t(3), int64_t(-1), int64_t(1) << 40}) {
    Buffers b;
    b.pos[0] = pos;
    float cache_before[24];
    std::memcpy(cache_before, b.cache, sizeof cache_before);
    std::vector<float> scratch(64);
    auto views = b.views();
    CHECK_ERR(ex->enqueue(views, scratch.data(), 256, rt::StreamRef{}, "d"), Error::DelegateExecutionFailed);
    CHECK(std::memcmp(cache_before, b.cache, sizeof cache_before) == 0);
  }
}

TEST(scratch_need_follows_the_declared_formula) {
  StandinEngineSpec e = kv_engine();
  e.scratch_base = 1000;
  e.scratch_per_unit = 10;
  e.scratch_unit_binding = 2;
  e.scratch_unit_dim = 1;  // seq = 3
  auto ex = cpu_executor(e, kRoles);
  if (!ex) return;
  Buffers b;
  auto need = ex->scratch_bytes(b.views(), "d");
  CHECK(need.ok() && *need == 1030u);
  std::vector<float> small(4);
  auto views = b.views();
  CHECK_ERR(ex->enqueue(views, small.data(), 16, rt::StreamRef{}, "d"), Error::DelegateExecutionFailed);
}

TEST(half_and_bfloat16_round_to_nearest_even) {
  CHECK_EQ(trtx::float_to_half(1.0f), uint16_t(0x3C00));
  CHECK_EQ(trtx::float_to_half(-2.0f), uint16_t(0xC000));
  CHECK_EQ(trtx::float_to_half(65504.0f), uint16_t(0x7BFF));
  CHECK_EQ(trtx::float_to_half(1e6f), uint16_t(0x7C00));
  CHECK_EQ(trtx::float_to_half(5.960464477539063e-08f), uint16_t(0x0001));
  CHECK_EQ(trtx::float_to_half(1.0f + 1.0f / 2048), uint16_t(0x3C00));  // tie to even
  CHECK_EQ(trtx::half_to_float(0x3555), 0.333251953125f);
  CHECK_EQ(trtx::half_to_float(0x0001), 5.960464477539063e-08f);
  CHECK_EQ(trtx::float_to_bf16(1.0f), uint16_t(0x3F80));
  CHECK_EQ(trtx::float_to_bf16(1.00390625f), uint16_t(0x3F80));  // tie to even
  CHECK_EQ(trtx::bf16_to_float(0x4049), 3.140625f);
  for (uint32_t h = 0; h < 0x7C00; ++h)
    CHECK_EQ(trtx::float_to_half(trtx::half_to_float(static_cast<uint16_t>(h))), uint16_t(h));
}

#if TRTX_HAVE_CUDA
TEST(cuda_executor_matches_the_cpu_bit_for_bit) {
  if (rt::cuda_device_count() == 0) {
    std::fprintf(stderr, "  (no CUDA device: the CUDA executor is exercised on the GPU machine)\n");
    return;
  }
  rt::DeviceContext dev(rt::Target::Cuda, 0);
  CHECK_OK(dev.activate());
  auto bytes = trtx::test::build_standin_engine(kv_engine());
  auto parsed = parse_standin_engine(bytes.data(), bytes.size(), kRoles, "d");
  CHECK_OK(parsed);
  if (!parsed.ok()) return;
  auto gpu = trtx::engine::make_standin_executor(parsed.get(), dev);
  CHECK_OK(gpu);
  auto cpu = cpu_executor(kv_engine(), kRoles);
  if (!gpu.ok() || !cpu) return;

  Buffers host;
  auto hv = host.views();
  std::vector<BindingView> dv = hv;
  auto s = dev.create_stream(true);
  CHECK_OK(s);
  for (auto& v : dv) {
    auto p = dev.allocate(v.nbytes, *s);
    CHECK_OK(p);
    v.data = p.get();
  }
  for (size_t i = 0; i < dv.size(); ++i) {
    CHECK_OK(dev.copy(dv[i].data, rt::Placement::Device, hv[i].data, rt::Placement::Host, hv[i].nbytes, *s, nullptr));
  }
  auto scratch = dev.allocate(256, *s);
  CHECK_OK((*gpu)->enqueue(dv, scratch.get(), 256, *s, "d"));
  std::vector<float> cpu_scratch(64);
  CHECK_OK(cpu->enqueue(hv, cpu_scratch.data(), 256, rt::StreamRef{}, "d"));
  for (size_t i = 0; i < dv.size(); ++i) {
    std::vector<uint8_t> back(dv[i].nbytes);
    CHECK_OK(dev.copy(back.data(), rt::Placement::Host, dv[i].data, rt::Placement::Device, back.size(), *s, nullptr));
    CHECK_OK(dev.synchronize(*s));
    CHECK(std::memcmp(back.data(), hv[i].data, back.size()) == 0);
  }
  CHECK_OK((*gpu)->check_deferred("d"));
  // An out-of-range position is raised after the stream completes.
  int64_t bad = 99;
  CHECK_OK(dev.copy(dv[0].data, rt::Placement::Device, &bad, rt::Placement::Host, 8, *s, nullptr));
  CHECK_OK((*gpu)->enqueue(dv, scratch.get(), 256, *s, "d"));
  CHECK_OK(dev.synchronize(*s));
  CHECK_ERR((*gpu)->check_deferred("d"), Error::DelegateExecutionFailed);
  for (auto& v : dv) dev.release(v.data, *s);
  dev.release(scratch.get(), *s);
  CHECK_OK(dev.synchronize(*s));
  dev.destroy_stream(*s);
}
#endif

int main() { return trtx::test::run_all(); }
