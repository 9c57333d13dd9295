// What an interpreter has: its version, and the versions and locations of the
// packages trtx uses, read from package metadata (importlib.metadata /
// find_spec) so the probe takes a fraction of a second and imports nothing
// heavy. A missing package is null, never an error here: the caller decides.

import { execa } from 'execa';
import { TrtxError } from '../util/errors.js';
import { bridgeChildEnv } from '../bridge/env.js';
import type { Env } from '../util/env.js';

export interface PythonProbe {
  executable: string;
  /** major.minor.micro */
  version: string;
  packages: { torch: string | null; executorch: string | null; torch_tensorrt: string | null };
  /** The executorch package folder (holds the C++ SDK: include/, lib/, share/cmake). */
  executorchDir: string | null;
}

const PROBE = `
import importlib.metadata as md, importlib.util as iu, json, os, sys
def ver(dist):
    try:
        return md.version(dist)
    except Exception:
        return None
spec = iu.find_spec("executorch")
loc = list(spec.submodule_search_locations or []) if spec else []
print(json.dumps({
  "executable": sys.executable,
  "version": "%d.%d.%d" % sys.version_info[:3],
  "packages": {"torch": ver("torch"), "executorch": ver("executorch"), "torch_tensorrt": ver("torch-tensorrt")},
  "executorchDir": os.path.realpath(loc[0]) if loc else None,
}))
`;

/** Asks `python` for its version and packages, as a child of the run (its environment, util/env.ts, and cancellation). */
export async function probePython(python: string, run: { env?: Env; cwd?: string; signal?: AbortSignal } = {}): Promise<PythonProbe> {
  // The same environment the bridge gets (no inherited PYTHONPATH, no working
  // directory on sys.path), so the probe sees what an export will import.
  const r = await execa(python, ['-c', PROBE], {
    reject: false,
    timeout: 60_000,
    cancelSignal: run.signal,
    ...bridgeChildEnv({ base: run.env, cwd: run.cwd }),
  });
  if (r.failed || r.exitCode !== 0) {
    const notFound = (r as { code?: string }).code === 'ENOENT';
    throw new TrtxError(
      notFound ? 'PYENV_PYTHON_NOT_FOUND' : 'PYENV_PYTHON_BROKEN',
      python,
      notFound
        ? 'no such interpreter'
        : `the interpreter did not answer the probe: ${String(r.stderr || r.shortMessage)
            .trim()
            .split('\n')
            .slice(-3)
            .join(' | ')}`,
      {
        hint: 'name a working Python 3.10-3.14 with --python PATH or TRTX_PYTHON, or unset them to use the managed environment',
      },
    );
  }
  try {
    return JSON.parse(String(r.stdout).trim().split('\n').pop() ?? '') as PythonProbe;
  } catch {
    throw new TrtxError('PYENV_PYTHON_BROKEN', python, 'the interpreter printed something other than the probe result');
  }
}
