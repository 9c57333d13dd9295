// Where trtx keeps what it builds or creates once and reuses: the native
// runner builds and the managed Python environment. $TRTX_CACHE_DIR, else
// ~/.cache/trtx (the XDG convention for per-user caches), both the run's
// (its environment and folder, util/env.ts), never the process's.

import { join } from 'node:path';
import { homeOf, pathSettingOf, type Env } from './env.js';

/** The cache folder the run's environment names (TRTX_CACHE_DIR, in the run's folder `cwd` when relative), else ~/.cache/trtx of its HOME. */
export function defaultCacheRoot(env: Env, cwd?: string): string {
  return pathSettingOf(env, 'TRTX_CACHE_DIR', cwd) || join(homeOf(env), '.cache', 'trtx');
}
