#include "run_command.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "json_writer.h"
#include "runner_memory.h"
#include "trtx/backend/backend.h"
#include "trtx/executor/method.h"
#include "trtx/program/program.h"
#include "trtx/runtime/digest.h"
#include "trtx/runtime/half.h"
#include "version.h"

namespace trtx::cli {

using executor::EValue;
using executor::Method;
using executor::Tag;
using executor::TensorImpl;
using runtime::Placement;

namespace {

struct OutputRecord {
  int index = 0;
  int value = 0;
  std::string kind;
  bool is_tensor = false;
  std::string dtype;
  std::vector<int64_t> sizes;
  std::string digest;
};

struct BufferRecord {
  std::string name;
  int value = 0;
  std::string dtype;
  std::vector<int64_t> sizes;
  std::string placement;
  std::string digest;
};

struct DelegateStep {
  size_t index = 0;
  std::string elision;
  uint64_t syncs_performed = 0, syncs_skipped = 0, waits = 0;
  runtime::CopyCounters copies;
};

struct StepRecord {
  int step = 0;
  // Wall time of the method's execute and its final synchronize.
  double step_us = 0.0;
  std::vector<OutputRecord> outputs;
  std::vector<BufferRecord> buffers;
  runtime::CopyCounters copies;
  std::vector<DelegateStep> delegates;
};

struct MethodRecord {
  std::string name;
  std::vector<backend::DelegateInfo> delegates;
  std::vector<StepRecord> steps;
};

struct Report {
  std::string program_path;
  uint64_t program_bytes = 0;
  std::vector<std::string> program_methods;
  bool program_loaded = false;
  std::string device_kind = "cpu";
  std::string device_name = "cpu";
  int device_index = -1;
  std::vector<MethodRecord> methods;
  std::vector<Failure> errors;
};

// Step inputs: an integer input's element k gets step + k (so a one-element
// position gets the step: the decode position); a float input gets
// ((7 step + 13 k) mod 29 - 14) / 16, exact in every float type.
float float_pattern(int step, uint64_t k) {
  uint64_t v = (uint64_t(step) * 7 + k * 13) % 29;
  return (static_cast<float>(v) - 14.0f) / 16.0f;
}

std::vector<uint8_t> input_bytes(const TensorImpl& t, int step) {
  std::vector<uint8_t> out(static_cast<size_t>(t.nbytes), 0);
  for (uint64_t k = 0; k < t.numel; ++k) {
    uint8_t* p = out.data() + k * element_size(t.dtype);
    auto put = [p](const void* src, size_t n) { std::memcpy(p, src, n); };
    int64_t iv = int64_t(step) + int64_t(k);
    switch (t.dtype) {
      case ScalarType::Long: put(&iv, 8); break;
      case ScalarType::UInt64: { uint64_t x = uint64_t(iv); put(&x, 8); break; }
      case ScalarType::Int: { auto x = static_cast<int32_t>(iv); put(&x, 4); break; }
      case ScalarType::UInt32: { auto x = static_cast<uint32_t>(iv); put(&x, 4); break; }
      case ScalarType::Short: { auto x = static_cast<int16_t>(iv); put(&x, 2); break; }
      case ScalarType::UInt16: { auto x = static_cast<uint16_t>(iv); put(&x, 2); break; }
      case ScalarType::Char:
      case ScalarType::Byte: { auto x = static_cast<uint8_t>(iv); put(&x, 1); break; }
      case ScalarType::Bool: { uint8_t x = static_cast<uint8_t>((step + k) % 2); put(&x, 1); break; }
      case ScalarType::Float: { float x = float_pattern(step, k); put(&x, 4); break; }
      case ScalarType::Double: { double x = float_pattern(step, k); put(&x, 8); break; }
      case ScalarType::Half: { uint16_t x = float_to_half(float_pattern(step, k)); put(&x, 2); break; }
      case ScalarType::BFloat16: { uint16_t x = float_to_bf16(float_pattern(step, k)); put(&x, 2); break; }
      default:
        for (size_t b = 0; b < element_size(t.dtype); ++b) p[b] = static_cast<uint8_t>((step * 31 + k + b) & 0xFF);
    }
  }
  return out;
}

Status set_inputs(Method& m, int step) {
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    EValue& v = m.input(i);
    if (v.is_tensor()) {
      TRTX_CHECK_OK(m.provide_input_memory(i));
      TensorImpl& t = *v.tensor;
      if (t.constant) {
        return fail(Error::InvalidProgram, m.name() + ".inputs[" + std::to_string(i) + "]",
                    "method input is program constant data");
      }
      TRTX_CHECK_OK(m.write_tensor(t, input_bytes(t, step)));
    } else if (v.tag == Tag::Int) {
      v.int_value = step;
    } else if (v.tag == Tag::Double) {
      v.double_value = float_pattern(step, 0);
    }
  }
  return ok_status();
}

std::string digest_scalar(const EValue& v) {
  switch (v.tag) {
    case Tag::Int: return hex64(fnv1a64(&v.int_value, sizeof v.int_value));
    case Tag::Double: return hex64(fnv1a64(&v.double_value, sizeof v.double_value));
    case Tag::Bool: {
      uint8_t b = v.bool_value ? 1 : 0;
      return hex64(fnv1a64(&b, 1));
    }
    case Tag::String: return hex64(fnv1a64(v.string_value.data(), v.string_value.size()));
    default: return hex64(kFnvOffsetBasis);
  }
}

std::string kind_name(Tag t) {
  std::string s = executor::tag_name(t);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Status record_step(Method& m, int step, const runtime::CopyCounters& copies,
                   const std::vector<backend::DelegateInfo>& before, StepRecord& rec) {
  rec.step = step;
  rec.copies = copies;
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const EValue& v = m.output(i);
    OutputRecord o;
    o.index = static_cast<int>(i);
    o.value = m.output_index(i);
    o.kind = kind_name(v.tag);
    if (v.is_tensor()) {
      o.is_tensor = true;
      o.dtype = scalar_type_name(v.tensor->dtype);
      o.sizes = v.tensor->sizes;
      if (v.tensor->data == nullptr && v.tensor->nbytes != 0) {
        return fail(Error::InvalidState, m.name() + ".outputs[" + std::to_string(i) + "]", "output has no memory");
      }
      TRTX_CHECK_OK(m.read_tensor(*v.tensor, bytes));
      o.digest = hex64(fnv1a64(bytes.data(), bytes.size()));
    } else {
      o.digest = digest_scalar(v);
    }
    rec.outputs.push_back(std::move(o));
  }
  for (const auto& b : m.named_buffers()) {
    BufferRecord r;
    r.name = b.name;
    r.value = b.tensor->value_index;
    r.dtype = scalar_type_name(b.tensor->dtype);
    r.sizes = b.tensor->sizes;
    r.placement = runtime::placement_name(b.tensor->placement);
    TRTX_CHECK_OK(m.read_tensor(*b.tensor, bytes));
    r.digest = hex64(fnv1a64(bytes.data(), bytes.size()));
    rec.buffers.push_back(std::move(r));
  }
  std::vector<backend::DelegateInfo> after = m.delegate_infos();
  for (size_t d = 0; d < after.size(); ++d) {
    DelegateStep ds;
    ds.index = d;
    ds.elision = after[d].elision;
    const backend::DelegateInfo* b = d < before.size() ? &before[d] : nullptr;
    ds.syncs_performed = after[d].syncs_performed - (b ? b->syncs_performed : 0);
    ds.syncs_skipped = after[d].syncs_skipped - (b ? b->syncs_skipped : 0);
    ds.waits = after[d].waits - (b ? b->waits : 0);
    ds.copies.h2d_bytes = after[d].copies.h2d_bytes - (b ? b->copies.h2d_bytes : 0);
    ds.copies.d2h_bytes = after[d].copies.d2h_bytes - (b ? b->copies.d2h_bytes : 0);
    ds.copies.d2d_bytes = after[d].copies.d2d_bytes - (b ? b->copies.d2d_bytes : 0);
    rec.delegates.push_back(ds);
  }
  return ok_status();
}

void write_sizes(JsonWriter& w, const std::vector<int64_t>& sizes) {
  w.begin_array();
  for (int64_t s : sizes) w.value(s);
  w.end_array();
}

void write_optional_u64(JsonWriter& w, const char* key, const std::optional<uint64_t>& v) {
  // Byte budgets may exceed 2^53, so they are decimal strings.
  if (v.has_value()) {
    w.field(key, std::to_string(*v));
  } else {
    w.field_null(key);
  }
}

void write_copies(JsonWriter& w, const runtime::CopyCounters& c) {
  w.field("h2d_bytes", c.h2d_bytes);
  w.field("d2h_bytes", c.d2h_bytes);
  w.field("d2d_bytes", c.d2d_bytes);
}

void write_delegate(JsonWriter& w, size_t index, const backend::DelegateInfo& d) {
  w.begin_object();
  w.field("index", static_cast<uint64_t>(index));
  w.field("backend", d.backend_id);
  w.field("engine", d.engine);
  w.field("target_device", "cuda:" + std::to_string(d.target_device));
  if (d.elision.empty()) {
    w.field_null("elision");
  } else {
    w.field("elision", d.elision);
  }
  w.field_strings("inputs", d.inputs);
  w.field_strings("outputs", d.outputs);
  w.field_strings("aliased_outputs", d.aliased_outputs);
  if (d.zero_copy_kv.has_value()) {
    w.field_strings("zero_copy_kv", *d.zero_copy_kv);
  } else {
    w.field_null("zero_copy_kv");
  }
  w.key("budget");
  w.begin_object();
  w.field("source", d.budget.source);
  write_optional_u64(w, "requested", d.budget.requested);
  write_optional_u64(w, "effective", d.budget.effective);
  w.field("clamped", d.budget.clamped);
  if (d.budget.ignored.empty()) {
    w.field_null("ignored");
  } else {
    w.field("ignored", d.budget.ignored);
  }
  w.field("streaming", d.budget.streaming);
  w.field("streamable_bytes", std::to_string(d.budget.streamable_bytes));
  w.end_object();
  w.field("scratch_bytes", d.scratch_bytes);
  w.field("scratch_capacity", d.scratch_capacity);
  w.field("executes", d.executes);
  w.field("syncs_performed", d.syncs_performed);
  w.field("syncs_skipped", d.syncs_skipped);
  w.field("waits", d.waits);
  w.field("drains", d.drains);
  write_copies(w, d.copies);
  w.end_object();
}

std::string render(const Report& r, const RunOptions& o, int exit_code, const RunnerMemory& memory) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "trtx.runner-report/1");
  w.key("runner");
  w.begin_object();
  w.field("version", kRunnerVersion);
  w.field("cuda_built", runtime::cuda_built());
  w.end_object();
  w.key("program");
  w.begin_object();
  w.field("path", r.program_path);
  w.field("bytes", r.program_bytes);
  w.field_strings("methods", r.program_methods);
  w.end_object();
  w.key("device");
  w.begin_object();
  w.field("kind", r.device_kind);
  w.field("name", r.device_name);
  if (r.device_index >= 0) {
    w.field("index", r.device_index);
  } else {
    w.field_null("index");
  }
  w.end_object();
  w.key("options");
  w.begin_object();
  w.field_strings("methods", o.methods);
  w.field("steps", o.steps);
  w.field("caller_stream", o.caller_stream);
  write_optional_u64(w, "budget", o.budget);
  w.field("fresh_state", o.fresh_state);
  w.field("cold_pool", o.cold_pool);
  w.field("shared_scratch", o.shared_scratch);
  w.end_object();
  memory.write_report(w);
  w.key("methods");
  w.begin_array();
  for (const auto& m : r.methods) {
    w.begin_object();
    w.field("name", m.name);
    w.key("delegates");
    w.begin_array();
    for (size_t d = 0; d < m.delegates.size(); ++d) write_delegate(w, d, m.delegates[d]);
    w.end_array();
    w.key("steps");
    w.begin_array();
    for (const auto& s : m.steps) {
      w.begin_object();
      w.field("step", s.step);
      w.field("step_us", s.step_us);
      w.key("outputs");
      w.begin_array();
      for (const auto& out : s.outputs) {
        w.begin_object();
        w.field("index", out.index);
        w.field("value", out.value);
        w.field("kind", out.kind);
        if (out.is_tensor) {
          w.field("dtype", out.dtype);
          w.key("sizes");
          write_sizes(w, out.sizes);
        } else {
          w.field_null("dtype");
          w.field_null("sizes");
        }
        w.field("digest", out.digest);
        w.end_object();
      }
      w.end_array();
      w.key("buffers");
      w.begin_array();
      for (const auto& b : s.buffers) {
        w.begin_object();
        w.field("name", b.name);
        w.field("value", b.value);
        w.field("dtype", b.dtype);
        w.key("sizes");
        write_sizes(w, b.sizes);
        w.field("placement", b.placement);
        w.field("digest", b.digest);
        w.end_object();
      }
      w.end_array();
      write_copies(w, s.copies);
      w.key("delegates");
      w.begin_array();
      for (const auto& d : s.delegates) {
        w.begin_object();
        w.field("index", static_cast<uint64_t>(d.index));
        if (d.elision.empty()) {
          w.field_null("elision");
        } else {
          w.field("elision", d.elision);
        }
        w.field("syncs_performed", d.syncs_performed);
        w.field("syncs_skipped", d.syncs_skipped);
        w.field("waits", d.waits);
        write_copies(w, d.copies);
        w.end_object();
      }
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("errors");
  w.begin_array();
  for (const auto& e : r.errors) {
    w.begin_object();
    w.field("code", error_name(e.code));
    w.field("location", e.location);
    w.field("message", e.message);
    w.end_object();
  }
  w.end_array();
  w.field("ok", exit_code == 0);
  w.field("exit_code", exit_code);
  w.end_object();
  return w.str();
}

bool write_report(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  }
  // Written beside the target and renamed, so a reader never sees half a report.
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!f) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

