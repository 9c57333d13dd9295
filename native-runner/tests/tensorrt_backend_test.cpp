// TensorRTBackend as ExecuTorch sees it: found through ExecuTorch's backend
// registry, init() from a processed blob and compile specs, execute() with a
// DelegateCall's EValues, destroy(). On the host stand-in of a CPU build:
// elision from arity, staged and zero-copy agree, the stock Torch-TensorRT
// contract refuses a zero-copy call, a TensorRT plan is refused, the load-time
// budget option, caller-stream syncs, waits and drains.
#include "trtx/backend/tensorrt_backend.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/device_memory_buffer.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "support/blob_builder.h"
#include "support/check.h"
#include "trtx/et/caller_stream.h"
#include "trtx/et/device_allocator.h"
#include "trtx/et/recorded_failure.h"

namespace et = executorch::runtime;
using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using trtx::backend::TrtContract;
using trtx::test::StandinEngineSpec;
using trtx::test::StandinStepSpec;

namespace {

// Bindings: 0 input_pos int64[1], 1 x f32[1,8], 2 k_cache f32[1,4,8] (in);
// 3 logits f32[1,8], 4 k_cache_out f32[1,4,8] aliased to k_cache (out).
const char* kMetadata =
    "{\"io_bindings\":["
    "{\"name\":\"input_pos\",\"dtype\":\"int64\",\"shape\":[1],\"is_input\":true},"
    "{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[1,8],\"is_input\":true},"
    "{\"name\":\"k_cache\",\"dtype\":\"float32\",\"shape\":[1,4,8],\"is_input\":true},"
    "{\"name\":\"logits\",\"dtype\":\"float32\",\"shape\":[1,8],\"is_input\":false},"
    "{\"name\":\"k_cache_out\",\"dtype\":\"float32\",\"shape\":[1,4,8],\"is_input\":false}],"
    "\"aliased_io\":[{\"output\":\"k_cache_out\",\"input\":\"k_cache\",\"kind\":\"kv_cache_update\"}],"
    "\"hardware_compatible\":false,\"device_id\":0,\"serialized_metadata\":\"\",\"target_platform\":\"linux\"}";

std::vector<uint8_t> kv_blob(bool tensorrt_plan = false, int device_id = 0) {
  StandinEngineSpec e;
  StandinStepSpec kv;
  kv.kind = StandinStepSpec::Kind::KvWrite;
  kv.a = 2;
  kv.b = 0;
  kv.c = 1;
  kv.seq_dim = 1;
  StandinStepSpec attend;
  attend.kind = StandinStepSpec::Kind::Attend;
  attend.caches = {2};
  attend.a = 1;
  attend.b = 3;
  e.steps = {kv, attend};
  e.scratch_base = 64;
  e.streamable = 4096;
  e.streaming = true;
  std::vector<uint8_t> engine = trtx::test::build_standin_engine(e);
  if (tensorrt_plan) std::memcpy(engine.data(), "ftrt", 4);
  std::string metadata = kMetadata;
  const std::string id = "\"device_id\":0";
  metadata.replace(metadata.find(id), id.size(), "\"device_id\":" + std::to_string(device_id));
  return trtx::test::make_trt_blob("TR02", metadata, engine);
}

et::BackendInterface* backend() {
  trtx::et::register_device_allocator();
  trtx::et::device_allocator().configure({trtx::runtime::Target::Host, trtx::et::ArenaFill::Poison, {}});
  CHECK(trtx::backend::register_tensorrt_backend() == et::Error::Ok);
  return et::get_backend_class("TensorRTBackend");
}

struct Spec {
  std::string key, value;
};

struct Loaded {
  et::BackendInterface* backend = nullptr;
  et::DelegateHandle* handle = nullptr;
  et::Error error = et::Error::Ok;
  ~Loaded() {
    if (handle != nullptr) backend->destroy(handle);
  }
};

std::unique_ptr<Loaded> init(const std::string& method, std::vector<Spec> specs, std::vector<uint8_t> blob,
                             TrtContract contract = TrtContract::ZeroCopy,
                             std::vector<et::BackendOption> runtime_specs = {}) {
  auto l = std::make_unique<Loaded>();
  l->backend = backend();
  trtx::backend::default_program_state().configure({trtx::runtime::Target::Host, {}, contract});
  static uint8_t arena[4096];
  et::MemoryAllocator runtime_allocator(sizeof arena, arena);
  et::BackendInitContext ctx(&runtime_allocator, nullptr, method.c_str(), nullptr,
                             et::Span<const et::BackendOption>(runtime_specs.data(), runtime_specs.size()));
  std::vector<et::CompileSpec> cs;
  for (Spec& s : specs) cs.push_back({s.key.c_str(), {s.value.data(), s.value.size()}});
  et::FreeableBuffer processed(blob.data(), blob.size(), nullptr);
  auto h = l->backend->init(ctx, &processed, et::ArrayRef<et::CompileSpec>(cs.data(), cs.size()));
  if (h.ok()) {
    l->handle = h.get();
  } else {
    l->error = h.error();
  }
  return l;
}

// A tensor over `data`, tagged for the device when `cuda`.
struct T {
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::unique_ptr<TensorImpl> impl;
  et::EValue value;
  T(ScalarType type, std::vector<int32_t> s, void* data, bool cuda) : sizes(std::move(s)) {
    for (size_t i = 0; i < sizes.size(); ++i) dim_order.push_back(static_cast<uint8_t>(i));
    impl = std::make_unique<TensorImpl>(type, static_cast<ssize_t>(sizes.size()), sizes.data(), data, dim_order.data(),
                                        nullptr, executorch::aten::TensorShapeDynamism::STATIC,
                                        cuda ? et::etensor::DeviceType::CUDA : et::etensor::DeviceType::CPU, 0);
    value = et::EValue(Tensor(impl.get()));
  }
};

et::DeviceMemoryBuffer device(size_t n, int index = 0) {
  auto b =
      et::DeviceMemoryBuffer::create(n, et::etensor::DeviceType::CUDA, static_cast<et::etensor::DeviceIndex>(index));
  return b.ok() ? std::move(b.get()) : et::DeviceMemoryBuffer();
}

// One decode program's state: the cache, as staged or zero-copy would hold it.
struct Decode {
  bool zero_copy;
  int64_t pos = 0;
  float x[8];
  float logits[8] = {0};
  std::vector<float> host_cache = std::vector<float>(32, 0.0f);  // staged: the host buffer
  int dev;
  et::DeviceMemoryBuffer cache = device(128, dev);      // zero-copy: the buffer; staged: the staging copy
  et::DeviceMemoryBuffer cache_out = device(128, dev);  // staged: the aliased output
  // What _h2d_copy placed on the device for the delegate, and its logits.
  et::DeviceMemoryBuffer pos_d = device(8, dev), x_d = device(32, dev), logits_d = device(32, dev);
  explicit Decode(bool zc, int on = 0) : zero_copy(zc), dev(on) {
    std::memset(cache.data(), 0, 128);  // what an application does first
  }

