// `trtx verify --backend-lib PATH` (or TRTX_BACKEND_LIB): the runner loads a
// shared library that registers its own TensorRTBackend with ExecuTorch and
// uses it instead of trtx's (native-runner/src/integration/backend_plugin.h,
// docs/backend-plugin.md). trtx's device allocator (poisoned arenas), caller
// streams and report stay; what only trtx's own backend reports does not:
// the per-delegate counters, elision and weight-streaming budgets, and
// whatever rests on trtx's reference payloads. Those are skipped with a
// note; the checks that need only the runtime (load, every output and cache
// staged vs zero-copy, persistence, the comparison with PyTorch) run.

import { stat } from 'node:fs/promises';
import type { RunnerReport } from '../runner/report.js';
import { TrtxError } from '../util/errors.js';
import { inFolder, type Env } from '../util/env.js';

export type VerifyBackend = RunnerReport['backend'];

/** The library asked for: the option, else a non-empty TRTX_BACKEND_LIB; undefined: trtx's own backend. */
export function backendLibAsked(option: string | undefined, env: Env): string | undefined {
  if (option !== undefined) return option;
  const fromEnv = env.TRTX_BACKEND_LIB;
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
}

/** The library as the run's folder (`cwd`) means it, refused before any run when it names no file. */
export async function requireBackendLib(path: string, cwd: string | undefined): Promise<string> {
  const where = inFolder(path, cwd);
  const found = await stat(where).catch(() => null);
  if (found?.isFile()) return where;
  throw new TrtxError('RUNNER_BACKEND_LIB_MISSING', path, found ? 'not a file' : 'no such file', {
    hint: 'name the shared library that registers TensorRTBackend (--backend-lib PATH or TRTX_BACKEND_LIB; docs/backend-plugin.md)',
  });
}

/** What verify says about a run on a plugin backend, for its notes. */
export function pluginNotes(backend: VerifyBackend): string[] {
  return [
    `backend: the TensorRTBackend of ${backend.path} (--backend-lib, built against ExecuTorch ${backend.executorch}) ran instead of trtx's; trtx's device allocator (arenas poisoned), caller streams and report stayed`,
    "skipped with a backend library: the checks that read trtx's own backend (weight-streaming budgets, per-delegate counters and elision, trtx's reference payloads); the runtime checks ran",
  ];
}