class Runner {
 public:
  Runner(const RunOptions& o, Report& r) : opts_(o), report_(r) {}

  void run() {
    run_steps();
    finish();
  }

  const RunnerMemory& memory() const { return *memory_; }

  ~Runner() {
    for (auto& m : loaded_) m.reset();
    if (memory_) (void)memory_->teardown();
    if (has_stream_) device_->destroy_stream(stream_);
  }

 private:
  void run_steps() {
    if (!choose_device()) {
      memory_.reset(new RunnerMemory(runtime::Target::Host, memory_options(), nullptr,
                                     "no device was chosen for the run"));
      return;
    }
    memory_ = RunnerMemory::create(device_->target(), memory_options());
    backend::register_builtin_backends();
    auto loaded = program::Program::load(opts_.program);
    if (!loaded.ok()) return record(loaded.take_failure());
    program_ = std::move(loaded.get());
    report_.program_loaded = true;
    report_.program_methods = program_->method_names();
    methods_ = opts_.methods.empty() ? report_.program_methods : opts_.methods;
    uint64_t delegate_calls = 0;
    for (const auto& name : methods_) {
      auto p = program_->plan(name);
      if (!p.ok()) return record(p.take_failure());
      delegate_calls += delegate_calls_in(*p.get());
    }
    // One program handle: the pool stays warm from here until teardown, also
    // across --fresh-state reloads of its methods.
    if (device_->target() == runtime::Target::Cuda) memory_->program_loaded({device_->device_index()});
    if (opts_.caller_stream) {
      auto s = device_->create_stream(/*non_blocking=*/true);
      if (!s.ok()) return record(s.take_failure());
      stream_ = s.get();
      has_stream_ = true;
    }
    mopts_.device = device_.get();
    mopts_.has_caller_stream = has_stream_;
    mopts_.caller_stream = stream_;
    mopts_.budget_option = opts_.budget;
    mopts_.scratch_factory = memory_->scratch_factory(delegate_calls);
    report_.methods.resize(methods_.size());
    loaded_.resize(methods_.size());
    for (size_t i = 0; i < methods_.size(); ++i) report_.methods[i].name = methods_[i];

    for (int step = 0; step < opts_.steps && report_.errors.empty(); ++step) {
      for (size_t i = 0; i < methods_.size() && report_.errors.empty(); ++i) run_step(i, step);
    }
  }