  et::Error step(Loaded& l, int s, size_t drop = 0) {
    pos = s;
    for (int i = 0; i < 8; ++i) x[i] = static_cast<float>((s * 7 + i * 13) % 29 - 14) / 16.0f;
    std::memcpy(pos_d.data(), &pos, 8);
    std::memcpy(x_d.data(), x, 32);
    if (!zero_copy) std::memcpy(cache.data(), host_cache.data(), 128);  // _h2d_copy
    T p(ScalarType::Long, {1}, pos_d.data(), true), xt(ScalarType::Float, {1, 8}, x_d.data(), true);
    T c(ScalarType::Float, {1, 4, 8}, cache.data(), true), lg(ScalarType::Float, {1, 8}, logits_d.data(), true);
    T co(ScalarType::Float, {1, 4, 8}, cache_out.data(), true);
    std::vector<et::EValue*> args = {&p.value, &xt.value, &c.value, &lg.value};
    if (!zero_copy) args.push_back(&co.value);
    args.resize(args.size() - drop);
    et::BackendExecutionContext ctx;
    et::Error e = l.backend->execute(ctx, l.handle, et::Span<et::EValue*>(args.data(), args.size()));
    std::memcpy(logits, logits_d.data(), 32);
    if (e == et::Error::Ok && !zero_copy) std::memcpy(host_cache.data(), cache_out.data(), 128);  // _d2h + copy_
    return e;
  }
  std::vector<float> cache_now() const {
    std::vector<float> out(32);
    std::memcpy(out.data(), zero_copy ? cache.data() : host_cache.data(), 128);
    return out;
  }
};

const std::vector<Spec> kStamp = {{"zero_copy_kv", "[\"k_cache_out\"]"}};

}  // namespace

