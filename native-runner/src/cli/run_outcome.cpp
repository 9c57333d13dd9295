#include "run_outcome.h"

#include <cstdio>

namespace trtx::cli {

void add_delegate_steps(StepRecord& rec, const std::vector<backend::DelegateInfo>& now,
                        const std::vector<backend::DelegateInfo>& before) {
  for (size_t d = 0; d < now.size(); ++d) {
    rec.delegates.push_back(delegate_step(d, now[d], d < before.size() ? &before[d] : nullptr));
    rec.engine_stand_in.h2d_bytes += rec.delegates.back().engine_stand_in.h2d_bytes;
    rec.engine_stand_in.d2h_bytes += rec.delegates.back().engine_stand_in.d2h_bytes;
  }
}

void write_final(const Report& report, const RunOptions& options, const integration::RunnerMemory* memory,
                 int& exit_code) {
  exit_code = exit_code_of(report);
  for (const auto& e : report.errors) {
    std::fprintf(stderr, "%s: %s: %s\n", error_name(e.code), e.location.c_str(), e.message.c_str());
  }
  if (!write_report_file(options.report_path, render_report(report, options, exit_code, memory))) {
    std::fprintf(stderr, "trtx-runner: cannot write report %s\n", options.report_path.c_str());
    exit_code = 2;
  }
}

int usage_error(const Failure& f) {
  std::fprintf(stderr, "trtx-runner: %s: %s\n", f.location.c_str(), f.message.c_str());
  return 2;
}

}  // namespace trtx::cli
