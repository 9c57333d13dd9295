// Where the native runner's ATen kernels come from (docs/reference-lowering.md,
// "Kernel sets"): a reference engine's program runs on libtorch's kernels --
// the ones eager PyTorch runs -- when the runner is built against a torch
// package (its include/ and lib/). That package is $TRTX_LIBTORCH_DIR when
// set ('none': build without), else the torch of trtx's managed Python
// environment when it has been made (trtx export makes it; `trtx env` shows
// it). Without either, the runner runs those programs on ExecuTorch's CPU
// kernels and every report says so.

import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { managedEnvDir, readPythonLock } from '../pyenv/index.js';
import { pathSettingOf, settingsOf, type Env } from '../util/env.js';
import { TrtxError } from '../util/errors.js';

export interface Libtorch {
  /** The torch package folder (include/ATen, lib/libtorch_cpu.so). */
  dir: string;
  /** torch.__version__ as its version.py says ('2.13.0+cpu'). */
  version: string;
  /** lib/libtorch_cuda.so is there: its kernels can run on a GPU. */
  cuda: boolean;
  /** Where it was found. */
  source: 'TRTX_LIBTORCH_DIR' | 'managed';
}

const isLibtorch = (dir: string) => existsSync(join(dir, 'include', 'ATen', 'ATen.h')) && existsSync(join(dir, 'lib', 'libtorch_cpu.so'));

async function versionOf(dir: string): Promise<string> {
  try {
    const text = await readFile(join(dir, 'version.py'), 'utf8');
    return /__version__\s*=\s*'([^']+)'/.exec(text)?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

async function describe(dir: string, source: Libtorch['source']): Promise<Libtorch> {
  return { dir, version: await versionOf(dir), cuda: existsSync(join(dir, 'lib', 'libtorch_cuda.so')), source };
}

/** The managed environment's torch package, when that environment exists. */
async function managedTorch(cacheDir: string): Promise<string | null> {
  let envDir: string;
  try {
    envDir = managedEnvDir(await readPythonLock(), cacheDir);
  } catch {
    return null;
  }
  const lib = join(envDir, 'lib');
  let names: string[];
  try {
    names = await readdir(lib);
  } catch {
    return null;
  }
  for (const name of names.filter((n) => /^python3\.\d+$/.test(n)).sort()) {
    const dir = join(lib, name, 'site-packages', 'torch');
    if (isLibtorch(dir)) return dir;
  }
  return null;
}

/** The libtorch the runner is built against, or null (ExecuTorch's kernels only). */
export async function findLibtorch(opts: { env?: Env; cwd?: string; cacheDir: string | null }): Promise<Libtorch | null> {
  const named = settingsOf(opts.env).TRTX_LIBTORCH_DIR;
  if (named !== undefined && named !== '') {
    if (named === 'none') return null;
    const dir = pathSettingOf(opts.env, 'TRTX_LIBTORCH_DIR', opts.cwd)!;
    if (!isLibtorch(dir)) {
      throw new TrtxError(
        'RUNNER_USAGE',
        'TRTX_LIBTORCH_DIR',
        `TRTX_LIBTORCH_DIR=${named} is not a torch package folder (it needs include/ATen/ATen.h and lib/libtorch_cpu.so; python -c "import torch, os; print(os.path.dirname(torch.__file__))" names one), or 'none'`,
      );
    }
    return describe(dir, 'TRTX_LIBTORCH_DIR');
  }
  const managed = opts.cacheDir === null ? null : await managedTorch(opts.cacheDir);
  return managed ? describe(managed, 'managed') : null;
}
