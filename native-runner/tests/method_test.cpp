// Method execution and the delegate runtime contract (domain brief section
// 6) on the KV decode fixture: staged and zero-copy give identical outputs
// and caches at every step, with and without a caller stream; the cache
// persists across steps; elision comes from arity alone; a zero-copy
// delegate under a caller stream skips its sync, records an event the next
// execute waits on, and teardown drains it; a staged one always syncs.
// Runs on the host target, and on CUDA too when the build and machine have it.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "support/check.h"
#include "support/program_builder.h"
#include "trtx/backend/backend.h"
#include "trtx/executor/method.h"
#include "trtx/program/program.h"
#include "trtx/runtime/digest.h"

using trtx::Error;
using trtx::ScalarType;
using namespace trtx::test;
namespace rt = trtx::runtime;
namespace ex = trtx::executor;

namespace {

struct Loaded {
  std::shared_ptr<std::vector<uint8_t>> bytes;
  std::unique_ptr<trtx::program::Program> program;
};

struct OwningLoader : trtx::program::DataLoader {
  std::shared_ptr<std::vector<uint8_t>> data;
  explicit OwningLoader(std::shared_ptr<std::vector<uint8_t>> d) : data(std::move(d)) {}
  uint64_t size() const override { return data->size(); }
  trtx::Status read(uint64_t o, size_t n, void* dst) const override {
    return trtx::program::BufferDataLoader(data->data(), data->size()).read(o, n, dst);
  }
};

trtx::Result<std::unique_ptr<trtx::program::Program>> load(const std::vector<uint8_t>& bytes) {
  trtx::backend::register_builtin_backends();
  return trtx::program::Program::load(std::make_unique<OwningLoader>(std::make_shared<std::vector<uint8_t>>(bytes)));
}

struct StepDigests {
  std::string logits;
  std::string k_cache;
  std::string conv_state;
};

struct RunResult {
  bool ok = false;
  Error error = Error::Ok;
  std::string message;
  std::vector<StepDigests> steps;
  std::vector<trtx::backend::DelegateInfo> infos;  // after close
  std::vector<rt::CopyCounters> copies;
};

struct RunConfig {
  rt::Target target = rt::Target::Host;
  bool caller_stream = false;
  int steps = 3;
  bool fresh = false;
  std::optional<uint64_t> budget;
};

std::string digest(const ex::Method& m, const ex::TensorImpl& t) {
  std::vector<uint8_t> bytes;
  if (!m.read_tensor(t, bytes).ok()) return "read-failed";
  return trtx::hex64(trtx::fnv1a64(bytes.data(), bytes.size()));
}

RunResult run(const ProgramSpec& spec, const RunConfig& cfg) {
  RunResult r;
  auto p = load(build_program(spec));
  if (!p.ok()) {
    r.error = p.error();
    r.message = p.failure().message;
    return r;
  }
  rt::DeviceContext dev(cfg.target, 0);
  rt::StreamRef stream;
  if (cfg.caller_stream) {
    auto s = dev.create_stream(/*non_blocking=*/true);
    if (!s.ok()) return r;
    stream = s.get();
  }
  ex::MethodOptions opts;
  opts.device = &dev;
  opts.has_caller_stream = cfg.caller_stream;
  opts.caller_stream = stream;
  opts.budget_option = cfg.budget;
  std::unique_ptr<ex::Method> m;
  auto finish = [&](trtx::Status s) {
    if (m) {
      trtx::Status c = m->close();
      r.infos = m->delegate_infos();
      if (s.ok() && !c.ok()) s = c;
      m.reset();
    }
    if (!s.ok()) {
      r.error = s.error();
      r.message = s.failure().location + ": " + s.failure().message;
    }
    r.ok = s.ok();
    if (cfg.caller_stream) dev.destroy_stream(stream);
  };
  for (int step = 0; step < cfg.steps; ++step) {
    if (!m || cfg.fresh) {
      if (m) (void)m->close();
      auto lm = ex::Method::load(**p, "forward", opts);
      if (!lm.ok()) {
        finish(lm.take_failure());
        return r;
      }
      m = std::move(lm.get());
    }
    // input_pos = step, x = a fixed pattern of (step, index).
    std::vector<uint8_t> pos(8);
    int64_t sv = step;
    std::memcpy(pos.data(), &sv, 8);
    std::vector<uint8_t> x(32);
    for (int k = 0; k < 8; ++k) {
      float f = static_cast<float>((step * 7 + k * 13) % 29 - 14) / 16.0f;
      std::memcpy(x.data() + 4 * k, &f, 4);
    }
    auto s1 = m->write_tensor(*m->input(0).tensor, pos);
    auto s2 = m->write_tensor(*m->input(1).tensor, x);
    if (!s1.ok() || !s2.ok()) {
      finish(s1.ok() ? s2 : s1);
      return r;
    }
    rt::CopyCounters copies;
    trtx::Status s = m->execute(&copies);
    if (!s.ok()) {
      finish(s);
      return r;
    }
    StepDigests d;
    d.logits = digest(*m, *m->output(0).tensor);
    for (const auto& b : m->named_buffers()) {
      if (b.name == "k_cache") d.k_cache = digest(*m, *b.tensor);
      if (b.name == "conv_state") d.conv_state = digest(*m, *b.tensor);
    }
    s = m->check_deferred();
    if (!s.ok()) {
      finish(s);
      return r;
    }
    r.steps.push_back(d);
    r.copies.push_back(copies);
  }
  finish(trtx::ok_status());
  return r;
}

ProgramSpec kv(bool zero_copy) {
  KvOptions o;
  o.zero_copy = zero_copy;
  return make_kv_program(o);
}

std::vector<rt::Target> targets() {
  std::vector<rt::Target> t{rt::Target::Host};
  if (rt::cuda_built() && rt::cuda_device_count() > 0) t.push_back(rt::Target::Cuda);
  return t;
}

const char* target_name(rt::Target t) { return t == rt::Target::Cuda ? "cuda" : "host"; }

}  // namespace

