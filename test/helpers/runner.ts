// The native runner for tests: the prebuilt binary CI exports
// (TRTX_RUNNER_BIN, an AddressSanitizer build), else one CPU build of this
// checkout's sources, cached under .cache/ and shared by every test file.
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureRunner } from '../../src/runner/build.js';

const repo = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const TEST_RUNNER_CACHE = join(repo, '.cache', 'runner-test');

let runner: Promise<string> | undefined;

export function testRunner(): Promise<string> {
  runner ??= ensureRunner({ cacheDir: TEST_RUNNER_CACHE, cuda: 'off' }).then((r) => r.path);
  return runner;
}

/** Generous: a first build on a 2-core machine takes about a minute. */
export const BUILD_TIMEOUT_MS = 10 * 60 * 1000;
