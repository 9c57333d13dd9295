// ensureRunner: the source hash, the cache folder, building once and reusing
// the build, rebuilding when a source changes, and sharing one build between
// concurrent callers. A tiny stand-in CMake project keeps those cases fast;
// one case gets the real runner from native-runner/ as the CLI does, from
// trtx's own cache ($TRTX_CACHE_DIR, else ~/.cache/trtx): built there on
// first use, else the build a `trtx demo` of these sources left. In CI that is
// the installed tarball's demo (.ci/run), whose sources hash the same as this
// checkout's, so npm test does not compile the runner a second time (issue 26).
import { describe, expect, it } from 'vitest';
import { cpSync, readFileSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { decideCuda, defaultCacheRoot, defaultSourceDir, ensureRunner, sourceHash, type RunnerProgress } from '../src/runner/build.js';
import { isTrtxError } from '../src/util/errors.js';
import { BUILD_TIMEOUT_MS } from './helpers/runner.js';
import { codeOf } from './helpers/refusal.js';
import { tempDir } from './helpers/temp.js';

const work = tempDir('runner-build');
/** The stand-in projects do not link ExecuTorch; any SDK path will do. */
const sdk = { root: join(work, 'no-sdk'), version: '0.0.0' };

/** A CMake project whose trtx-runner prints `greeting`. */
function standIn(dir: string, greeting: string): string {
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(
    join(dir, 'CMakeLists.txt'),
    'cmake_minimum_required(VERSION 3.16)\nproject(standin LANGUAGES CXX)\nmessage(STATUS "trtx-runner: CUDA executors OFF")\nadd_executable(trtx-runner src/main.cpp)\n',
  );
  writeFileSync(join(dir, 'src', 'main.cpp'), `#include <cstdio>\nint main() { std::puts("${greeting}"); return 0; }\n`);
  return dir;
}

describe('sourceHash', () => {
  it('changes with a source file, a new file and the build flags, not with tests or docs', async () => {
    const dir = standIn(join(work, 'hash'), 'one');
    const base = await sourceHash(dir, ['-DX=1']);
    expect(await sourceHash(dir, ['-DX=1'])).toBe(base);
    expect(await sourceHash(dir, ['-DX=2'])).not.toBe(base);
    mkdirSync(join(dir, 'tests'));
    writeFileSync(join(dir, 'tests', 'a_test.cpp'), '// test\n');
    writeFileSync(join(dir, 'README.md'), '# doc\n');
    expect(await sourceHash(dir, ['-DX=1'])).toBe(base);
    writeFileSync(join(dir, 'src', 'extra.h'), '// new\n');
    const added = await sourceHash(dir, ['-DX=1']);
    expect(added).not.toBe(base);
    writeFileSync(join(dir, 'src', 'main.cpp'), '// edited\n');
    expect(await sourceHash(dir, ['-DX=1'])).not.toBe(added);
  });

  it('covers the real runner sources', async () => {
    const real = defaultSourceDir();
    expect(readdirSync(real)).toContain('CMakeLists.txt');
    expect(await sourceHash(real)).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('the CUDA half', () => {
  const probe = (gpu: boolean, nvcc: boolean) => ({ gpuVisible: () => Promise.resolve(gpu), nvccFound: () => Promise.resolve(nvcc) });
  it('is built when a GPU is visible, never merely because nvcc exists', async () => {
    expect((await decideCuda('auto', probe(false, true))).cuda).toBe(false);
    expect((await decideCuda('auto', probe(true, true))).cuda).toBe(true);
    expect(await decideCuda('auto', probe(true, false))).toMatchObject({ cuda: false, note: expect.stringMatching(/nvcc is not/) });
  });
  it('asks for nvcc only when a GPU is visible (auto): no spawn on a machine without one', async () => {
    let asked = 0;
    const counting = { gpuVisible: () => Promise.resolve(false), nvccFound: () => Promise.resolve(++asked > 0) };
    expect((await decideCuda('auto', counting)).cuda).toBe(false);
    expect(asked).toBe(0);
  });
  it('is built when asked (TRTX_RUNNER_CUDA=on), and asking without nvcc is an error', async () => {
    expect((await decideCuda('on', probe(false, true))).cuda).toBe(true);
    await expect(decideCuda('on', probe(true, false))).rejects.toMatchObject({ code: 'RUNNER_TOOLCHAIN' });
    expect((await decideCuda('off', probe(true, true))).cuda).toBe(false);
  });
  it('builds against the SDK it is given: another SDK path or version is another build', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const src = standIn(join(work, 'sdk-hash'), 'x');
    const cache = join(work, 'cache-sdk');
    const build = (root: string, version: string) =>
      ensureRunner({ sourceDir: src, cacheDir: cache, binary: null, cuda: 'off', sdk: { root, version } });
    const a = await build('/sdk/a', '1.5.1');
    expect(JSON.parse(readFileSync(join(a.dir!, 'build.json'), 'utf8')).flags).toContain('-DCMAKE_PREFIX_PATH=/sdk/a');
    expect((await build('/sdk/a', '1.5.1')).built).toBe(false);
    expect((await build('/sdk/b', '1.5.1')).hash).not.toBe(a.hash);
    expect((await build('/sdk/a', '1.5.2')).hash).not.toBe(a.hash);
  });
});

describe('the cache folder', () => {
  it("is the run's $TRTX_CACHE_DIR (in the run's folder when relative), else ~/.cache/trtx of the run's HOME, never the process's", () => {
    expect(defaultCacheRoot({ TRTX_CACHE_DIR: '/x/y', HOME: '/h' })).toBe('/x/y');
    expect(defaultCacheRoot({ TRTX_CACHE_DIR: 'c/d' }, '/run')).toBe('/run/c/d');
    expect(defaultCacheRoot({ HOME: '/h' })).toBe('/h/.cache/trtx');
    expect(codeOf(() => defaultCacheRoot({}))).toBe('CACHE_DIR_UNNAMED');
  });
});

describe('ensureRunner', () => {
  it('builds once, reuses the build, and rebuilds when a source changes', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const src = standIn(join(work, 'project'), 'first');
    const cache = join(work, 'cache');
    const events: RunnerProgress[] = [];
    const a = await ensureRunner({ sourceDir: src, cacheDir: cache, binary: null, sdk, cuda: 'off', onProgress: (p) => events.push(p) });
    expect(a.built).toBe(true);
    expect([...new Set(events.map((e) => e.phase))]).toEqual(['configure', 'build', 'ready']);
    // Compiling reports CMake's percent, rising to 100.
    const percents = events.filter((e) => e.phase === 'build').map((e) => (e as { percent?: number }).percent ?? -1);
    expect(percents[0]).toBe(0);
    expect(percents[percents.length - 1]).toBe(100);
    expect([...percents].sort((x, y) => x - y)).toEqual(percents);
    expect(a.dir).toBe(join(cache, `runner-${a.hash}`));
    expect((await execa(a.path)).stdout).toBe('first');

    const again: RunnerProgress[] = [];
    const b = await ensureRunner({ sourceDir: src, cacheDir: cache, binary: null, sdk, cuda: 'off', onProgress: (p) => again.push(p) });
    expect(b).toMatchObject({ path: a.path, built: false });
    expect(again.map((e) => e.phase)).toEqual(['cached']);

    writeFileSync(join(src, 'src', 'main.cpp'), '#include <cstdio>\nint main() { std::puts("second"); return 0; }\n');
    const c = await ensureRunner({ sourceDir: src, cacheDir: cache, binary: null, sdk, cuda: 'off' });
    expect(c.built).toBe(true);
    expect(c.path).not.toBe(a.path);
    expect((await execa(c.path)).stdout).toBe('second');
    // Nothing half-built is left beside the finished folders.
    expect(readdirSync(cache).sort()).toEqual([`runner-${a.hash}`, `runner-${c.hash}`].sort());
  });

  it('shares one build between concurrent callers', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const src = standIn(join(work, 'concurrent'), 'shared');
    const cache = join(work, 'cache-concurrent');
    const [x, y] = await Promise.all([
      ensureRunner({ sourceDir: src, cacheDir: cache, binary: null, sdk, cuda: 'off' }),
      ensureRunner({ sourceDir: src, cacheDir: cache, binary: null, sdk, cuda: 'off' }),
    ]);
    expect(x.path).toBe(y.path);
    expect([x.built, y.built].sort()).toEqual([false, true]);
  });

  it('reports a build failure with the compiler output', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const src = standIn(join(work, 'broken'), 'x');
    writeFileSync(join(src, 'src', 'main.cpp'), 'int main() { return undeclared_name; }\n');
    const err = await ensureRunner({ sourceDir: src, cacheDir: join(work, 'cache-broken'), binary: null, sdk, cuda: 'off' }).catch(
      (e) => e,
    );
    expect(isTrtxError(err) && err.code).toBe('RUNNER_BUILD_FAILED');
    expect((err as Error).message).toContain('undeclared_name');
  });

  it('reports a heartbeat every second while a step says nothing (a configure that takes 3 s)', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const src = standIn(join(work, 'slow'), 'slow');
    writeFileSync(
      join(src, 'CMakeLists.txt'),
      `${readFileSync(join(src, 'CMakeLists.txt'), 'utf8')}execute_process(COMMAND \${CMAKE_COMMAND} -E sleep 3)\n`,
    );
    const events: RunnerProgress[] = [];
    await ensureRunner({
      sourceDir: src,
      cacheDir: join(work, 'cache-slow'),
      binary: null,
      sdk,
      cuda: 'off',
      onProgress: (p) => events.push(p),
    });
    const ticks = events.filter((e) => e.phase === 'configure' && e.tick === true);
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(ticks[0].message).toMatch(/^configuring the native runner \(CPU\): \d+s$/);
  });

  it('uses a prebuilt binary when given one, and refuses a missing one', async () => {
    const src = standIn(join(work, 'prebuilt'), 'x');
    const fake = join(work, 'prebuilt-runner');
    cpSync(join(src, 'CMakeLists.txt'), fake);
    expect(await ensureRunner({ binary: fake })).toMatchObject({ path: fake, built: false, dir: null });
    const err = await ensureRunner({ binary: join(work, 'nope') }).catch((e) => e);
    expect(isTrtxError(err) && err.code).toBe('RUNNER_MISSING');
  });

  it(
    "builds the real runner from native-runner/ (CPU) into trtx's cache, or reuses the build there",
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      // What `trtx demo` and `trtx verify` ask for on a machine without a GPU
      // (no sanitizers: CI's TRTX_RUNNER_ASAN is for its own build).
      const opts = { cuda: 'off' as const, asan: false, binary: null, env: process.env };
      const first = await ensureRunner(opts);
      const second = await ensureRunner(opts);
      expect(second).toMatchObject({ path: first.path, built: false });
      // Against the pinned wheel's SDK, unpacked into the cache: no Python environment.
      const flags = JSON.parse(readFileSync(join(first.dir!, 'build.json'), 'utf8')).flags as string[];
      expect(flags.find((f) => f.startsWith('-DCMAKE_PREFIX_PATH='))).toMatch(/\/executorch-sdk\/1\.5\.\d+-[0-9a-f]{16}$/);
      const version = await execa(first.path, ['--version']);
      expect(version.stdout).toMatch(/^trtx-runner \d+\.\d+\.\d+ \(ExecuTorch 1\.5\.\d+[^)]*\)$/);
      const usage = await execa(first.path, ['run'], { reject: false });
      expect(usage.exitCode).toBe(2);
    },
  );
});
