// The model zoo for test/real-zoo-*.test.ts: built by transformers in a package
// folder beside trtx's managed environment on first use (under a lock),
// reused after (scripts/zoo-build.ts). A zoo that cannot be built fails the
// suite; it is never skipped, as the real corpus is not.
import { ensureZoo, type Zoo } from '../../scripts/zoo-build.js';
import { testRunner } from './runner.js';

/** Installing transformers and building the zoo takes minutes the first time. */
export const ZOO_TIMEOUT_MS = 900_000;

let pending: Promise<Zoo> | null = null;

export function realZoo(): Promise<Zoo> {
  pending ??= (async () => {
    // trtx verify (a child) uses $TRTX_RUNNER_BIN: the test build, made here rather than inside a test's time.
    process.env.TRTX_RUNNER_BIN ??= await testRunner();
    return ensureZoo({
      onProgress: (m) => process.stderr.write(`[zoo] ${m}\n`),
      onPythonEnv: (p) => p.phase !== 'cached' && process.stderr.write(`[python env] ${p.message}\n`),
    });
  })();
  return pending;
}
