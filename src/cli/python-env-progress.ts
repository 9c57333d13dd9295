// Progress lines on stderr while trtx's Python environment is made (first
// `trtx export`, `trtx env`, `demo --from-pytorch`): every message of its own,
// and while pip says nothing new, its heartbeat at most every HEARTBEAT_MS,
// so the minutes it takes are never silent. A cached environment is a debug
// line only. The log level decides the rest (--quiet shows none of it).
import type { PythonEnvProgress } from '../pyenv/index.js';
import type { Ctx } from './context.js';
import { HEARTBEAT_MS } from './runner-progress.js';

export function pythonEnvProgress(ctx: Pick<Ctx, 'log'>, now: () => number = Date.now): (p: PythonEnvProgress) => void {
  let lastAt = 0;
  return (p) => {
    if (p.phase === 'cached') {
      ctx.log.debug(p.message);
      return;
    }
    const t = now();
    if (p.phase === 'install' && p.tick === true && t - lastAt < HEARTBEAT_MS) return;
    lastAt = t;
    ctx.log.info(p.message);
  };
}
