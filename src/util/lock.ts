// A lock folder shared by processes that build or create one thing in a
// cache (the native runner, the managed Python environment). The folder is
// created atomically (mkdir) and records who holds it: process id, host and
// start time. A waiter takes the lock over as soon as its holder is gone
// (the process id no longer exists on this host), so a Ctrl-C during a build
// costs the next command nothing; a holder that is alive is waited for, with
// one message saying who it is. Nothing here prints: the caller's onWait does.

import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { trackPath } from './cleanup.js';
import { ownPid, processAlive } from './os-process.js';

export interface LockOwner {
  pid: number;
  host: string;
  started: string;
  /** What the holder is doing, for the waiting message. */
  purpose: string;
}

export interface LockOptions {
  /** Stop waiting: return null from withLock once this becomes true (the work is already done). */
  done?: () => boolean;
  /** Called once when the lock is held by a live process and this call starts to wait. */
  onWait?: (owner: LockOwner | null) => void;
  /** Milliseconds between polls while waiting. */
  pollMs?: number;
  /** An owner record that cannot be read (torn write) is stale after this long. */
  unreadableStaleMs?: number;
  purpose?: string;
}

const OWNER_FILE = 'owner.json';

export { processAlive };

export async function readLockOwner(lockDir: string): Promise<LockOwner | null> {
  try {
    const raw = JSON.parse(await readFile(join(lockDir, OWNER_FILE), 'utf8')) as Partial<LockOwner>;
    if (typeof raw.pid !== 'number' || typeof raw.host !== 'string') return null;
    return { pid: raw.pid, host: raw.host, started: String(raw.started ?? ''), purpose: String(raw.purpose ?? '') };
  } catch {
    return null;
  }
}

/**
 * Whether the lock's holder is gone: a recorded process on this host that no
 * longer exists. A holder on another host (a shared cache folder) is trusted
 * while its record is readable; an unreadable record is stale after a grace
 * period (the holder died between mkdir and writing the record).
 */
async function isStale(lockDir: string, firstSeenUnreadable: Map<string, number>, graceMs: number): Promise<boolean> {
  const owner = await readLockOwner(lockDir);
  if (owner) {
    firstSeenUnreadable.delete(lockDir);
    return owner.host === hostname() && !processAlive(owner.pid);
  }
  const now = Date.now();
  const first = firstSeenUnreadable.get(lockDir) ?? now;
  firstSeenUnreadable.set(lockDir, first);
  return now - first > graceMs;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A breaker older than this belongs to a process that died mid-takeover. */
const BREAKER_STALE_MS = 10_000;

/**
 * Removes a stale lock under a second, short-lived lock (the breaker), and
 * only after judging it stale again there: two waiters that both saw the old
 * holder die must not both remove it, or the second would remove the lock
 * the first has just taken.
 */
async function breakStaleLock(lockDir: string, unreadable: Map<string, number>, graceMs: number): Promise<void> {
  const breaker = `${lockDir}.break`;
  try {
    await mkdir(breaker);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    try {
      const { mtimeMs } = await stat(breaker);
      if (Date.now() - mtimeMs > BREAKER_STALE_MS) await rm(breaker, { recursive: true, force: true });
    } catch {
      // gone already
    }
    return;
  }
  try {
    if (await isStale(lockDir, unreadable, graceMs)) await rm(lockDir, { recursive: true, force: true });
  } finally {
    await rm(breaker, { recursive: true, force: true });
  }
}

/**
 * Runs body while holding lockDir. Returns null without running body when
 * options.done() turns true while waiting (another process finished the work).
 */
export async function withLock<T>(lockDir: string, body: () => Promise<T>, options: LockOptions = {}): Promise<T | null> {
  const pollMs = options.pollMs ?? 200;
  const unreadable = new Map<string, number>();
  let untrack = () => {};
  for (let announced = false; ;) {
    try {
      await mkdir(lockDir);
      // An interrupted holder removes its lock on the way out (src/util/cleanup.ts).
      untrack = trackPath(lockDir);
      const owner: LockOwner = {
        pid: ownPid,
        host: hostname(),
        started: new Date().toISOString(),
        purpose: options.purpose ?? '',
      };
      await writeFile(join(lockDir, OWNER_FILE), JSON.stringify(owner));
      break;
    } catch (e) {
      untrack();
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (options.done?.()) return null;
    if (await isStale(lockDir, unreadable, options.unreadableStaleMs ?? 10_000)) {
      await breakStaleLock(lockDir, unreadable, options.unreadableStaleMs ?? 10_000);
      continue;
    }
    if (!announced) {
      options.onWait?.(await readLockOwner(lockDir));
      announced = true;
    }
    await sleep(pollMs);
  }
  try {
    return await body();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
    untrack();
  }
}