  // Every method closed (drained), then the scratch freed and the pool handed
  // back, in that order: the pool's trim can only return freed memory.
  void finish() {
    for (size_t i = 0; i < loaded_.size(); ++i) close(i);
    Status s = memory_->teardown();
    if (!s.ok()) record(s.take_failure());
  }

  RunnerMemoryOptions memory_options() const { return RunnerMemoryOptions{opts_.cold_pool, opts_.shared_scratch}; }

  // Delegate calls in one execute of the method's chain, in program order
  // (the fixtures have no jumps): the shared scratch's warm-up length.
  static uint64_t delegate_calls_in(const executorch_flatbuffer::ExecutionPlan& plan) {
    const auto* chains = plan.chains();
    if (chains == nullptr || chains->size() == 0 || chains->Get(0)->instructions() == nullptr) return 0;
    uint64_t n = 0;
    for (const auto* ins : *chains->Get(0)->instructions()) {
      if (ins != nullptr && ins->instr_args_type() == executorch_flatbuffer::InstructionArguments::DelegateCall) ++n;
    }
    return n;
  }
  bool choose_device() {
    bool cuda = false;
    if (opts_.device == DeviceChoice::Cuda) {
      if (!runtime::cuda_built()) {
        record(fail(Error::DeviceUnavailable, "--device cuda", "this trtx-runner was built without CUDA"));
        return false;
      }
      if (runtime::cuda_device_count() == 0) {
        record(fail(Error::DeviceUnavailable, "--device cuda", "no CUDA device is visible"));
        return false;
      }
      cuda = true;
    } else if (opts_.device == DeviceChoice::Auto) {
      cuda = runtime::cuda_built() && runtime::cuda_device_count() > 0;
    }
    device_ = std::make_unique<runtime::DeviceContext>(cuda ? runtime::Target::Cuda : runtime::Target::Host, 0);
    if (cuda) {
      report_.device_kind = "cuda";
      report_.device_index = 0;
      auto name = runtime::cuda_device_name(0);
      report_.device_name = name.ok() ? name.get() : "unknown CUDA device";
      Status s = device_->activate();
      if (!s.ok()) {
        record(s.take_failure());
        return false;
      }
    }
    return true;
  }

