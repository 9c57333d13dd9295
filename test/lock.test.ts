// The cache lock: a Ctrl-C'd holder must not make the next command wait
// (an interrupted runner build once hung every later verify for 30 minutes),
// a live holder must be waited for, and two waiters must never both hold it.

import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive, readLockOwner, withLock } from '../src/util/lock.js';
import { tempDir } from './helpers/temp.js';

/** A process id that is certainly not running: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('withLock', () => {
  it('records who holds it while the body runs and removes itself after', async () => {
    const lock = join(tempDir('lock'), 'x.lock');
    const owner = await withLock(lock, () => readLockOwner(lock), { purpose: 'testing' });
    expect(owner).toMatchObject({ pid: process.pid, host: hostname(), purpose: 'testing' });
    expect(await readLockOwner(lock)).toBeNull();
  });

  it('takes over at once from a holder that was killed (no 30-minute wait)', async () => {
    const lock = join(tempDir('lock'), 'x.lock');
    mkdirSync(lock);
    const pid = await deadPid();
    expect(processAlive(pid)).toBe(false);
    writeFileSync(join(lock, 'owner.json'), JSON.stringify({ pid, host: hostname(), started: 'then', purpose: 'building' }));
    let waited = false;
    const t0 = Date.now();
    const r = await withLock(lock, () => Promise.resolve('ran'), { onWait: () => (waited = true), pollMs: 20 });
    expect(r).toBe('ran');
    expect(waited).toBe(false);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('waits for a live holder, says who it is, and runs after it lets go', async () => {
    const lock = join(tempDir('lock'), 'x.lock');
    mkdirSync(lock);
    writeFileSync(join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, host: hostname(), started: 'now', purpose: 'building' }));
    const seen: Array<number | undefined> = [];
    setTimeout(() => rmSync(lock, { recursive: true, force: true }), 150);
    const r = await withLock(lock, () => Promise.resolve('ran'), { onWait: (o) => seen.push(o?.pid), pollMs: 20 });
    expect(r).toBe('ran');
    expect(seen).toEqual([process.pid]);
  });

  it('returns null without running when the work is done while waiting', async () => {
    const lock = join(tempDir('lock'), 'x.lock');
    mkdirSync(lock);
    writeFileSync(join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, host: hostname(), started: 'now', purpose: '' }));
    let ran = false;
    const r = await withLock(lock, () => Promise.resolve((ran = true)), { done: () => true, pollMs: 20 });
    expect(r).toBeNull();
    expect(ran).toBe(false);
  });

  it('an owner record that never appears is stale after the grace period', async () => {
    const lock = join(tempDir('lock'), 'x.lock');
    mkdirSync(lock);
    const r = await withLock(lock, () => Promise.resolve('ran'), { unreadableStaleMs: 100, pollMs: 20 });
    expect(r).toBe('ran');
  });

  it('never lets two holders in at once, even when both break the same stale lock', async () => {
    const lock = join(tempDir('lock'), 'x.lock');
    mkdirSync(lock);
    writeFileSync(join(lock, 'owner.json'), JSON.stringify({ pid: await deadPid(), host: hostname(), started: '', purpose: '' }));
    let inside = 0;
    let most = 0;
    const body = async () => {
      inside += 1;
      most = Math.max(most, inside);
      await new Promise((r) => setTimeout(r, 30));
      inside -= 1;
    };
    await Promise.all(Array.from({ length: 8 }, () => withLock(lock, body, { pollMs: 5 })));
    expect(most).toBe(1);
  });
});
