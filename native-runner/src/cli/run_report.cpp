#include "run_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "json_writer.h"
#include "trtx/et/device_allocator.h"
#include "trtx/runtime/device.h"
#include "version.h"

namespace trtx::cli {

// The ExecuTorch integration (src/integration/).
using integration::JsonWriter;
using integration::RunnerMemory;

namespace {

void write_sizes(JsonWriter& w, const std::vector<int64_t>& sizes) {
  w.begin_array();
  for (int64_t s : sizes) w.value(s);
  w.end_array();
}

void write_optional_u64(JsonWriter& w, const char* key, const std::optional<uint64_t>& v) {
  // Byte budgets may exceed 2^53, so they are decimal strings.
  v.has_value() ? w.field(key, std::to_string(*v)) : w.field_null(key);
}

void write_string_or_null(JsonWriter& w, const char* key, const std::string& v) {
  v.empty() ? w.field_null(key) : w.field(key, v);
}

void write_copies(JsonWriter& w, const runtime::CopyCounters& c) {
  w.field("h2d_bytes", c.h2d_bytes);
  w.field("d2h_bytes", c.d2h_bytes);
  w.field("d2d_bytes", c.d2d_bytes);
}

void write_counters(JsonWriter& w, const char* key, const runtime::CopyCounters& c, bool d2d) {
  w.key(key);
  w.begin_object();
  w.field("h2d_bytes", c.h2d_bytes);
  w.field("d2h_bytes", c.d2h_bytes);
  if (d2d) w.field("d2d_bytes", c.d2d_bytes);
  w.end_object();
}

// The stand-in engine's own traffic (a program executor reads every binding
// to the host and writes every output back, since it computes on the CPU
// kernels; TensorRT would not): reported apart, never in the program's.
void write_stand_in(JsonWriter& w, const runtime::CopyCounters& c) {
  write_counters(w, "engine_stand_in_bytes", c, false);
}

// Wall time of each step of a method, and its summary; the median of an
// even count is the mean of the middle two.
void write_step_time(JsonWriter& w, const std::vector<StepRecord>& steps) {
  std::vector<double> us;
  for (const auto& s : steps) us.push_back(s.step_us);
  w.key("step_time_us");
  w.begin_object();
  w.field("count", static_cast<uint64_t>(us.size()));
  w.key("each");
  w.begin_array();
  for (double u : us) w.value(u);
  w.end_array();
  std::sort(us.begin(), us.end());
  if (us.empty()) {
    w.field_null("median");
    w.field_null("min");
    w.field_null("max");
  } else {
    const size_t n = us.size();
    w.field("median", n % 2 == 1 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2);
    w.field("min", us.front());
    w.field("max", us.back());
  }
  w.end_object();
}

// What the engine's weights did (ATen's kernels): resident and streamed as
// placed by the budget, and the bytes streaming actually copied.
void write_weights(JsonWriter& w, const std::optional<aten_kernels::WeightPlacement>& p) {
  if (!p.has_value()) {
    w.field_null("weights");
    return;
  }
  w.key("weights");
  w.begin_object();
  w.field("total_bytes", std::to_string(p->total_bytes));
  w.field("resident_bytes", std::to_string(p->resident_bytes));
  w.field("streamed_bytes_per_execute", std::to_string(p->streamed_bytes_per_execute));
  w.field("window_bytes", std::to_string(p->window_bytes));
  w.field("streamed_bytes", std::to_string(p->streamed_bytes));
  w.field("streamed_copies", p->streamed_copies);
  w.end_object();
}

void write_delegate(JsonWriter& w, const backend::DelegateInfo& d) {
  w.begin_object();
  w.field("index", static_cast<uint64_t>(d.index));
  w.field("backend", d.backend_id);
  w.field("engine", d.engine);
  w.field("kernels", d.kernels);
  w.field("target_device", "cuda:" + std::to_string(d.target_device));
  write_string_or_null(w, "elision", d.elision);
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
  write_string_or_null(w, "ignored", d.budget.ignored);
  w.field("streaming", d.budget.streaming);
  w.field("streamable_bytes", std::to_string(d.budget.streamable_bytes));
  w.field("resident_bytes", std::to_string(d.budget.resident_bytes));
  w.field("streamed_bytes_per_execute", std::to_string(d.budget.streamed_bytes_per_execute));
  w.end_object();
  w.field("scratch_bytes", d.scratch_bytes);
  w.field("scratch_capacity", d.scratch_capacity);
  w.field("executes", d.executes);
  w.field("syncs_performed", d.syncs_performed);
  w.field("syncs_skipped", d.syncs_skipped);
  w.field("waits", d.waits);
  w.field("drains", d.drains);
  write_copies(w, d.copies);
  write_stand_in(w, d.engine_stand_in);
  write_weights(w, d.weights);
  w.end_object();
}

void write_step(JsonWriter& w, const StepRecord& s) {
  w.begin_object();
  w.field("step", s.step);
  w.field("step_us", s.step_us);
  w.key("outputs");
  w.begin_array();
  for (const auto& out : s.outputs) {
    w.begin_object();
    w.field("index", out.index);
    w.field("kind", out.kind);
    if (out.is_tensor) {
      w.field("dtype", out.dtype);
      w.key("sizes");
      write_sizes(w, out.sizes);
      w.field("placement", out.placement);
    } else {
      w.field_null("dtype");
      w.field_null("sizes");
      w.field_null("placement");
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
    w.field("dtype", b.dtype);
    w.key("sizes");
    write_sizes(w, b.sizes);
    w.field("placement", b.placement);
    w.field("digest", b.digest);
    w.end_object();
  }
  w.end_array();
  write_copies(w, s.copies);
  write_counters(w, "program_copies", s.program_copies, true);
  write_stand_in(w, s.engine_stand_in);
  w.key("delegates");
  w.begin_array();
  for (const auto& d : s.delegates) {
    w.begin_object();
    w.field("index", static_cast<uint64_t>(d.index));
    write_string_or_null(w, "elision", d.elision);
    w.field("syncs_performed", d.syncs_performed);
    w.field("syncs_skipped", d.syncs_skipped);
    w.field("waits", d.waits);
    write_copies(w, d.copies);
    write_stand_in(w, d.engine_stand_in);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// The arenas ExecuTorch allocated through the registered device allocator.
void write_device_arenas(JsonWriter& w, const RunOptions& o, runtime::Target target) {
  const et::DeviceAllocatorStats st = et::device_allocator().stats();
  w.key("device_arenas");
  w.begin_object();
  w.field("allocator", target == runtime::Target::Cuda ? "cuda" : "host");
  w.field("fill", et::arena_fill_name(o.arena_fill));
  w.field("init_device_buffers", o.init_device_buffers);
  w.field("allocations", st.allocations);
  w.field("deallocations", st.deallocations);
  w.field("peak_bytes", st.peak_bytes);
  w.field("filled_bytes", st.filled_bytes);
  w.field("zeroed_bytes", st.zeroed_bytes);
  w.field("refused_copies", st.refused_copies);
  std::vector<double> us = st.allocate_call_us;
  std::sort(us.begin(), us.end());
  w.key("allocate_call_us");
  w.begin_object();
  w.field("count", static_cast<uint64_t>(us.size()));
  if (us.empty()) {
    w.field_null("median");
    w.field_null("max");
  } else {
    w.field("median", us[us.size() / 2]);
    w.field("max", us.back());
  }
  w.end_object();
  w.end_object();
}

// What ran: the runner, the backend, the program and the device.
void write_what_ran(JsonWriter& w, const Report& r) {
  w.key("runner");
  w.begin_object();
  w.field("version", kRunnerVersion);
  w.field("cuda_built", runtime::cuda_built());
  w.field("executorch", kExecutorchVersion);
  w.end_object();
  w.key("backend");
  w.begin_object();
  w.field("source", r.backend.source);
  if (r.backend.path.empty()) {
    w.field_null("path");
  } else {
    w.field("path", r.backend.path);
  }
  w.field("executorch", r.backend.executorch.empty() ? std::string(kExecutorchVersion) : r.backend.executorch);
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
}

void write_options(JsonWriter& w, const RunOptions& o) {
  w.key("options");
  w.begin_object();
  w.field_strings("methods", o.methods);
  w.field("steps", o.steps);
  w.field("caller_stream", o.caller_stream);
  write_optional_u64(w, "budget", o.budget);
  w.field("fresh_state", o.fresh_state);
  w.field("cold_pool", o.cold_pool);
  w.field("shared_scratch", o.shared_scratch);
  w.field("arena_fill", et::arena_fill_name(o.arena_fill));
  w.field("init_device_buffers", o.init_device_buffers);
  w.field("share_arenas", o.share_arenas);
  w.field("trt_runtime", o.contract == backend::TrtContract::Stock ? "stock" : "zero-copy");
  w.field("loader", o.file_loader ? "file" : "mmap");
  w.end_object();
}

void write_methods(JsonWriter& w, const Report& r) {
  w.key("methods");
  w.begin_array();
  for (const auto& m : r.methods) {
    w.begin_object();
    w.field("name", m.name);
    w.field("initialised_buffers", m.initialised_buffers);
    write_step_time(w, m.steps);
    w.key("delegates");
    w.begin_array();
    for (const auto& d : m.delegates) write_delegate(w, d);
    w.end_array();
    w.key("steps");
    w.begin_array();
    for (const auto& s : m.steps) write_step(w, s);
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

void write_errors(JsonWriter& w, const Report& r) {
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
}

}  // namespace

DelegateStep delegate_step(size_t index, const backend::DelegateInfo& now, const backend::DelegateInfo* b) {
  DelegateStep ds;
  ds.index = index;
  ds.elision = now.elision;
  ds.syncs_performed = now.syncs_performed - (b ? b->syncs_performed : 0);
  ds.syncs_skipped = now.syncs_skipped - (b ? b->syncs_skipped : 0);
  ds.waits = now.waits - (b ? b->waits : 0);
  ds.copies.h2d_bytes = now.copies.h2d_bytes - (b ? b->copies.h2d_bytes : 0);
  ds.copies.d2h_bytes = now.copies.d2h_bytes - (b ? b->copies.d2h_bytes : 0);
  ds.copies.d2d_bytes = now.copies.d2d_bytes - (b ? b->copies.d2d_bytes : 0);
  ds.engine_stand_in.h2d_bytes = now.engine_stand_in.h2d_bytes - (b ? b->engine_stand_in.h2d_bytes : 0);
  ds.engine_stand_in.d2h_bytes = now.engine_stand_in.d2h_bytes - (b ? b->engine_stand_in.d2h_bytes : 0);
  ds.engine_stand_in.d2d_bytes = now.engine_stand_in.d2d_bytes - (b ? b->engine_stand_in.d2d_bytes : 0);
  return ds;
}

int exit_code_of(const Report& r) {
  int code = 0;
  for (const auto& e : r.errors) {
    const int c = error_exit_code(e.code);
    if (code == 0 || c == 3) code = c;
  }
  return code;
}

std::string render_report(const Report& r, const RunOptions& o, int exit_code, const RunnerMemory* memory) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", "trtx.runner-report/2");
  write_what_ran(w, r);
  write_options(w, o);
  w.key("memory");
  w.begin_object();
  if (memory != nullptr) memory->write_sections(w);
  write_device_arenas(w, o, r.device_kind == "cuda" ? runtime::Target::Cuda : runtime::Target::Host);
  w.end_object();
  write_methods(w, r);
  write_errors(w, r);
  w.field("ok", exit_code == 0);
  w.field("exit_code", exit_code);
  w.end_object();
  return w.str();
}

bool write_report_file(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (f) f.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!f) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) == 0) return true;
  std::remove(tmp.c_str());
  return false;
}

}  // namespace trtx::cli