TEST(registered_under_its_id) {
  CHECK(backend() != nullptr);
  CHECK(backend()->is_available());
}

TEST(staged_and_zero_copy_agree_step_by_step) {
  auto staged = init("decode", {}, kv_blob());
  auto zc = init("decode", kStamp, kv_blob());
  CHECK(staged->handle != nullptr && zc->handle != nullptr);
  if (staged->handle == nullptr || zc->handle == nullptr) return;
  Decode a(false), b(true);
  for (int s = 0; s < 4; ++s) {
    CHECK(a.step(*staged, s) == et::Error::Ok);
    CHECK(b.step(*zc, s) == et::Error::Ok);
    CHECK(std::memcmp(a.logits, b.logits, sizeof a.logits) == 0);
    CHECK(a.cache_now() == b.cache_now());
  }
  CHECK(a.cache_now() != std::vector<float>(32, 0.0f));
  const auto infos = trtx::backend::default_program_state().delegate_infos("decode");
  CHECK_EQ(infos.size(), size_t{2});
  if (infos.size() == 2) {
    CHECK_EQ(infos[0].elision, std::string("staged"));
    CHECK_EQ(infos[1].elision, std::string("zero-copy"));
    CHECK_EQ(infos[1].index, size_t{1});
    CHECK_EQ(infos[0].executes, uint64_t{4});
    // Staged: the aliased output is reflected into its own argument.
    CHECK_EQ(infos[0].copies.d2d_bytes, uint64_t{4 * 128});
    CHECK_EQ(infos[1].copies.d2d_bytes, uint64_t{0});
  }
}

TEST(any_other_arity_is_refused) {
  auto l = init("arity", {}, kv_blob());
  Decode a(false);
  CHECK(a.step(*l, 0, /*drop=*/2) == et::Error::InvalidArgument);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->code == trtx::Error::DelegateArity);
  CHECK(f.has_value() && f->message.find("takes 5 (3 inputs + 2 outputs)") != std::string::npos);
  CHECK(f.has_value() && f->message.find("or 4 (zero-copy") != std::string::npos);
}

TEST(zero_copy_call_needs_the_stamp_and_a_stamp_needs_the_call) {
  auto unstamped = init("stamp", {}, kv_blob());
  Decode zc(true);
  CHECK(zc.step(*unstamped, 0) != et::Error::Ok);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->code == trtx::Error::CompileSpecInvalid);
  auto stamped = init("stamp", kStamp, kv_blob());
  Decode staged(false);
  CHECK(staged.step(*stamped, 0) != et::Error::Ok);
  f = trtx::et::take_failure();
  CHECK(f.has_value() && f->message.find("stamped") != std::string::npos);
}

TEST(stock_torch_tensorrt_fails_a_zero_copy_call_on_first_execute) {
  auto stock = init("stock", kStamp, kv_blob(), TrtContract::Stock);
  CHECK(stock->handle != nullptr);  // it loads
  Decode zc(true);
  CHECK(zc.step(*stock, 0) == et::Error::InvalidArgument);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->message.find("expected at least 5 args") != std::string::npos);
  Decode staged(false);
  CHECK(staged.step(*stock, 0) == et::Error::Ok);
}

