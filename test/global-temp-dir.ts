// vitest globalSetup: the run gets a temp dir of its own (TMPDIR, inherited
// by every worker and every process a test starts), and fails when anything
// is left in it at the end. A private folder, not a before/after listing of
// the shared one, so that other processes using /tmp at the same time can
// neither hide a leak nor be blamed for one. Caches that tools keep there on
// purpose (tsx's compile cache, when a test runs bin/trtx from the sources)
// are not leaks. The folder itself is removed either way.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Entries tools create in TMPDIR by design and reuse across runs. */
const TOOL_CACHES = [/^tsx-\d+$/, /^node-compile-cache$/];

let dir: string | undefined;
let before: string | undefined;

export function setup(): void {
  before = process.env.TMPDIR;
  dir = mkdtempSync(join(tmpdir(), 'trtx-test-run-'));
  process.env.TMPDIR = dir;
  // Python processes the tests start directly (ExecuTorch's runtime, the
  // corpus build) keep torch's compile cache beside trtx's caches, as the
  // bridge does, not in the temp dir.
  process.env.TORCHINDUCTOR_CACHE_DIR ??= join(process.cwd(), '.cache', 'torchinductor');
}

export function teardown(): void {
  if (!dir) return;
  const left = readdirSync(dir).filter((name) => !TOOL_CACHES.some((re) => re.test(name)));
  rmSync(dir, { recursive: true, force: true });
  if (before === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = before;
  if (left.length > 0) {
    // vitest reports a throw from teardown but still exits 0: set the code first.
    process.exitCode = 1;
    throw new Error(`the test run left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in the temp dir: ${left.sort().join(', ')}`);
  }
}
