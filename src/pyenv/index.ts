// Which Python trtx uses for export: the interpreter the user names
// (--python, TRTX_PYTHON), used as it is, or trtx's managed environment, made
// from python-bridge/requirements.lock on first need. Both answer with the
// same description. (The native runner's C++ SDK does not come from here:
// src/sdk unpacks the pinned executorch wheel without an environment.)

import { TrtxError } from '../util/errors.js';
import { pathSettingOf, settingsOf, type Env } from '../util/env.js';
import { pinDifferences, readPythonLock } from './lock-file.js';
import { ensureManagedEnv, type ManagedEnvOptions } from './managed.js';
import { probePython, type PythonProbe } from './probe.js';

export type { PythonEnvProgress } from './managed.js';
export { ENV_COST, managedEnvDir } from './managed.js';
export { readPythonLock } from './lock-file.js';

export type PythonEnvSource = '--python' | 'TRTX_PYTHON' | 'managed';

export interface PythonEnv {
  python: string;
  source: PythonEnvSource;
  /** The managed environment's folder; null for a named interpreter. */
  dir: string | null;
  /** Hash of the lock the managed environment was made from (also reported for a named one). */
  lockHash: string;
  probe: PythonProbe;
  /** Locked packages whose installed version differs (named interpreters only), e.g. "torch 2.11.0 (lock: 2.13.0)". */
  mismatches: string[];
  created: boolean;
}

export interface EnsurePythonEnvOptions extends Omit<ManagedEnvOptions, 'lock'> {
  /** --python */
  python?: string;
}

/** The interpreter the user named, if any: --python first, then the run's TRTX_PYTHON. */
export function namedPython(opts: { python?: string; env?: Env; cwd?: string }): { python: string; source: PythonEnvSource } | null {
  if (opts.python !== undefined) {
    if (opts.python.trim() === '') throw new TrtxError('BRIDGE_PYTHON_INVALID', '--python', 'empty path');
    return { python: opts.python, source: '--python' };
  }
  const fromEnv = settingsOf(opts.env).TRTX_PYTHON;
  if (fromEnv === undefined || fromEnv.trim() === '') return null;
  return { python: pathSettingOf(opts.env, 'TRTX_PYTHON', opts.cwd, 'command')!, source: 'TRTX_PYTHON' };
}

export async function ensurePythonEnv(opts: EnsurePythonEnvOptions = {}): Promise<PythonEnv> {
  const lock = await readPythonLock();
  const named = namedPython(opts);
  if (named) {
    const probe = await probePython(named.python, opts);
    // A missing package is the bridge's to name (BRIDGE_IMPORT_MISSING); another release is a warning.
    const mismatches = pinDifferences(lock, probe)
      .filter((d) => d.got !== null)
      .map((d) => `${d.name} ${d.got} (lock: ${d.want})`);
    return { python: named.python, source: named.source, dir: null, lockHash: lock.hash, probe, mismatches, created: false };
  }
  const m = await ensureManagedEnv({ ...opts, lock });
  return { python: m.python, source: 'managed', dir: m.dir, lockHash: lock.hash, probe: m.probe, mismatches: [], created: m.created };
}

export type { PythonProbe };
