#include "step_loop.h"

#include <chrono>

#include "et_error_cause.h"
#include "progress.h"
#include "run_outcome.h"
#include "trtx/et/device_allocator.h"

namespace trtx::cli {

namespace et = executorch::runtime;

namespace {

// What the counters moved between two snapshots.
runtime::CopyCounters since(const runtime::CopyCounters& before, const runtime::CopyCounters& now) {
  return {now.h2d_bytes - before.h2d_bytes, now.d2h_bytes - before.d2h_bytes, now.d2d_bytes - before.d2d_bytes};
}

// A failure at a place inside method `name`.
Failure in_method(const std::string& name, const Failure& f) {
  return fail(f.code, name + "." + f.location, f.message);
}

}  // namespace

StepLoop::StepLoop(const RunOptions& options, Report& report, StepValues& values, LoadedProgram& program,
                   RunMemory& memory)
    : opts_(options), report_(report), values_(values), program_(program), memory_(memory) {
  const std::vector<std::string>& methods = program_.methods();
  report_.methods.resize(methods.size());
  for (size_t i = 0; i < methods.size(); ++i) report_.methods[i].name = methods[i];
  loaded_.assign(methods.size(), false);
  inputs_.resize(methods.size());
}

void StepLoop::run() {
  for (int step = 0; step < opts_.steps && report_.errors.empty(); ++step) {
    for (size_t i = 0; i < loaded_.size() && report_.errors.empty(); ++i) run_step(i, step);
    if (opts_.progress && report_.errors.empty()) say_step_done(step + 1, opts_.steps);
  }
}

void StepLoop::close_all() {
  for (size_t i = 0; i < loaded_.size(); ++i) close(i);
}

void StepLoop::close(size_t i) {
  if (!loaded_[i]) return;
  const std::string& name = program_.methods()[i];
  Status s = program_.delegates().drain(name);
  report_.methods[i].delegates = program_.delegates().delegate_infos(name);
  if (!s.ok()) record(s.take_failure());
  program_.module().unload_method(name);
  loaded_[i] = false;
}

et::Method* StepLoop::load(size_t i) {
  const std::string& name = program_.methods()[i];
  integration::clear_pending();
  const et::Error e = program_.module().load_method(name);
  if (e != et::Error::Ok) {
    record(integration::failure_of(e, name, "loading method '" + name + "'"));
    return nullptr;
  }
  loaded_[i] = true;
  et::Method* m = program_.module().loaded(name);
  Status s = inputs_[i].prepare(m->method_meta());
  if (s.ok() && opts_.init_device_buffers) {
    auto n = init_device_buffers(*m);
    if (n.ok()) report_.methods[i].initialised_buffers = n.get();
    if (!n.ok()) s = n.take_failure();
  }
  if (!s.ok()) {
    record(s.take_failure());
    return nullptr;
  }
  return m;
}

void StepLoop::run_step(size_t i, int step) {
  if (opts_.fresh_state) close(i);
  const std::string& name = program_.methods()[i];
  et::Method* m = loaded_[i] ? program_.module().loaded(name) : load(i);
  if (m == nullptr) return;
  Status s = values_.set_inputs(inputs_[i], *m, name, step);
  if (!s.ok()) return record(in_method(name, s.failure()));
  const std::vector<backend::DelegateInfo> before = program_.delegates().delegate_infos(name);
  StepRecord rec;
  rec.step = step;
  const runtime::CopyCounters traffic_before = trtx::et::device_allocator().traffic();
  const runtime::CopyCounters kernels_before = trtx::et::device_allocator().kernel_traffic();
  integration::clear_pending();
  const auto start = std::chrono::steady_clock::now();
  const et::Error e = m->execute();
  // A zero-copy delegate under a caller stream returns before its work is
  // done; the step ends when the stream has drained.
  if (e == et::Error::Ok) s = memory_.synchronize_caller_streams();
  const auto stop = std::chrono::steady_clock::now();
  report_.methods[i].delegates = program_.delegates().delegate_infos(name);
  if (e != et::Error::Ok) return record(integration::failure_of(e, name, "executing method '" + name + "'"));
  if (!s.ok()) return record(s.take_failure());
  // The stream is complete: faults a skipped sync left are final now.
  s = program_.delegates().check_deferred(name);
  if (!s.ok()) return record(s.take_failure());
  rec.step_us = std::chrono::duration<double, std::micro>(stop - start).count();
  rec.copies = since(traffic_before, trtx::et::device_allocator().traffic());
  rec.program_copies = since(kernels_before, trtx::et::device_allocator().kernel_traffic());
  s = record_step(i, *m, rec, before);
  if (!s.ok()) return record(in_method(name, s.failure()));
  report_.methods[i].steps.push_back(std::move(rec));
}

Status StepLoop::record_step(size_t i, et::Method& m, StepRecord& rec,
                             const std::vector<backend::DelegateInfo>& before) {
  const std::string& name = program_.methods()[i];
  TRTX_CHECK_OK(record_outputs(m, rec.outputs));
  TRTX_CHECK_OK(values_.record_outputs(m, name, rec.step));
  TRTX_CHECK_OK(record_buffers(m, rec.buffers));
  add_delegate_steps(rec, report_.methods[i].delegates, before);
  return ok_status();
}

}  // namespace trtx::cli
