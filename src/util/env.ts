// A run's environment as the library gets it: a value the command line
// passes down (its run's io.env, src/cli/io.ts), never read from the
// process, so that runs in one process can each have their own (a test sets
// TRTX_PYTHON or the Python doubles' variables for one run only). Where a
// caller passes none, trtx reads none of its settings (TRTX_*: the defaults
// hold) and the children it starts inherit the process's environment, as
// Node's child_process does by default.

import { tmpdir } from 'node:os';
import type { Options } from 'execa';

export type Env = Readonly<Record<string, string | undefined>>;

/** What trtx reads its settings from: the run's environment, or none. */
export const settingsOf = (env: Env | undefined): Env => env ?? {};

/**
 * execa's environment options for a child of the run: exactly the run's
 * environment plus `extra` when there is one; else the process's plus
 * `extra` (execa's default). A variable in `extra` that is undefined is removed.
 */
export function childEnvOptions(env: Env | undefined, extra: Record<string, string | undefined> = {}): Pick<Options, 'env' | 'extendEnv'> {
  if (env === undefined) return { env: extra, extendEnv: true };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...env, ...extra })) if (v !== undefined) out[k] = v;
  return { env: out, extendEnv: false };
}

/**
 * The folder for the run's temporary files: as os.tmpdir() reads the
 * process's environment (TMPDIR, TMP, TEMP, else /tmp), from the run's; the
 * process's without one.
 */
export function tempRootOf(env: Env | undefined): string {
  if (env === undefined) return tmpdir();
  const named = env.TMPDIR || env.TMP || env.TEMP || '/tmp';
  return named.length > 1 && named.endsWith('/') ? named.slice(0, -1) : named;
}
