// The first `trtx verify` builds the native runner under a lock in the cache.
// A Ctrl-C during that build must not cost the next command anything: the
// interrupted build removes its lock and its build folder on the way out,
// and a lock left by a holder that was killed outright (its pid is gone) is
// taken over at once instead of being waited for. Both as a user meets
// them: bin/trtx, a cache of its own (TRTX_CACHE_DIR), no prebuilt runner.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { eventually, withoutNamedPython } from './helpers/bridge.js';
import { processesMentioning, spawnTrtx, type TrtxProcess } from './helpers/spawn-trtx.js';
import { tempDir } from './helpers/temp.js';
import { ensurePythonEnv } from '../src/pyenv/index.js';

/**
 * This process's environment without a prebuilt runner, with the cache and
 * temp dir given. The runner's ExecuTorch SDK comes from the managed Python
 * environment that already exists (named by TRTX_PYTHON), so the private
 * cache does not make a second one (minutes of pip) for a test about locks.
 */
function env(cache: string, tmp: string): Record<string, string | undefined> {
  const e: Record<string, string | undefined> = { ...process.env, TRTX_CACHE_DIR: cache, TMPDIR: tmp, TRTX_PYTHON: python };
  // Empty, not deleted: spawnTrtx lays the given variables over this process's
  // own, where CI sets a prebuilt runner; an empty one means none.
  e.TRTX_RUNNER_BIN = '';
  return e;
}

const lockOf = (cache: string) => (existsSync(cache) ? readdirSync(cache).find((f) => /^runner-[0-9a-f]+\.lock$/.test(f)) : undefined);
const ownerPid = (cache: string, lock: string): number | null => {
  try {
    return (JSON.parse(readFileSync(join(cache, lock, 'owner.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
};

async function interruptAndExpectClean(p: TrtxProcess, cache: string, tmp: string) {
  p.child.kill('SIGINT');
  const r = await p.exited;
  // No lock, no half-built folder, no compiler still running for it, no
  // compiler temp file (cc*.s) in the temp dir.
  expect(readdirSync(cache).filter((f) => f.includes('.lock') || f.includes('.build-'))).toEqual([]);
  expect(await eventually(() => processesMentioning(cache).length === 0, 5000)).toBe(true);
  expect(readdirSync(tmp).filter((f) => !/^tsx-\d+$/.test(f))).toEqual([]);
  expect(r, p.stderr()).toEqual({ code: null, signal: 'SIGINT' });
}

let python = '';
beforeAll(async () => {
  python = (await ensurePythonEnv({ env: withoutNamedPython() })).python;
}, 600_000);

describe('an interrupted runner build and the next command', () => {
  it('Ctrl-C during the build leaves no lock; a lock of a killed holder is taken over within seconds', { timeout: 180_000 }, async () => {
    const dir = tempDir('runner-lock');
    const cache = join(dir, 'cache');
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const program = join(dir, 'kv.pte');
    await writeFixture(program, kvDecoder());

    // 1. The first verify builds the runner under the lock; Ctrl-C while the compilers run.
    const first = spawnTrtx(['verify', program], { env: env(cache, tmp) });
    expect(
      await eventually(() => /compiling the native runner/.test(first.stderr()) || first.child.exitCode !== null, 90_000, 3),
      first.stderr(),
    ).toBe(true);
    const lock = lockOf(cache)!;
    expect(ownerPid(cache, lock)).toBe(first.child.pid);
    await new Promise((r) => setTimeout(r, 1500));
    await interruptAndExpectClean(first, cache, tmp);

    // 2. A holder killed outright (SIGKILL, a crash, a closed terminal) leaves its lock: its pid no longer exists.
    const dead = spawnSync('true').pid;
    mkdirSync(join(cache, lock));
    writeFileSync(
      join(cache, lock, 'owner.json'),
      JSON.stringify({ pid: dead, host: hostname(), started: new Date().toISOString(), purpose: 'building the native runner' }),
    );

    // 3. The next verify takes the lock over at once and builds.
    const started = Date.now();
    const next = spawnTrtx(['verify', program], { env: env(cache, tmp) });
    const tookOver = await eventually(() => ownerPid(cache, lock) === next.child.pid || next.child.exitCode !== null, 15_000, 3);
    const seconds = (Date.now() - started) / 1000;
    expect(tookOver && ownerPid(cache, lock) === next.child.pid, `not taken over after ${seconds}s: ${next.stderr()}`).toBe(true);
    expect(next.stderr()).not.toMatch(/waiting for another process/);
    await interruptAndExpectClean(next, cache, tmp);
  });
});
