#include "progress.h"

#include <cstdio>

namespace trtx::cli {

void say_step_done(int step, int steps) {
  std::fprintf(stderr, "trtx-runner progress: step %d of %d\n", step, steps);
  std::fflush(stderr);
}

}  // namespace trtx::cli
