#include "trtx/et/caller_stream.h"

namespace trtx::et {

namespace {
thread_local std::optional<runtime::StreamRef> t_caller_stream;
}

std::optional<runtime::StreamRef> caller_stream() { return t_caller_stream; }

CallerStreamGuard::CallerStreamGuard(runtime::StreamRef stream) : previous_(t_caller_stream) {
  t_caller_stream = stream;
}

CallerStreamGuard::~CallerStreamGuard() { t_caller_stream = previous_; }

}  // namespace trtx::et
