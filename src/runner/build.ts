// Builds the native runner (native-runner/, CMake) on first use into a cache
// folder keyed by a hash of its sources, the ExecuTorch SDK it links and the
// build flags, so a source or SDK change means a fresh build and an
// unchanged tree means none. The SDK is the pinned executorch wheel's,
// unpacked into the cache (src/sdk): the Python environment is not needed.
// Concurrent callers (two test files, two `trtx verify`) share one build
// through a lock folder. Nothing here prints: progress (with CMake's percent,
// and a heartbeat every second while a step runs) goes to the caller's
// onProgress.

import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { ensureExecutorchSdk, type ExecutorchSdk } from '../sdk/index.js';
import { TrtxError } from '../util/errors.js';
import { trackPath } from '../util/cleanup.js';
import { ownPid } from '../util/os-process.js';
import { execaTracked } from '../util/tracked-child.js';
import { findLibtorch, type Libtorch } from './libtorch.js';
import { withLock } from '../util/lock.js';
import { defaultCacheRoot } from '../util/cache-dir.js';
import { childEnvOptions, inFolder, settingsOf, type Env } from '../util/env.js';
import { lastLines } from '../util/last-lines.js';
import { formatElapsed, startTicker } from '../util/ticker.js';

export const RUNNER_BINARY_NAME = 'trtx-runner';
/** trtx's own backend as a --backend-lib library, built beside the binary when asked (EnsureRunnerOptions.backendPlugin). */
export const BACKEND_PLUGIN_NAME = 'libtrtx_backend_plugin.so';
/** ATen's kernels, built beside the binary when the runner is built against libtorch (native-runner/src/engine/aten_loader.cpp). */
export const ATEN_LIBRARY_NAME = 'libtrtx_aten.so';
/** Bumped when what goes into a build changes in a way the sources do not show. */
const BUILD_RECIPE = 'trtx-runner-build/2';
/** The parts of native-runner/ the runner binary is built from. */
const SOURCE_ROOTS = ['CMakeLists.txt', 'include', 'src', 'generated'];

export type RunnerProgress =
  | { phase: 'cached'; message: string }
  | { phase: 'prebuilt'; message: string }
  | { phase: 'waiting'; message: string }
  /** Fetching the ExecuTorch SDK (src/sdk): download bytes, unpacking. */
  | { phase: 'sdk'; message: string }
  /** tick: a heartbeat (the step is still running), not news. */
  | { phase: 'configure'; message: string; tick?: boolean }
  | { phase: 'build'; message: string; percent?: number; tick?: boolean }
  | { phase: 'ready'; message: string };

export interface EnsureRunnerOptions {
  onProgress?: (p: RunnerProgress) => void;
  /** Cache root; default the run's $TRTX_CACHE_DIR, else ~/.cache/trtx. */
  cacheDir?: string;
  /** The native-runner source folder; default the one in this checkout. */
  sourceDir?: string;
  /**
   * The CUDA half: 'auto' (default) builds it when a GPU is visible and nvcc
   * is there, never merely because nvcc exists; 'on' always (fails without
   * nvcc); 'off' never. Default from $TRTX_RUNNER_CUDA (on|off|auto).
   */
  cuda?: 'auto' | 'on' | 'off';
  /** The ExecuTorch C++ SDK; default the pinned wheel's, fetched on first use (src/sdk). */
  sdk?: Pick<ExecutorchSdk, 'root' | 'version'>;
  /** AddressSanitizer + UBSan build; default $TRTX_RUNNER_ASAN === '1'. */
  asan?: boolean;
  /** A prebuilt binary to use instead of building; default $TRTX_RUNNER_BIN; null: always build. */
  binary?: string | null;
  /** Parallel compile jobs; default the CPU count. */
  jobs?: number;
  /** Also build trtx's own backend as a --backend-lib library, libtrtx_backend_plugin.so beside the binary (tests). */
  backendPlugin?: boolean;
  /** The run's environment (util/env.ts): the TRTX_* defaults above come from it, and the build's children get it. */
  env?: Env;
  /** The run's folder: what a relative path in those defaults means (util/env.ts's pathSettingOf). */
  cwd?: string;
  /** Aborting it stops the build's children (cmake, make, the compilers). */
  signal?: AbortSignal;
  /**
   * The torch package whose ATen kernels run the reference engines' programs
   * (src/runner/libtorch.ts); null: none (ExecuTorch's CPU kernels). Default:
   * $TRTX_LIBTORCH_DIR, else the managed Python environment's torch when it exists.
   */
  libtorch?: string | null;
}