TEST(a_tensorrt_plan_is_refused_at_init) {
  auto l = init("plan", {}, kv_blob(/*tensorrt_plan=*/true));
  CHECK(l->handle == nullptr);
  CHECK(l->error == et::Error::NotSupported);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->code == trtx::Error::EngineNotExecutable);
}

TEST(load_time_budget_option_wins_over_the_spec_and_is_clamped) {
  et::BackendOptions<1> opts;
  CHECK(opts.set_option("weight_streaming_budget", "1000000") == et::Error::Ok);
  auto l = init("budget", {{"weight_streaming_budget", "100"}}, kv_blob(), TrtContract::ZeroCopy, {opts.view()[0]});
  auto infos = trtx::backend::default_program_state().delegate_infos("budget");
  CHECK_EQ(infos.size(), size_t{1});
  if (!infos.empty()) {
    CHECK_EQ(infos[0].budget.source, std::string("option"));
    CHECK(infos[0].budget.clamped);
    CHECK(infos[0].budget.effective == std::optional<uint64_t>(4096));
  }
  et::BackendOptions<1> wrong;
  CHECK(wrong.set_option("weight_streaming_budget", 1000) == et::Error::Ok);
  auto bad = init("budget-int", {}, kv_blob(), TrtContract::ZeroCopy, {wrong.view()[0]});
  CHECK(bad->handle == nullptr);
  (void)trtx::et::take_failure();
}

TEST(an_aliased_input_must_be_device_memory) {
  auto l = init("host-cache", {}, kv_blob());
  int64_t pos = 0;
  float x[8] = {0}, logits[8], cache[32] = {0}, out[32];
  T p(ScalarType::Long, {1}, &pos, false), xt(ScalarType::Float, {1, 8}, x, false);
  T c(ScalarType::Float, {1, 4, 8}, cache, false), lg(ScalarType::Float, {1, 8}, logits, false);
  T co(ScalarType::Float, {1, 4, 8}, out, false);
  std::vector<et::EValue*> args = {&p.value, &xt.value, &c.value, &lg.value, &co.value};
  et::BackendExecutionContext ctx;
  CHECK(l->backend->execute(ctx, l->handle, et::Span<et::EValue*>(args.data(), args.size())) != et::Error::Ok);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->message.find("must be device-resident") != std::string::npos);
  // Tagged CUDA, living in host memory: a host-planned program.
  T tagged(ScalarType::Float, {1, 4, 8}, cache, true);
  args[2] = &tagged.value;
  CHECK(l->backend->execute(ctx, l->handle, et::Span<et::EValue*>(args.data(), args.size())) != et::Error::Ok);
  f = trtx::et::take_failure();
  CHECK(f.has_value() && f->message.find("host arena") != std::string::npos);
}

TEST(caller_stream_skips_the_sync_waits_next_time_and_drains) {
  auto l = init("stream", kStamp, kv_blob());
  trtx::runtime::DeviceContext host(trtx::runtime::Target::Host, 0);
  auto stream = host.create_stream(true);
  CHECK(stream.ok());
  if (!stream.ok()) return;
  Decode zc(true);
  {
    trtx::et::CallerStreamGuard guard(stream.get());
    CHECK(zc.step(*l, 0) == et::Error::Ok);
    CHECK(zc.step(*l, 1) == et::Error::Ok);
  }
  auto infos = trtx::backend::default_program_state().delegate_infos("stream");
  CHECK(!infos.empty() && infos[0].syncs_skipped == 2 && infos[0].waits == 1 && infos[0].syncs_performed == 0);
  CHECK_OK(trtx::backend::default_program_state().drain("stream"));
  infos = trtx::backend::default_program_state().delegate_infos("stream");
  CHECK(!infos.empty() && infos[0].drains == 1);
  // Without a caller stream it synchronizes.
  CHECK(zc.step(*l, 2) == et::Error::Ok);
  infos = trtx::backend::default_program_state().delegate_infos("stream");
  CHECK(!infos.empty() && infos[0].syncs_performed == 1);
  host.destroy_stream(stream.get());
}

