// Progress lines on stderr while the native runner builds (seconds to a
// minute on first use): configuring, then compiling with CMake's percent, a
// line per tenth. Nothing under --quiet or --json, and nothing for a cached
// or prebuilt runner.
import type { RunnerProgress } from '../runner/index.js';
import type { Ctx } from './context.js';

export function runnerBuildProgress(ctx: Pick<Ctx, 'quiet' | 'json' | 'log'>): (p: RunnerProgress) => void {
  if (ctx.quiet || ctx.json) return () => {};
  let shown = 0;
  return (p) => {
    if (p.phase === 'cached' || p.phase === 'prebuilt' || p.phase === 'ready') return;
    if (p.phase === 'build' && p.percent !== undefined && p.percent > 0) {
      if (p.percent < shown + 10 && p.percent < 100) return;
      shown = p.percent;
    }
    ctx.log.info(p.message);
  };
}