/** What every child of a build gets of the run: its environment and its cancellation. */
type ChildRun = Pick<EnsureRunnerOptions, 'env' | 'signal'>;
const childOptions = (run: ChildRun) => ({ ...childEnvOptions(run.env), cancelSignal: run.signal });

export interface RunnerBinary {
  path: string;
  /** The cache folder it lives in (null for a prebuilt binary). */
  dir: string | null;
  hash: string | null;
  /** True when this call compiled it. */
  built: boolean;
  /** The libtorch it was built against (its ATen kernels run the reference engines); null: none, or unknown for a prebuilt binary. */
  libtorch: Libtorch | null;
}

/** The checkout's native-runner folder, found by walking up from this module (bundled or not). */
export function defaultSourceDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'native-runner');
    if (existsSync(join(candidate, 'CMakeLists.txt'))) return candidate;
    const up = dirname(dir);
    if (up === dir) {
      throw new TrtxError('RUNNER_SOURCES_MISSING', 'native-runner', 'the native runner sources are not part of this installation');
    }
    dir = up;
  }
}

export { defaultCacheRoot };

async function listSources(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (p: string): Promise<void> => {
    let s;
    try {
      s = await stat(p);
    } catch {
      return;
    }
    if (s.isDirectory()) {
      for (const name of (await readdir(p)).sort()) await walk(join(p, name));
    } else if (s.isFile()) {
      out.push(p);
    }
  };
  for (const r of SOURCE_ROOTS) await walk(join(root, r));
  return out;
}

/**
 * A hash of everything the runner binary is built from (the file names and
 * contents under SOURCE_ROOTS) and of the build flags.
 */
export async function sourceHash(sourceDir: string, flags: readonly string[] = []): Promise<string> {
  const h = createHash('sha256');
  h.update(`${BUILD_RECIPE}\n${flags.join(' ')}\n`);
  for (const file of await listSources(sourceDir)) {
    const rel = relative(sourceDir, file).split(sep).join('/');
    h.update(rel);
    h.update('\0');
    h.update(
      createHash('sha256')
        .update(await readFile(file))
        .digest(),
    );
  }
  return h.digest('hex').slice(0, 16);
}

async function requireCmake(run: ChildRun): Promise<void> {
  const r = await execa('cmake', ['--version'], { reject: false, ...childOptions(run) });
  if (r.exitCode !== 0 || r.failed) {
    throw new TrtxError('RUNNER_TOOLCHAIN', 'cmake', 'cmake is not installed; the native runner is built with CMake on first use', {
      hint: 'install CMake >= 3.25, a C++17 compiler and the flatbuffers headers (Debian: apt-get install cmake g++ libflatbuffers-dev)',
    });
  }
}

/** "[ 45%] Building CXX object ..." from CMake's Makefile generator. */
const PERCENT = /^\[\s*(\d{1,3})%\]/;

/**
 * Runs cmake in a process group of its own, registered for the interrupt
 * handler (util/tracked-child.ts): make and the compilers stop before the
 * build folder is removed. onLine sees each line of its output as it arrives.
 */
async function cmake(args: string[], run: ChildRun, onLine?: (line: string) => void) {
  const child = execaTracked('cmake', args, { all: true, reject: false, ...childOptions(run) });
  let pending = '';
  if (onLine) {
    child.all?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
  }
  return await child;
}

