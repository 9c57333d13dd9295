#include "et_platform.h"

#include <executorch/runtime/platform/platform.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace trtx::integration {

namespace {

struct State {
  std::mutex mutex;
  std::vector<std::string> errors;
  std::string last_error;
  std::function<void(const std::string&)> on_abort;
};

State& state() {
  static State s;
  return s;
}

const char* base_name(const char* path) {
  const char* b = path;
  for (const char* p = path; p != nullptr && *p != '\0'; ++p) {
    if (*p == '/') b = p + 1;
  }
  return b;
}

void emit(et_timestamp_t, et_pal_log_level_t level, const char* filename, const char*, size_t line, const char* message,
          size_t length) {
  if (level != kError && level != kFatal) return;
  std::string text = std::string(message, length);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::string located = std::string("executorch:") + base_name(filename) + ":" + std::to_string(line) + ": " + text;
  std::fprintf(stderr, "%c %s\n", static_cast<char>(level), located.c_str());
  std::lock_guard<std::mutex> lock(state().mutex);
  state().errors.push_back(located);
  state().last_error = located;
}

[[noreturn]] void abort_hook() {
  std::function<void(const std::string&)> cb;
  std::string last;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    cb = state().on_abort;
    last = state().last_error;
  }
  if (cb) cb(last);
  std::_Exit(1);
}

}  // namespace

void install_et_platform(std::function<void(const std::string&)> on_abort) {
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().on_abort = std::move(on_abort);
  }
  static const bool installed = [] {
    executorch::runtime::PalImpl impl{};
    impl.emit_log_message = &emit;
    impl.abort = &abort_hook;
    impl.source_filename = __FILE__;
    const bool ok = executorch::runtime::register_pal(impl);
    executorch::runtime::runtime_init();
    return ok;
  }();
  (void)installed;
}

std::vector<std::string> take_et_errors() {
  std::lock_guard<std::mutex> lock(state().mutex);
  std::vector<std::string> out;
  out.swap(state().errors);
  return out;
}

}  // namespace trtx::integration
