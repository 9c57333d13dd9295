// trtx's own Python environment: a virtual environment made from
// python-bridge/requirements.lock on first need, in the cache folder, named by
// the lock's hash, and reused after. It is made under a lock (two commands
// starting at once make it once), in place, and marked complete only at the
// end: a folder without its marker (an interrupted install) is removed and
// made again. Progress goes to the caller's onProgress; nothing here prints.

import { existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { platform } from 'node:os';
import { join } from 'node:path';
import { TrtxError } from '../util/errors.js';
import { makeTempDir, trackPath } from '../util/cleanup.js';
import { withLock } from '../util/lock.js';
import { execaTracked } from '../util/tracked-child.js';
import { defaultCacheRoot } from '../util/cache-dir.js';
import { childEnvOptions, pathSettingOf, settingsOf, tempRootOf, type Env } from '../util/env.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { lastLines } from '../util/last-lines.js';
import { pinDifferences, readPythonLock, type PythonLock } from './lock-file.js';
import { probePython, type PythonProbe } from './probe.js';
import { pipProgress } from './pip-progress.js';
import { formatElapsed, startTicker } from '../util/ticker.js';

export type PythonEnvProgress =
  | { phase: 'cached'; message: string }
  | { phase: 'waiting'; message: string }
  | { phase: 'create'; message: string }
  /** tick: a heartbeat while pip runs (its output can stall for a minute on a large wheel), not news. */
  | { phase: 'install'; message: string; tick?: boolean }
  | { phase: 'ready'; message: string };

export interface ManagedEnvOptions {
  /** Cache root; default the run's $TRTX_CACHE_DIR, else ~/.cache/trtx. */
  cacheDir?: string;
  /** The run's environment (util/env.ts): the defaults named $TRTX_... here come from it, and python and pip get it. */
  env?: Env;
  /** The run's folder: what a relative path in those defaults means (util/env.ts's pathSettingOf). */
  cwd?: string;
  /** The interpreter the environment is made from; default the run's $TRTX_BOOTSTRAP_PYTHON, else python3. */
  bootstrapPython?: string;
  onProgress?: (p: PythonEnvProgress) => void;
  signal?: AbortSignal;
  /** The lock to install; default python-bridge/requirements.lock. */
  lock?: PythonLock;
}

export interface ManagedEnv {
  dir: string;
  python: string;
  lock: PythonLock;
  probe: PythonProbe;
  /** True when this call made it. */
  created: boolean;
}

const MARKER = 'trtx-env.json';
/** What making the environment costs, said before it starts (measured: a 2-core machine, PyPI over the internet). */
export const ENV_COST = 'about 1.5 GB on disk, downloaded from PyPI, and 2 to 5 minutes';
/** The interpreters ExecuTorch 1.5 publishes wheels for. */
const SUPPORTED = { min: [3, 10], max: [3, 14] } as const;

function interpreterIn(dir: string): string {
  return platform() === 'win32' ? join(dir, 'Scripts', 'python.exe') : join(dir, 'bin', 'python');
}

export function managedEnvDir(lock: PythonLock, cacheDir: string): string {
  return join(cacheDir, 'python', `env-${lock.hash}`);
}

async function readMarker(dir: string): Promise<PythonProbe | null> {
  try {
    const m = JSON.parse(await readFile(join(dir, MARKER), 'utf8')) as { probe?: PythonProbe };
    return m.probe && existsSync(interpreterIn(dir)) ? m.probe : null;
  } catch {
    return null;
  }
}

async function checkBootstrap(python: string, run: Pick<ManagedEnvOptions, 'env' | 'signal'>): Promise<string> {
  const probe = await probePython(python, run).catch((e: unknown) => {
    if (e instanceof TrtxError && e.code === 'PYENV_PYTHON_NOT_FOUND') {
      throw new TrtxError('PYENV_BOOTSTRAP_MISSING', python, 'no Python to make trtx\u2019s environment from', {
        hint: 'install Python 3.10-3.14 with its venv module (Debian: apt-get install python3 python3-venv), or name one with TRTX_BOOTSTRAP_PYTHON',
      });
    }
    throw e;
  });
  const [major, minor] = probe.version.split('.').map(Number) as [number, number];
  const below = major < SUPPORTED.min[0] || (major === SUPPORTED.min[0] && minor < SUPPORTED.min[1]);
  const above = major > SUPPORTED.max[0] || (major === SUPPORTED.max[0] && minor > SUPPORTED.max[1]);
  if (below || above) {
    throw new TrtxError(
      'PYENV_BOOTSTRAP_VERSION',
      python,
      `Python ${probe.version}: ExecuTorch 1.5 publishes wheels for 3.10 to 3.14 only`,
      {
        hint: 'name a supported interpreter with TRTX_BOOTSTRAP_PYTHON',
      },
    );
  }
  return probe.version;
}

async function create(dir: string, opts: ManagedEnvOptions, lock: PythonLock): Promise<PythonProbe> {
  const progress = opts.onProgress ?? (() => {});
  const bootstrap = opts.bootstrapPython ?? pathSettingOf(opts.env, 'TRTX_BOOTSTRAP_PYTHON', opts.cwd, 'command') ?? 'python3';
  const version = await checkBootstrap(bootstrap, opts);
  await rm(dir, { recursive: true, force: true }); // an interrupted earlier attempt
  // An interrupt removes the half-made environment (the marker would make the
  // next command do that anyway, but not before then), and pip's temporary
  // folders: pip is stopped with its group (util/tracked-child.ts) and would
  // leave its pip-unpack-* folders in $TMPDIR, so it gets a private one.
  const untrackDir = trackPath(dir);
  const tmp = await makeTempDir('trtx-pip-', tempRootOf(opts.env));
  const env = childEnvOptions(opts.env, { PIP_NO_PYTHON_VERSION_WARNING: '1', TMPDIR: tmp.path });
  await mkdir(dir, { recursive: true });
  let latest = 'creating the virtual environment';
  const stopTicker = startTicker(1000, (ms) => progress({ phase: 'install', message: `${latest} (${formatElapsed(ms)})`, tick: true }));
  try {
    progress({
      phase: 'create',
      message: `creating trtx's Python environment for export (Python ${version}, torch, executorch and their dependencies) in ${dir}: first use only, ${ENV_COST}`,
    });
    const venv = await execaTracked(bootstrap, ['-m', 'venv', dir], { all: true, reject: false, cancelSignal: opts.signal, ...env });
    if (venv.exitCode !== 0) {
      throw new TrtxError('PYENV_CREATE_FAILED', dir, `python -m venv failed:\n${lastLines(venv.all ?? '', 15).join('\n')}`, {
        hint: 'install the venv module (Debian: apt-get install python3-venv)',
      });
    }
    const python = interpreterIn(dir);
    const pip = execaTracked(
      python,
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', '-r', lock.path],
      {
        all: true,
        reject: false,
        cancelSignal: opts.signal,
        ...env,
      },
    );
    latest = 'pip: resolving the locked packages';
    const report = pipProgress((message) => {
      latest = `pip: ${message}`;
      progress({ phase: 'install', message });
    });
    pip.all?.on('data', (chunk: Buffer) => report(chunk.toString('utf8')));
    const r = await pip;
    if (r.exitCode !== 0) {
      throw new TrtxError(
        'PYENV_INSTALL_FAILED',
        lock.path,
        `pip could not install the locked packages:\n${lastLines(r.all ?? '', 15).join('\n')}`,
        {
          hint: 'the package index must be reachable (PyPI, or a mirror set in pip.conf); run again once it is',
        },
      );
    }
    const probe = await probePython(python, opts);
    const wrong = pinDifferences(lock, probe)[0];
    if (wrong) {
      throw new TrtxError(
        'PYENV_INSTALL_FAILED',
        dir,
        `${wrong.name} ${wrong.got ?? 'is missing'} after installing the lock, which pins ${wrong.want}`,
      );
    }
    // Atomically: a waiter's done() sees the marker exist and reads it at once,
    // so it must never find it empty or half-written.
    await writeFileAtomic(join(dir, MARKER), `${JSON.stringify({ lock: lock.hash, created: new Date().toISOString(), probe }, null, 2)}\n`);
    return probe;
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  } finally {
    stopTicker();
    untrackDir();
    await tmp.remove();
  }
}

/** The managed environment, made on first use (with progress) and reused after. */
export async function ensureManagedEnv(opts: ManagedEnvOptions = {}): Promise<ManagedEnv> {
  const progress = opts.onProgress ?? (() => {});
  const lock = opts.lock ?? (await readPythonLock());
  const root = opts.cacheDir ?? defaultCacheRoot(settingsOf(opts.env), opts.cwd);
  const dir = managedEnvDir(lock, root);
  const python = interpreterIn(dir);
  const cached = await readMarker(dir);
  if (cached) {
    progress({ phase: 'cached', message: `using trtx's Python environment ${dir}` });
    return { dir, python, lock, probe: cached, created: false };
  }
  await mkdir(join(root, 'python'), { recursive: true });
  let created = false;
  await withLock(
    `${dir}.lock`,
    async () => {
      if (await readMarker(dir)) return;
      await create(dir, opts, lock);
      created = true;
    },
    {
      purpose: 'creating trtx\u2019s Python environment',
      done: () => existsSync(join(dir, MARKER)),
      onWait: (owner) =>
        progress({
          phase: 'waiting',
          message: `waiting for another process that is creating trtx's Python environment${owner ? ` (pid ${owner.pid})` : ''}`,
        }),
    },
  );
  const probe = await readMarker(dir);
  if (!probe) throw new TrtxError('PYENV_CREATE_FAILED', dir, 'the environment was not completed');
  progress({
    phase: 'ready',
    message: `trtx's Python environment is ready: torch ${probe.packages.torch}, executorch ${probe.packages.executorch}`,
  });
  return { dir, python, lock, probe, created };
}