/** ccache when it is installed: a rebuild after a source change (or another flag set) recompiles only what changed. */
async function compilerLauncher(run: ChildRun): Promise<string[]> {
  const r = await execa('ccache', ['--version'], { reject: false, timeout: 10_000, ...childOptions(run) });
  return r.exitCode === 0 ? ['-DCMAKE_CXX_COMPILER_LAUNCHER=ccache'] : [];
}

async function build(
  sourceDir: string,
  target: string,
  flags: string[],
  jobs: number,
  progress: (p: RunnerProgress) => void,
  run: ChildRun,
) {
  const work = `${target}.build-${ownPid}-${randomBytes(4).toString('hex')}`;
  const buildDir = join(work, 'build');
  const untrack = trackPath(work);
  try {
    await mkdir(work, { recursive: true });
    const cuda = flags.includes('-DTRTX_CUDA=ON');
    const what = `configuring the native runner (${cuda ? 'CPU and CUDA' : 'CPU'})`;
    progress({ phase: 'configure', message: what });
    const stopConfigure = startTicker(1000, (ms) => progress({ phase: 'configure', message: `${what}: ${formatElapsed(ms)}`, tick: true }));
    // The launcher changes how, not what, is built: it stays out of the hashed flags.
    const configure = await cmake(['-S', sourceDir, '-B', buildDir, ...flags, ...(await compilerLauncher(run))], run).finally(
      stopConfigure,
    );
    if (configure.exitCode !== 0) {
      throw new TrtxError(
        'RUNNER_BUILD_FAILED',
        'native-runner',
        `configuring the native runner failed:\n${lastLines(configure.all ?? '', 25).join('\n')}`,
        {
          hint: 'install CMake >= 3.25, a C++17 compiler and the flatbuffers headers (Debian: apt-get install cmake g++ libflatbuffers-dev); the ExecuTorch SDK is the pinned executorch wheel\u2019s (`npx trtx env` shows where)',
        },
      );
    }
    progress({
      phase: 'build',
      message: `compiling the native runner (${cuda ? 'CPU and CUDA' : 'CPU'} executors, ${jobs} jobs)`,
      percent: 0,
    });
    let last = 0;
    const plugin = flags.includes('-DTRTX_BACKEND_PLUGIN=ON');
    const targets = [RUNNER_BINARY_NAME, ...(plugin ? ['trtx_backend_plugin'] : [])];
    const stopCompile = startTicker(1000, (ms) =>
      progress({ phase: 'build', message: `compiling the native runner: ${last}% (${formatElapsed(ms)})`, percent: last, tick: true }),
    );
    const compile = await cmake(['--build', buildDir, '--target', ...targets, '--parallel', String(jobs)], run, (line) => {
      const m = PERCENT.exec(line);
      const pct = m ? Math.min(100, Number(m[1])) : -1;
      if (pct > last) {
        last = pct;
        progress({ phase: 'build', message: `compiling the native runner: ${pct}%`, percent: pct });
      }
    }).finally(stopCompile);
    if (compile.exitCode !== 0) {
      throw new TrtxError(
        'RUNNER_BUILD_FAILED',
        'native-runner',
        `compiling the native runner failed:\n${lastLines(String(compile.all ?? ''), 25).join('\n')}`,
      );
    }
    const staged = join(work, 'out');
    await mkdir(staged);
    await copyFile(join(buildDir, RUNNER_BINARY_NAME), join(staged, RUNNER_BINARY_NAME));
    await chmod(join(staged, RUNNER_BINARY_NAME), 0o755);
    if (plugin) await copyFile(join(buildDir, BACKEND_PLUGIN_NAME), join(staged, BACKEND_PLUGIN_NAME));
    // ATen's kernels (a build against libtorch): loaded from the runner's own folder when an engine needs them.
    if (existsSync(join(buildDir, ATEN_LIBRARY_NAME))) await copyFile(join(buildDir, ATEN_LIBRARY_NAME), join(staged, ATEN_LIBRARY_NAME));
    await writeFile(join(staged, 'build.json'), `${JSON.stringify({ flags, cuda, built: new Date().toISOString() }, null, 2)}\n`);
    // A folder appears whole or not at all.
    try {
      await rename(staged, target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'EEXIST' && code !== 'ENOTEMPTY') || !existsSync(join(target, RUNNER_BINARY_NAME))) throw e;
    }
  } finally {
    await rm(work, { recursive: true, force: true });
    untrack();
  }
}

