// A run's environment as the library gets it: a value the command line
// passes down (its run's io.env, src/cli/io.ts), never read from the
// process, so that runs in one process can each have their own (a test sets
// TRTX_PYTHON or the Python doubles' variables for one run only). Where a
// caller passes none, trtx reads none of its settings (TRTX_*: the defaults
// hold) and the children it starts inherit the process's environment, as
// Node's child_process does by default.

import { isAbsolute, resolve } from 'node:path';
import type { Options } from 'execa';
import { TrtxError } from './errors.js';

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
 * process's environment (TMPDIR, TMP, TEMP, else /tmp), from the run's. The
 * process's own is read only at the top (src/cli/io.ts), so two runs in one
 * process each keep theirs.
 */
export function tempRootOf(env: Env | undefined): string {
  const settings = settingsOf(env);
  const named = settings.TMPDIR || settings.TMP || settings.TEMP || '/tmp';
  return named.length > 1 && named.endsWith('/') ? named.slice(0, -1) : named;
}

/**
 * The run's home folder (HOME), where trtx's cache is by default. The
 * command line fills it from the operating system when the environment
 * has none (src/cli/io.ts); a library caller names it in the environment
 * it passes, or names the cache with TRTX_CACHE_DIR.
 */
export function homeOf(env: Env | undefined): string {
  const home = settingsOf(env).HOME;
  if (home === undefined || home === '') {
    throw new TrtxError('CACHE_DIR_UNNAMED', 'HOME', 'the run has no home folder, so trtx has no cache folder', {
      hint: 'set HOME, or name the cache folder with TRTX_CACHE_DIR',
    });
  }
  return home;
}

/**
 * `path` as the run's folder (`cwd`) means it: a relative path under that
 * folder, an absolute one as it is. Without a folder (a library caller that
 * names none) as given, which the file system reads against the process's.
 */
export function inFolder(path: string, cwd: string | undefined): string {
  return cwd === undefined || isAbsolute(path) ? path : resolve(cwd, path);
}

/**
 * A setting of the run's environment that names a file or folder, as the
 * run's folder means it (inFolder). `command`: a bare name without a slash
 * is a command looked up on PATH (an interpreter, TRTX_PYTHON) and stays as
 * it is. Messages name the setting as it was set; this is what is opened.
 */
export function pathSettingOf(
  env: Env | undefined,
  name: string,
  cwd: string | undefined,
  kind: 'path' | 'command' = 'path',
): string | undefined {
  const value = settingsOf(env)[name];
  if (value === undefined || value === '') return value;
  if (kind === 'command' && !value.includes('/')) return value;
  return inFolder(value, cwd);
}
