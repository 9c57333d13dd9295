// Where trtx keeps what it builds or creates once and reuses: the native
// runner builds and the managed Python environment. $TRTX_CACHE_DIR, else
// ~/.cache/trtx (the XDG convention for per-user caches).

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Env } from './env.js';

/** The cache folder the run's environment names (TRTX_CACHE_DIR), else ~/.cache/trtx. */
export function defaultCacheRoot(env: Env): string {
  const fromEnv = env.TRTX_CACHE_DIR;
  return fromEnv && fromEnv.length > 0 ? resolve(fromEnv) : join(homedir(), '.cache', 'trtx');
}
