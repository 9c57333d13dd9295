// Where the bridge package is and the environment it runs in. The bridge is
// found from this package's install location, never from the working
// directory, and its PYTHONPATH is only that location unless the caller passes
// more: trtx must never pick up a stray module (or a test double) on its own.

import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { defaultCacheRoot } from '../util/cache-dir.js';
import type { Options } from 'execa';
import type { Env } from '../util/env.js';

/** The python-bridge folder shipped with trtx (holds the trtx_bridge package). */
export function bridgePackageDir(): string {
  // Walk up from this module: it runs from src/bridge/ or bundled in dist/.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'python-bridge');
    if (existsSync(path.join(candidate, 'trtx_bridge', '__main__.py'))) return candidate;
    const up = path.dirname(dir);
    if (up === dir) return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'python-bridge');
    dir = up;
  }
}

// Variables that would change how the interpreter starts or where it imports
// from, beyond what the user's Python installation itself decides.
const DROPPED = ['PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONINSPECT'];

export interface BridgeEnvOptions {
  /** Extra variables; `PYTHONPATH` here is appended after the bridge package. `undefined` removes a variable. */
  extra?: Record<string, string | undefined>;
  /** The run's folder: what relative paths mean to the bridge (a factory's own file access); absent, the bridge stays in its own folder. */
  cwd?: string;
  /** The run's environment to start from (util/env.ts). */
  base: Env;
}

/** The bridge's whole environment: the run's, less what would change where Python imports from, plus the bridge's own. */
export function bridgeEnv(opts: BridgeEnvOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.base)) {
    if (v !== undefined && !DROPPED.includes(k)) out[k] = v;
  }
  const extra = opts.extra ?? {};
  const paths = [bridgePackageDir()];
  if (extra.PYTHONPATH) paths.push(...extra.PYTHONPATH.split(path.delimiter).filter((p) => p !== ''));
  for (const [k, v] of Object.entries(extra)) {
    if (k === 'PYTHONPATH') continue;
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  out.PYTHONPATH = paths.join(path.delimiter);
  // 3.11+: do not put the working directory on sys.path (the bridge strips it
  // itself on older Pythons).
  out.PYTHONSAFEPATH = '1';
  out.PYTHONUNBUFFERED = '1';
  out.PYTHONIOENCODING = 'utf-8';
  // The install folder may be read-only, and stale bytecode there is worse than none.
  out.PYTHONDONTWRITEBYTECODE = '1';
  if (opts.cwd !== undefined) out.TRTX_BRIDGE_CWD = opts.cwd;
  // torch keeps its compile cache in the temp dir by default
  // (/tmp/torchinductor_<user>); a cache belongs with trtx's other caches, and
  // an export must leave the temp dir as it found it. A caller whose
  // environment names no cache folder (none: the process's is inherited) leaves torch's default.
  const named = opts.base.TRTX_CACHE_DIR || opts.base.HOME;
  if (!out.TORCHINDUCTOR_CACHE_DIR && named)
    out.TORCHINDUCTOR_CACHE_DIR = path.join(defaultCacheRoot(opts.base, opts.cwd), 'torchinductor');
  return out;
}

/**
 * execa's environment options for a Python child of a run (the bridge, the
 * probe): bridgeEnv of the run's environment; a caller with none (util/env.ts)
 * gets the process's, as execa extends it, with the same variables dropped
 * and set (its own TRTX_* settings unread, as everywhere without one).
 */
export function bridgeChildEnv(opts: Omit<BridgeEnvOptions, 'base'> & { base: Env | undefined }): Pick<Options, 'env' | 'extendEnv'> {
  if (opts.base !== undefined) return { env: bridgeEnv({ ...opts, base: opts.base }), extendEnv: false };
  const dropped = Object.fromEntries(DROPPED.map((k) => [k, undefined]));
  return { env: { ...dropped, ...bridgeEnv({ ...opts, base: {} }) }, extendEnv: true };
}