TEST(target_device_and_blob_device_id_must_agree) {
  // ExecuTorch plans the I/O on target_device; Torch-TensorRT runs the engine
  // on device_id. Disagreeing, the engine would use another device's memory.
  auto l = init("swapped", {{"target_device", "cuda:0"}}, kv_blob(false, 1));
  CHECK(l->handle == nullptr);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->code == trtx::Error::DeviceMismatch);
  CHECK(f.has_value() && f->location == "swapped.delegates[0].compile_specs(target_device)");
  auto agreeing = init("agreeing", {{"target_device", "cuda:1"}}, kv_blob(false, 1));
  CHECK(agreeing->handle != nullptr);
}

TEST(an_engine_refuses_another_devices_memory_and_runs_on_its_own) {
  auto l = init("on1", {{"target_device", "cuda:1"}, kStamp[0]}, kv_blob(false, 1));
  CHECK(l->handle != nullptr);
  if (l->handle == nullptr) return;
  Decode wrong(true, 0);  // every argument in cuda:0 memory
  CHECK(wrong.step(*l, 0) != et::Error::Ok);
  auto f = trtx::et::take_failure();
  CHECK(f.has_value() && f->code == trtx::Error::DeviceMismatch);
  CHECK(f.has_value() && f->message.find("memory of cuda:0 but the engine runs on cuda:1") != std::string::npos);
  Decode right(true, 1), reference(true, 0);
  auto l0 = init("on0", {kStamp[0]}, kv_blob());
  for (int s = 0; s < 3; ++s) {
    CHECK(right.step(*l, s) == et::Error::Ok);
    CHECK(reference.step(*l0, s) == et::Error::Ok);
    CHECK(std::memcmp(right.logits, reference.logits, sizeof right.logits) == 0);
  }
  CHECK(right.cache_now() == reference.cache_now());
}

TEST(caller_streams_are_per_device) {
  auto l = init("per_device", {{"target_device", "cuda:1"}, kStamp[0]}, kv_blob(false, 1));
  CHECK(l->handle != nullptr);
  if (l->handle == nullptr) return;
  trtx::runtime::DeviceContext host0(trtx::runtime::Target::Host, 0), host1(trtx::runtime::Target::Host, 1);
  auto s0 = host0.create_stream(true), s1 = host1.create_stream(true);
  CHECK(s0.ok() && s1.ok());
  if (!s0.ok() || !s1.ok()) return;
  Decode zc(true, 1);
  {
    // A stream of cuda:0 cannot order cuda:1's work: the engine synchronizes.
    trtx::et::CallerStreamGuard guard(s0.get(), 0);
    CHECK(trtx::et::caller_stream(1) == std::nullopt);
    CHECK(zc.step(*l, 0) == et::Error::Ok);
    {
      trtx::et::CallerStreamGuard guard1(s1.get(), 1);
      CHECK(trtx::et::caller_stream(1)->handle == s1.get().handle);
      CHECK(zc.step(*l, 1) == et::Error::Ok);
    }
    CHECK(trtx::et::caller_stream(1) == std::nullopt);
    CHECK(trtx::et::caller_stream(0)->handle == s0.get().handle);
  }
  CHECK(!trtx::et::any_caller_stream());
  auto infos = trtx::backend::default_program_state().delegate_infos("per_device");
  CHECK(!infos.empty() && infos[0].syncs_performed == 1 && infos[0].syncs_skipped == 1);
  CHECK_OK(trtx::backend::default_program_state().drain("per_device"));
  host0.destroy_stream(s0.get());
  host1.destroy_stream(s1.get());
}

int main() { return trtx::test::run_all(); }
