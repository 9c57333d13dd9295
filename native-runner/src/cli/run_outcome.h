// What a run reports (internal): each executed step's record, then, at the
// end, the errors on stderr, the report file (run_report.h) and the exit code.
#pragma once

#include <vector>

#include "run_command.h"
#include "run_report.h"
#include "runner_memory.h"
#include "trtx/backend/backend.h"
#include "trtx/runtime/result.h"

namespace trtx::cli {

/// A step's per-delegate record from its delegates' counters `now`, less
/// `before` the step (a delegate missing there was created by it), and the
/// stand-in engines' traffic summed over them.
void add_delegate_steps(StepRecord& rec, const std::vector<backend::DelegateInfo>& now,
                        const std::vector<backend::DelegateInfo>& before);

/// Prints the report's errors, writes it and sets `exit_code`; a report
/// that cannot be written is exit 2.
void write_final(const Report& report, const RunOptions& options, const integration::RunnerMemory* memory,
                 int& exit_code);

/// A usage error (the caller's files): one line on stderr, exit 2.
int usage_error(const Failure& f);

}  // namespace trtx::cli