/** A GPU this process could use: the driver's device node, or nvidia-smi listing one. */
export async function gpuVisible(run: ChildRun = {}): Promise<boolean> {
  if (existsSync('/dev/nvidia0')) return true;
  const r = await execa('nvidia-smi', ['-L'], { reject: false, timeout: 10_000, ...childOptions(run) });
  return r.exitCode === 0 && /\bGPU \d+:/.test(String(r.stdout ?? ''));
}

async function nvccFound(run: ChildRun = {}): Promise<boolean> {
  const r = await execa('nvcc', ['--version'], { reject: false, timeout: 10_000, ...childOptions(run) });
  return r.exitCode === 0;
}

/** Whether to build the CUDA half: asked for, or a GPU is visible (never merely because nvcc exists). */
export async function decideCuda(
  mode: 'auto' | 'on' | 'off',
  probe = { gpuVisible, nvccFound },
  run: ChildRun = {},
): Promise<{ cuda: boolean; note: string }> {
  if (mode === 'off') return { cuda: false, note: 'CUDA off' };
  if (mode === 'on') {
    if (!(await probe.nvccFound(run))) {
      throw new TrtxError('RUNNER_TOOLCHAIN', 'TRTX_RUNNER_CUDA=on', 'the CUDA half was asked for but nvcc is not on PATH', {
        hint: 'install the CUDA toolkit (nvcc), or unset TRTX_RUNNER_CUDA to build for the CPU',
      });
    }
    return { cuda: true, note: 'CUDA on (asked for)' };
  }
  // auto: nvcc is asked about only when a GPU is visible (no spawn on a machine without one).
  if (!(await probe.gpuVisible(run))) return { cuda: false, note: 'no GPU visible: CPU only' };
  return (await probe.nvccFound(run))
    ? { cuda: true, note: 'a GPU is visible: CPU and CUDA' }
    : { cuda: false, note: 'a GPU is visible but nvcc is not: CPU only' };
}

function cudaMode(option: EnsureRunnerOptions['cuda'], settings: Env): 'auto' | 'on' | 'off' {
  if (option) return option;
  const asked = (settings.TRTX_RUNNER_CUDA ?? 'auto').toLowerCase();
  if (asked === 'on' || asked === 'off' || asked === 'auto') return asked;
  throw new TrtxError('RUNNER_USAGE', 'TRTX_RUNNER_CUDA', `TRTX_RUNNER_CUDA=${settings.TRTX_RUNNER_CUDA}: expected on, off or auto`);
}

/**
 * The runner binary: a prebuilt one when given ($TRTX_RUNNER_BIN), the cached
 * build for the current sources, or a fresh build into the cache.
 */