  void record(Failure f) { report_.errors.push_back(std::move(f)); }

  void close(size_t i) {
    if (!loaded_[i]) return;
    Status s = loaded_[i]->close();
    report_.methods[i].delegates = loaded_[i]->delegate_infos();
    if (!s.ok()) record(s.take_failure());
    loaded_[i].reset();
  }

  void run_step(size_t i, int step) {
    if (opts_.fresh_state) close(i);
    if (!loaded_[i]) {
      auto m = Method::load(*program_, methods_[i], mopts_);
      if (!m.ok()) return record(m.take_failure());
      loaded_[i] = std::move(m.get());
    }
    Method& m = *loaded_[i];
    Status s = set_inputs(m, step);
    if (!s.ok()) return record(s.take_failure());
    std::vector<backend::DelegateInfo> before = m.delegate_infos();
    runtime::CopyCounters copies;
    auto start = std::chrono::steady_clock::now();
    s = m.execute(&copies);
    // A zero-copy delegate under a caller stream returns before its work is
    // done; the step ends when the stream has drained.
    if (s.ok() && has_stream_) s = device_->synchronize(stream_);
    auto stop = std::chrono::steady_clock::now();
    report_.methods[i].delegates = m.delegate_infos();
    if (!s.ok()) return record(s.take_failure());
    StepRecord rec;
    rec.step_us = std::chrono::duration<double, std::micro>(stop - start).count();
    s = record_step(m, step, copies, before, rec);
    if (!s.ok()) return record(s.take_failure());
    // Reading the results synchronized the stream, so device faults of this
    // step are final.
    if (!rec.outputs.empty() || !rec.buffers.empty() || !has_stream_) {
      s = m.check_deferred();
      if (!s.ok()) return record(s.take_failure());
    }
    report_.methods[i].steps.push_back(std::move(rec));
  }

