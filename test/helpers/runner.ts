// The native runner for tests: the prebuilt binary CI exports
// (TRTX_RUNNER_BIN, an AddressSanitizer build), else one CPU build of this
// checkout's sources, cached under .cache/ and shared by every test file.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BACKEND_PLUGIN_NAME, ensureRunner } from '../../src/runner/build.js';

const repo = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const TEST_RUNNER_CACHE = join(repo, '.cache', 'runner-test');

let runner: Promise<string> | undefined;

export function testRunner(): Promise<string> {
  runner ??= ensureRunner({ env: process.env, cacheDir: TEST_RUNNER_CACHE, cuda: 'off' }).then((r) => r.path);
  return runner;
}

/** Generous: a first build on a 2-core machine takes about a minute. */
export const BUILD_TIMEOUT_MS = 10 * 60 * 1000;

/** Whether a runner binary was built with AddressSanitizer and UBSan (their runtime entry points are linked in). */
export function isSanitized(binary: string): boolean {
  const bytes = readFileSync(binary);
  return bytes.includes('__asan_init') && bytes.includes('__ubsan_handle_');
}

let sanitized: Promise<string> | undefined;

/**
 * A runner built with AddressSanitizer and UBSan: the prebuilt one CI exports
 * (TRTX_RUNNER_BIN, made by .ci/run with -DTRTX_ASAN=ON) when it is one, else
 * a sanitized CPU build of this checkout, cached beside the plain one.
 */
export function sanitizedRunner(): Promise<string> {
  sanitized ??= (async () => {
    const given = process.env.TRTX_RUNNER_BIN;
    if (given && isSanitized(given)) return given;
    const r = await ensureRunner({ env: process.env, cacheDir: TEST_RUNNER_CACHE, cuda: 'off', asan: true, binary: null });
    return r.path;
  })();
  return sanitized;
}

let withPlugin: Promise<{ runner: string; plugin: string }> | undefined;

/**
 * A runner and trtx's own backend built as a --backend-lib library beside it
 * (libtrtx_backend_plugin.so): the pair CI's build makes (TRTX_RUNNER_BIN
 * with the library in its folder), else a CPU build of this checkout with the
 * library, cached beside the plain one.
 */
export function runnerWithBackendPlugin(): Promise<{ runner: string; plugin: string }> {
  withPlugin ??= (async () => {
    const given = process.env.TRTX_RUNNER_BIN;
    if (given && existsSync(join(dirname(given), BACKEND_PLUGIN_NAME)))
      return { runner: given, plugin: join(dirname(given), BACKEND_PLUGIN_NAME) };
    const r = await ensureRunner({ env: process.env, cacheDir: TEST_RUNNER_CACHE, cuda: 'off', backendPlugin: true, binary: null });
    return { runner: r.path, plugin: join(r.dir!, BACKEND_PLUGIN_NAME) };
  })();
  return withPlugin;
}
