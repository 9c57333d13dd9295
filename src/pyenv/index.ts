// Which Python trtx uses for export and where the ExecuTorch C++ SDK comes
// from: the interpreter the user names (--python, TRTX_PYTHON), used as it
// is, or trtx's managed environment, made from python-bridge/requirements.lock
// on first need. Both answer with the same description.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TrtxError } from '../util/errors.js';
import { pinDifferences, readPythonLock } from './lock-file.js';
import { ensureManagedEnv, type ManagedEnvOptions } from './managed.js';
import { probePython, type PythonProbe } from './probe.js';

export type { PythonEnvProgress } from './managed.js';
export { managedEnvDir } from './managed.js';
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
  env?: NodeJS.ProcessEnv;
}

/** The interpreter the user named, if any: --python first, then TRTX_PYTHON. */
export function namedPython(opts: { python?: string; env?: NodeJS.ProcessEnv }): { python: string; source: PythonEnvSource } | null {
  if (opts.python !== undefined) {
    if (opts.python.trim() === '') throw new TrtxError('BRIDGE_PYTHON_INVALID', '--python', 'empty path');
    return { python: opts.python, source: '--python' };
  }
  const fromEnv = (opts.env ?? process.env).TRTX_PYTHON;
  return fromEnv !== undefined && fromEnv.trim() !== '' ? { python: fromEnv, source: 'TRTX_PYTHON' } : null;
}

export async function ensurePythonEnv(opts: EnsurePythonEnvOptions = {}): Promise<PythonEnv> {
  const lock = await readPythonLock();
  const named = namedPython(opts);
  if (named) {
    const probe = await probePython(named.python, opts.signal);
    // A missing package is the bridge's to name (BRIDGE_IMPORT_MISSING); another release is a warning.
    const mismatches = pinDifferences(lock, probe)
      .filter((d) => d.got !== null)
      .map((d) => `${d.name} ${d.got} (lock: ${d.want})`);
    return { python: named.python, source: named.source, dir: null, lockHash: lock.hash, probe, mismatches, created: false };
  }
  const m = await ensureManagedEnv({ ...opts, lock });
  return { python: m.python, source: 'managed', dir: m.dir, lockHash: lock.hash, probe: m.probe, mismatches: [], created: m.created };
}

export interface ExecutorchSdk {
  /** The package folder: pass it as CMAKE_PREFIX_PATH (share/cmake/executorch-config.cmake). */
  root: string;
  include: string;
  lib: string;
  version: string;
}

/** The ExecuTorch C++ SDK shipped in the environment's executorch wheel. */
export function executorchSdk(env: PythonEnv): ExecutorchSdk {
  const root = env.probe.executorchDir;
  if (!root || !env.probe.packages.executorch) {
    throw new TrtxError('PYENV_NO_EXECUTORCH', env.python, 'executorch is not installed in this Python', {
      hint:
        env.source === 'managed'
          ? 'remove the managed environment folder and run again'
          : 'pip install executorch==1.5.1 there, or unset --python/TRTX_PYTHON to use the managed environment',
    });
  }
  const config = join(root, 'share', 'cmake', 'executorch-config.cmake');
  if (!existsSync(config) || !existsSync(join(root, 'include', 'executorch'))) {
    throw new TrtxError('PYENV_NO_SDK', root, `executorch ${env.probe.packages.executorch} has no C++ SDK (include/, lib/, share/cmake)`, {
      hint: 'ExecuTorch 1.5 wheels ship it; install executorch==1.5.1',
    });
  }
  return { root, include: join(root, 'include'), lib: join(root, 'lib'), version: env.probe.packages.executorch };
}

export type { PythonProbe };