  const RunOptions& opts_;
  Report& report_;
  std::unique_ptr<runtime::DeviceContext> device_;
  std::unique_ptr<RunnerMemory> memory_;
  std::unique_ptr<program::Program> program_;
  std::vector<std::string> methods_;
  std::vector<std::unique_ptr<Method>> loaded_;
  executor::MethodOptions mopts_;
  runtime::StreamRef stream_;
  bool has_stream_ = false;
};

}  // namespace

int run_command(const RunOptions& options) {
  Report report;
  report.program_path = options.program;
  {
    auto loader = program::FileDataLoader::open(options.program);
    if (loader.ok()) report.program_bytes = loader.get()->size();
  }
  Runner runner(options, report);
  runner.run();
  int exit_code = 0;
  for (const auto& e : report.errors) {
    int c = error_exit_code(e.code);
    if (exit_code == 0 || c == 3) exit_code = c;
    std::fprintf(stderr, "%s: %s: %s\n", error_name(e.code), e.location.c_str(), e.message.c_str());
  }
  if (!write_report(options.report_path, render(report, options, exit_code, runner.memory()))) {
    std::fprintf(stderr, "trtx-runner: cannot write report %s\n", options.report_path.c_str());
    return 2;
  }
  return exit_code;
}

}  // namespace trtx::cli
