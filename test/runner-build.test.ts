// ensureRunner: the source hash, the cache folder, building once and reusing
// the build, rebuilding when a source changes, and sharing one build between
// concurrent callers. A tiny stand-in CMake project keeps those cases fast;
// one case builds the real runner from native-runner/.
import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { defaultCacheRoot, defaultSourceDir, ensureRunner, sourceHash, type RunnerProgress } from '../src/runner/build.js';
import { isTrtxError } from '../src/util/errors.js';
import { BUILD_TIMEOUT_MS, TEST_RUNNER_CACHE } from './helpers/runner.js';

const work = mkdtempSync(join(tmpdir(), 'trtx-runner-build-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

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

describe('the cache folder', () => {
  it('is $TRTX_CACHE_DIR, else ~/.cache/trtx', () => {
    expect(defaultCacheRoot({ TRTX_CACHE_DIR: '/x/y' })).toBe('/x/y');
    expect(defaultCacheRoot({})).toBe(join(homedir(), '.cache', 'trtx'));
  });
});

describe('ensureRunner', () => {
  it('builds once, reuses the build, and rebuilds when a source changes', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const src = standIn(join(work, 'project'), 'first');
    const cache = join(work, 'cache');
    const events: RunnerProgress[] = [];
    const a = await ensureRunner({ sourceDir: src, cacheDir: cache, binary: null, onProgress: (p) => events.push(p) });
    expect(a.built).toBe(true);
    expect(events.map((e) => e.phase)).toEqual(['configure', 'build', 'ready']);
    expect(a.dir).toBe(join(cache, `runner-${a.hash}`));
    expect((await execa(a.path)).stdout).toBe('first');

    const again: RunnerProgress[] = [];
    const b = await ensureRunner({ sourceDir: src, cacheDir: cache, binary: null, onProgress: (p) => again.push(p) });
    expect(b).toMatchObject({ path: a.path, built: false });
    expect(again.map((e) => e.phase)).toEqual(['cached']);

    writeFileSync(join(src, 'src', 'main.cpp'), '#include <cstdio>\nint main() { std::puts("second"); return 0; }\n');
    const c = await ensureRunner({ sourceDir: src, cacheDir: cache, binary: null });
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
      ensureRunner({ sourceDir: src, cacheDir: cache, binary: null }),
      ensureRunner({ sourceDir: src, cacheDir: cache, binary: null }),
    ]);
    expect(x.path).toBe(y.path);
    expect([x.built, y.built].sort()).toEqual([false, true]);
  });

  it('reports a build failure with the compiler output', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const src = standIn(join(work, 'broken'), 'x');
    writeFileSync(join(src, 'src', 'main.cpp'), 'int main() { return undeclared_name; }\n');
    const err = await ensureRunner({ sourceDir: src, cacheDir: join(work, 'cache-broken'), binary: null }).catch((e) => e);
    expect(isTrtxError(err) && err.code).toBe('RUNNER_BUILD_FAILED');
    expect((err as Error).message).toContain('undeclared_name');
  });

  it('uses a prebuilt binary when given one, and refuses a missing one', async () => {
    const src = standIn(join(work, 'prebuilt'), 'x');
    const fake = join(work, 'prebuilt-runner');
    cpSync(join(src, 'CMakeLists.txt'), fake);
    expect(await ensureRunner({ binary: fake })).toMatchObject({ path: fake, built: false, dir: null });
    const err = await ensureRunner({ binary: join(work, 'nope') }).catch((e) => e);
    expect(isTrtxError(err) && err.code).toBe('RUNNER_MISSING');
  });

  it('builds the real runner from native-runner/ (CPU) and caches it', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const opts = { cacheDir: TEST_RUNNER_CACHE, cuda: 'off' as const, binary: null };
    const first = await ensureRunner(opts);
    const second = await ensureRunner(opts);
    expect(second).toMatchObject({ path: first.path, built: false });
    const version = await execa(first.path, ['--version']);
    expect(version.stdout).toMatch(/^trtx-runner \d+\.\d+\.\d+$/);
    const usage = await execa(first.path, ['run'], { reject: false });
    expect(usage.exitCode).toBe(2);
  });
});