TEST(staged_and_zero_copy_agree_bit_for_bit_at_every_step) {
  for (rt::Target t : targets()) {
    for (bool cs : {false, true}) {
      RunConfig cfg;
      cfg.target = t;
      cfg.caller_stream = cs;
      cfg.steps = 4;
      RunResult staged = run(kv(false), cfg);
      RunResult zero = run(kv(true), cfg);
      if (!staged.ok || !zero.ok) {
        report_failure(__FILE__, __LINE__, std::string(target_name(t)) + ": run failed: " + staged.message + zero.message);
        continue;
      }
      CHECK_EQ(staged.steps.size(), size_t(4));
      CHECK_EQ(zero.steps.size(), size_t(4));
      for (size_t s = 0; s < staged.steps.size() && s < zero.steps.size(); ++s) {
        CHECK_EQ(staged.steps[s].logits, zero.steps[s].logits);
        CHECK_EQ(staged.steps[s].k_cache, zero.steps[s].k_cache);
        CHECK_EQ(staged.steps[s].conv_state, zero.steps[s].conv_state);
        // Every cache changes at every step.
        if (s > 0) {
          CHECK(staged.steps[s].k_cache != staged.steps[s - 1].k_cache);
          CHECK(staged.steps[s].conv_state != staged.steps[s - 1].conv_state);
        }
      }
    }
  }
}

TEST(results_do_not_depend_on_the_caller_stream) {
  for (rt::Target t : targets()) {
    RunConfig off;
    off.target = t;
    RunConfig on = off;
    on.caller_stream = true;
    RunResult a = run(kv(true), off);
    RunResult b = run(kv(true), on);
    CHECK(a.ok && b.ok);
    for (size_t s = 0; s < a.steps.size() && s < b.steps.size(); ++s) {
      CHECK_EQ(a.steps[s].logits, b.steps[s].logits);
      CHECK_EQ(a.steps[s].k_cache, b.steps[s].k_cache);
    }
  }
}

TEST(a_decode_step_sees_what_the_previous_one_wrote) {
  for (bool zc : {false, true}) {
    RunConfig persistent;
    RunConfig fresh;
    fresh.fresh = true;
    RunResult a = run(kv(zc), persistent);
    RunResult b = run(kv(zc), fresh);
    CHECK(a.ok && b.ok);
    if (!a.ok || !b.ok) continue;
    CHECK_EQ(a.steps[0].logits, b.steps[0].logits);
    CHECK(a.steps[1].logits != b.steps[1].logits);
    CHECK(a.steps[2].k_cache != b.steps[2].k_cache);
  }
}

TEST(sync_policy_follows_the_contract) {
  for (rt::Target t : targets()) {
    RunConfig on;
    on.target = t;
    on.caller_stream = true;
    RunConfig off = on;
    off.caller_stream = false;
    RunResult zc_on = run(kv(true), on);
    RunResult zc_off = run(kv(true), off);
    RunResult st_on = run(kv(false), on);
    CHECK(zc_on.ok && zc_off.ok && st_on.ok);
    if (!zc_on.ok || !zc_off.ok || !st_on.ok) continue;
    const auto& z = zc_on.infos[0];
    CHECK_EQ(z.elision, std::string("zero-copy"));
    CHECK_EQ(z.syncs_skipped, uint64_t(3));
    CHECK_EQ(z.syncs_performed, uint64_t(0));
    CHECK_EQ(z.waits, uint64_t(2));   // the second and third execute waited
    CHECK_EQ(z.drains, uint64_t(1));  // teardown drained the last enqueue
    const auto& zo = zc_off.infos[0];
    CHECK_EQ(zo.syncs_performed, uint64_t(3));
    CHECK_EQ(zo.syncs_skipped, uint64_t(0));
    CHECK_EQ(zo.drains, uint64_t(0));
    const auto& s = st_on.infos[0];
    CHECK_EQ(s.elision, std::string("staged"));
    CHECK_EQ(s.syncs_performed, uint64_t(3));
    CHECK_EQ(s.syncs_skipped, uint64_t(0));
    CHECK_EQ(s.copies.d2d_bytes, uint64_t(3 * 128));  // the reflect of k_cache_out
  }
}

