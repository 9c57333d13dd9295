// `trtx-runner run --progress`: a line on stderr as each step finishes, for a
// caller that shows a long run's progress (trtx verify reads them:
// src/runner/run.ts).
#pragma once

namespace trtx::cli {

/// "trtx-runner progress: step STEP of STEPS", flushed.
void say_step_done(int step, int steps);

}  // namespace trtx::cli
