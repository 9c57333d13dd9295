// Progress lines on stderr while the native runner is prepared (seconds to a
// minute on first use): fetching the ExecuTorch SDK, configuring, then
// compiling with CMake's percent, a line per tenth. A step that says nothing
// new still gets a line every HEARTBEAT_MS (the library's heartbeat events,
// `tick`), so no step is silent for more than 5 s. Nothing under --quiet or
// --json, and nothing for a cached or prebuilt runner.
import type { RunnerProgress } from '../runner/index.js';
import type { Ctx } from './context.js';

/** At most this long between two lines while something runs. */
export const HEARTBEAT_MS = 4000;

export function runnerBuildProgress(ctx: Pick<Ctx, 'quiet' | 'json' | 'log'>, now: () => number = Date.now): (p: RunnerProgress) => void {
  if (ctx.quiet || ctx.json) return () => {};
  let shownPercent = 0;
  let lastPhase = '';
  let lastAt = 0;
  return (p) => {
    if (p.phase === 'cached' || p.phase === 'prebuilt' || p.phase === 'ready') return;
    const t = now();
    const due = t - lastAt >= HEARTBEAT_MS;
    const tick = 'tick' in p && p.tick === true;
    if (p.phase === lastPhase) {
      if (p.phase === 'build' && p.percent !== undefined && !tick) {
        const tenth = p.percent >= shownPercent + 10 || (p.percent === 100 && shownPercent < 100);
        if (!tenth && !due) return;
      } else if (!due) {
        return;
      }
    }
    if (p.phase === 'build' && p.percent !== undefined) shownPercent = Math.max(shownPercent, p.percent);
    lastPhase = p.phase;
    lastAt = t;
    ctx.log.info(p.message);
  };
}