TEST(zero_copy_moves_no_cache_bytes_between_host_and_device) {
  RunResult staged = run(kv(false), RunConfig{});
  RunResult zero = run(kv(true), RunConfig{});
  CHECK(staged.ok && zero.ok);
  if (!staged.ok || !zero.ok) return;
  // Staged: pos 8 + x 32 + cache 128 + conv 16 in; logits 32 + cache 128 + conv 16 out.
  CHECK_EQ(staged.copies[0].h2d_bytes, uint64_t(184));
  CHECK_EQ(staged.copies[0].d2h_bytes, uint64_t(176));
  CHECK_EQ(zero.copies[0].h2d_bytes, uint64_t(56));
  CHECK_EQ(zero.copies[0].d2h_bytes, uint64_t(48));
}

TEST(elision_is_read_from_arity_alone) {
  KvOptions o;
  o.drop_delegate_args = 2;  // neither 7 (staged) nor 6 (zero-copy)
  RunResult r = run(make_kv_program(o), RunConfig{});
  CHECK(!r.ok && r.error == Error::DelegateArity);
  KvOptions z;
  z.zero_copy = true;
  z.drop_delegate_args = 1;
  RunResult r2 = run(make_kv_program(z), RunConfig{});
  CHECK(!r2.ok && r2.error == Error::DelegateArity);
}

TEST(zero_copy_needs_its_compile_spec_and_staged_refuses_one) {
  KvOptions unstamped;
  unstamped.zero_copy = true;
  unstamped.stamp_spec = false;
  RunResult r = run(make_kv_program(unstamped), RunConfig{});
  CHECK(!r.ok && r.error == Error::CompileSpecInvalid);
  ProgramSpec staged = kv(false);
  staged.plans[0].delegates[0].compile_specs.push_back({"zero_copy_kv", "[\"k_cache_out\"]"});
  RunResult r2 = run(staged, RunConfig{});
  CHECK(!r2.ok && r2.error == Error::CompileSpecInvalid);
}

TEST(an_aliased_input_must_be_device_resident) {
  // Zero-copy twin whose cache stayed in the host arena: the engine would
  // write the caller's cache through a host pointer.
  ProgramSpec spec = kv(true);
  auto& cache = spec.plans[0].values[2].tensor;
  cache.cuda = false;
  cache.alloc = std::make_pair(1u, 64ull);
  RunResult r = run(spec, RunConfig{});
  CHECK(!r.ok && r.error == Error::DelegateExecutionFailed);
  CHECK(r.message.find("must be device-resident") != std::string::npos);
}

TEST(h2d_copy_refuses_a_device_source) {
  ProgramSpec spec = kv(true);
  // Stage the (device-planned) cache as well: a staging copy of a zero-copy buffer.
  spec.plans[0].instructions.insert(spec.plans[0].instructions.begin(), InstrSpec::kernel(0, {2, 6, 6}));
  RunResult r = run(spec, RunConfig{});
  CHECK(!r.ok && r.error == Error::KernelFailed);
  CHECK(r.message.find("_h2d_copy: source") != std::string::npos);
}

TEST(budget_resolution_is_reported_per_engine) {
  KvOptions spec_budget;
  spec_budget.budget_spec = "1000";
  RunResult from_spec = run(make_kv_program(spec_budget), RunConfig{});
  CHECK(from_spec.ok);
  if (from_spec.ok) {
    const auto& b = from_spec.infos[0].budget;
    CHECK_EQ(b.source, std::string("spec"));
    CHECK(b.requested == 1000ull && b.effective == 1000ull && !b.clamped);
  }
  RunConfig opt;
  opt.budget = 1ull << 40;
  RunResult from_option = run(make_kv_program(spec_budget), opt);
  CHECK(from_option.ok);
  if (from_option.ok) {
    const auto& b = from_option.infos[0].budget;
    CHECK_EQ(b.source, std::string("option"));
    CHECK(b.clamped && b.effective == 4096ull);
  }
  KvOptions no_stream;
  no_stream.streaming = false;
  no_stream.budget_spec = "5";
  RunResult ignored = run(make_kv_program(no_stream), RunConfig{});
  CHECK(ignored.ok);
  if (ignored.ok) CHECK(!ignored.infos[0].budget.ignored.empty() && !ignored.infos[0].budget.effective.has_value());
  KvOptions malformed;
  malformed.budget_spec = "8GiB";
  RunResult bad = run(make_kv_program(malformed), RunConfig{});
  CHECK(!bad.ok && bad.error == Error::CompileSpecInvalid);
}