export async function ensureRunner(options: EnsureRunnerOptions = {}): Promise<RunnerBinary> {
  const progress = options.onProgress ?? (() => {});
  const settings = settingsOf(options.env);
  const prebuilt = options.binary === undefined ? settings.TRTX_RUNNER_BIN : options.binary;
  if (prebuilt) {
    const at = inFolder(prebuilt, options.cwd); // named as set, opened in the run's folder
    if (!existsSync(at)) {
      throw new TrtxError('RUNNER_MISSING', prebuilt, 'the prebuilt native runner does not exist');
    }
    progress({ phase: 'prebuilt', message: `using the prebuilt native runner ${prebuilt}` });
    return { path: at, dir: null, hash: null, built: false, libtorch: null };
  }
  const sourceDir = options.sourceDir ?? defaultSourceDir();
  const asan = options.asan ?? settings.TRTX_RUNNER_ASAN === '1';
  const sdk =
    options.sdk ??
    (await ensureExecutorchSdk({
      env: options.env,
      cwd: options.cwd,
      signal: options.signal,
      onProgress: (p) => {
        if (p.phase !== 'cached' && p.phase !== 'ready') progress({ phase: 'sdk', message: p.message });
      },
    }));
  const { cuda } = await decideCuda(cudaMode(options.cuda, settings), undefined, options);
  const root = options.cacheDir ?? defaultCacheRoot(settings, options.cwd);
  // The managed environment lives in trtx's cache whatever folder the runner builds go to (none named: none).
  const envRoot = settings.TRTX_CACHE_DIR || settings.HOME ? defaultCacheRoot(settings, options.cwd) : null;
  const libtorch =
    options.libtorch === null
      ? null
      : options.libtorch !== undefined
        ? await findLibtorch({ env: { TRTX_LIBTORCH_DIR: options.libtorch }, cwd: options.cwd, cacheDir: envRoot })
        : await findLibtorch({ env: options.env, cwd: options.cwd, cacheDir: envRoot });
  const flags = [
    '-DCMAKE_BUILD_TYPE=Release',
    // -O1, not CMake's -O3: the first `trtx demo` waits for this build, and
    // -O1 compiles it in 30% less CPU time (43 s against 62 s of user time
    // on 2 cores, bench/first-run.ts). The runner's time goes to memcpy and
    // the reference engines' plain loops; without -ffast-math no level
    // reorders floating-point arithmetic, so results are the same bits.
    '-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG',
    '-DTRTX_BUILD_TESTS=OFF',
    `-DTRTX_CUDA=${cuda ? 'ON' : 'OFF'}`,
    `-DTRTX_ASAN=${asan ? 'ON' : 'OFF'}`,
    `-DCMAKE_PREFIX_PATH=${sdk.root}`,
    ...(options.backendPlugin ? ['-DTRTX_BACKEND_PLUGIN=ON'] : []),
    ...(libtorch ? [`-DTRTX_LIBTORCH_DIR=${libtorch.dir}`] : []),
  ];
  // The SDK's path is in the flags; its version goes into the hash too, so a
  // reinstalled wheel at the same path rebuilds.
  const hash = await sourceHash(sourceDir, [...flags, `executorch=${sdk.version}`, `torch=${libtorch?.version ?? 'none'}`]);
  const dir = join(root, `runner-${hash}`);
  const binary = join(dir, RUNNER_BINARY_NAME);
  if (existsSync(binary)) {
    progress({ phase: 'cached', message: `using the cached native runner ${dir}` });
    return { path: binary, dir, hash, built: false, libtorch };
  }
  await mkdir(root, { recursive: true });
  await requireCmake(options);
  const jobs = options.jobs ?? Math.max(1, availableParallelism());
  const built = await withLock(
    `${dir}.lock`,
    async () => {
      if (existsSync(binary)) return false;
      await build(sourceDir, dir, flags, jobs, progress, options);
      return true;
    },
    {
      purpose: 'building the native runner',
      done: () => existsSync(binary),
      onWait: (owner) =>
        progress({
          phase: 'waiting',
          message: `waiting for another process that is building the native runner${owner ? ` (pid ${owner.pid}, since ${owner.started})` : ''}`,
        }),
    },
  );
  if (!existsSync(binary)) {
    throw new TrtxError('RUNNER_BUILD_FAILED', dir, 'the native runner build left no binary behind');
  }
  progress({ phase: 'ready', message: `native runner ready: ${binary}` });
  return { path: binary, dir, hash, built: built === true, libtorch };
}