TEST(a_tensorrt_plan_is_recognised_and_not_run) {
  ProgramSpec spec = kv(false);
  auto& blob = spec.inline_blobs[0];
  uint32_t engine_off = 0;
  std::memcpy(&engine_off, blob.data() + 12, 4);
  std::memcpy(blob.data() + engine_off, "ftrt", 4);
  RunResult r = run(spec, RunConfig{});
  CHECK(!r.ok && r.error == Error::EngineNotExecutable);
  CHECK_EQ(trtx::error_exit_code(Error::EngineNotExecutable), 3);
}

TEST(a_position_past_the_cache_fails_the_step) {
  for (rt::Target t : targets()) {
    for (bool cs : {false, true}) {
      RunConfig cfg;
      cfg.target = t;
      cfg.caller_stream = cs;
      cfg.steps = 5;  // the cache holds 4 positions
      RunResult r = run(kv(true), cfg);
      CHECK(!r.ok && r.error == Error::DelegateExecutionFailed);
      CHECK_EQ(r.steps.size(), size_t(4));
    }
  }
}

TEST(kernels_compute_add_and_mul_with_a_broadcast_scalar) {
  // out = (c0 * x) + 2 * c1, c1 a one-element constant.
  auto t = [](std::vector<int32_t> sizes, std::optional<uint64_t> off, uint32_t dbi) {
    TensorSpec s;
    s.sizes = std::move(sizes);
    if (off) s.alloc = std::make_pair(1u, *off);
    s.data_buffer_idx = dbi;
    return ValueSpec::of(s);
  };
  PlanSpec p;
  p.values = {t({4}, std::nullopt, 1), t({}, std::nullopt, 2), t({4}, 0, 0), t({4}, 16, 0), t({4}, 32, 0),
              ValueSpec::integer(2)};
  p.inputs = {2};
  p.outputs = {4};
  p.operators = {{"aten::mul", "out"}, {"aten::add", "out"}};
  p.instructions = {InstrSpec::kernel(0, {0, 2, 3, 3}), InstrSpec::kernel(1, {3, 1, 5, 4, 4})};
  p.arena_sizes = {0, 48};
  ProgramSpec spec;
  spec.plans.push_back(p);
  auto f = [](std::vector<float> v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  spec.constant_buffers = {{}, f({1, 2, 3, 4}), f({0.5f})};
  auto prog = load(build_program(spec));
  CHECK_OK(prog);
  if (!prog.ok()) return;
  rt::DeviceContext dev(rt::Target::Host, 0);
  ex::MethodOptions opts;
  opts.device = &dev;
  auto m = ex::Method::load(**prog, "forward", opts);
  CHECK_OK(m);
  if (!m.ok()) return;
  CHECK_OK((*m)->write_tensor(*(*m)->input(0).tensor, f({1, -1, 2, 0.25f})));
  CHECK_OK((*m)->execute(nullptr));
  std::vector<uint8_t> out;
  CHECK_OK((*m)->read_tensor(*(*m)->output(0).tensor, out));
  CHECK(out == f({2, -1, 7, 2}));
}

TEST(kernels_refuse_writes_into_constants) {
  auto t = [](std::optional<uint64_t> off, uint32_t dbi) {
    TensorSpec s;
    s.sizes = {4};
    if (off) s.alloc = std::make_pair(1u, *off);
    s.data_buffer_idx = dbi;
    return ValueSpec::of(s);
  };
  PlanSpec p;
  p.values = {t(0, 0), t(std::nullopt, 1)};
  p.inputs = {0};
  p.outputs = {1};
  p.operators = {{"aten::mul", "out"}};
  p.instructions = {InstrSpec::kernel(0, {0, 0, 1, 1})};
  p.arena_sizes = {0, 16};
  ProgramSpec spec;
  spec.plans.push_back(p);
  spec.constant_buffers = {{}, std::vector<uint8_t>(16, 0)};
  RunResult r;
  auto prog = load(build_program(spec));
  CHECK_OK(prog);
  if (!prog.ok()) return;
  rt::DeviceContext dev(rt::Target::Host, 0);
  ex::MethodOptions opts;
  opts.device = &dev;
  auto m = ex::Method::load(**prog, "forward", opts);
  CHECK_OK(m);
  if (m.ok()) CHECK_ERR((*m)->execute(nullptr), Error::KernelFailed);
}

int main() { return trtx::test::run_all(); }
