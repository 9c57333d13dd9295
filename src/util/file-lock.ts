// One writer at a time per target: an advisory flock(2) lock on a small
// lock file beside the target, the platform's standard way to serialise
// writers (util-linux flock(1), dpkg, systemd and most Linux tools).
//
// Node has no flock binding (and a native addon would need a compiler at
// install time), so the lock is held by a child: a small shell running
// flock(1) from util-linux (an Essential package on Debian and Ubuntu)
// takes the lock on a descriptor, says so, and holds it until its stdin
// closes. The kernel releases a flock when its holder ends, so the lock
// goes when the writer exits, crashes or is killed (its end of the pipe
// closes, the shell sees EOF): no stale-lock detection, no polling.
//
// The lock file records who holds it, for a waiter's message, and is
// removed by its holder before it lets go (HOLD below says why that is
// safe). src/util/lock.ts is the other lock in trtx: a folder for cache
// builds, where a crashed holder is taken over by process id.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { sidecarPath } from './target.js';
import { trackPath } from './cleanup.js';
import { TrtxError } from './errors.js';
import { ownPid } from './os-process.js';

export const LOCK_SUFFIX = '.trtx-lock';

export const lockPathFor = (target: string) => sidecarPath(target, LOCK_SUFFIX, true);

export interface LockHolder {
  pid: number;
  host: string;
  command: string;
  since: string;
}

export interface TargetLock {
  path: string;
  release(): Promise<void>;
}

export interface LockOptions {
  /** Wait for the holder (true) or fail at once with REWRITE_LOCKED. */
  wait: boolean;
  /** Called once, before waiting, with the holder when it is known. */
  onWait?: (holder: LockHolder | null) => void;
  /** What this writer does, recorded for a waiter's message. */
  command: string;
}

function holderOf(text: string): LockHolder | null {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    return typeof h.pid === 'number'
      ? { pid: h.pid, host: String(h.host ?? ''), command: String(h.command ?? ''), since: String(h.since ?? '') }
      : null;
  } catch {
    return null;
  }
}

export const describeHolder = (h: LockHolder | null) =>
  h ? `trtx pid ${h.pid}${h.host && h.host !== hostname() ? ` on ${h.host}` : ''} (${h.command}, since ${h.since})` : 'another process';

// The helper shell opens the lock file on fd 9, flocks that descriptor
// (flock(1) in fd mode), and says whether the file it holds is still the one
// the path names (`-ef`: same device and inode). It is not when the previous
// holder unlinked it while this one waited: the lock then protects nothing
// and is taken again on the new file. A holder unlinks the file before it
// releases, so no lock file is left behind (except by a writer that was
// killed; the next one reuses it). Then the shell waits on its stdin
// (`read`, a builtin: two processes in all) and exits at EOF, closing fd 9.
const HOLD =
  'exec 9<>"$1" || exit 3; flock $2 -x 9 || exit $?; if [ /proc/$$/fd/9 -ef "$1" ]; then echo same; else echo moved; fi; read _ || true';

interface Held {
  child: ChildProcess;
  sameFile: boolean;
}

/**
 * Starts the helper on `lockPath`; resolves once it holds the lock, or with
 * null when `noBlock` and the lock is held elsewhere.
 */
function startFlock(lockPath: string, noBlock: boolean): Promise<Held | null> {
  // -E 75: the exit code for "held elsewhere" under -n, distinct from flock's own errors (1).
  const args = ['-c', HOLD, 'trtx-lock', lockPath, noBlock ? '-n -E 75' : ''];
  return new Promise((resolve, reject) => {
    const child = spawn('sh', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    let settled = false;
    const done = (v: Held | null, e?: Error) => {
      if (settled) return;
      settled = true;
      if (e) reject(e);
      else resolve(v);
    };
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!stdout.includes('\n')) return;
      done({ child, sameFile: stdout.startsWith('same') });
    });
    child.once('error', (e) => done(null, e));
    child.once('exit', (code) => {
      if (code === 75) return done(null);
      const missing = /flock: (not found|No such file)|not found/.test(stderr) && code === 127;
      done(
        null,
        missing
          ? new TrtxError('LOCK_UNAVAILABLE', 'flock', 'flock(1) is not installed; trtx takes its writer lock with it', {
              hint: 'install util-linux (apt-get install util-linux)',
            })
          : new TrtxError('LOCK_FAILED', lockPath, `cannot take the writer lock (exit ${code})${stderr ? `: ${stderr.trim()}` : ''}`),
      );
    });
  });
}

const stop = (child: ChildProcess) =>
  new Promise<void>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) return r();
    child.once('exit', () => r());
    child.stdin?.end();
  });

/** Reads who holds the lock of `target` (null when unknown). */
export async function lockHolder(target: string): Promise<LockHolder | null> {
  return holderOf(await readFile(lockPathFor(target), 'utf8').catch(() => ''));
}

/** Takes the writer lock of `target`: waits for the holder, or fails at once without `wait`. */
export async function lockTarget(target: string, opts: LockOptions): Promise<TargetLock> {
  const path = lockPathFor(target);
  let announced = false;
  let held: Held | null;
  for (;;) {
    held = await startFlock(path, true);
    if (!held) {
      const holder = await lockHolder(target);
      if (!opts.wait) {
        throw new TrtxError('REWRITE_LOCKED', target, `another writer holds it: ${describeHolder(holder)}`, {
          hint: 'wait for it to finish, or run without --no-wait to wait for it',
        });
      }
      if (!announced) opts.onWait?.(holder);
      announced = true;
      held = (await startFlock(path, false))!;
    }
    if (held.sameFile) break;
    await stop(held.child); // the previous holder removed the file while we waited: lock the new one
  }
  const { child } = held;
  // An interrupt removes the file on its way out (src/util/cleanup.ts); removing it while held is the protocol.
  const untrack = trackPath(path);
  await writeFile(
    path,
    JSON.stringify({ pid: ownPid, host: hostname(), command: opts.command, since: new Date().toISOString() }) + '\n',
  ).catch(() => {});
  let released = false;
  return {
    path,
    release: async () => {
      if (released) return;
      released = true;
      await rm(path, { force: true }); // while still held: see HOLD
      untrack();
      await stop(child);
    },
  };
}

/** Runs `body` holding the writer lock of `target`. */
export async function withTargetLock<T>(target: string, opts: LockOptions, body: () => Promise<T>): Promise<T> {
  const lock = await lockTarget(target, opts);
  try {
    return await body();
  } finally {
    await lock.release();
  }
}

/**
 * Whether a writer holds the lock of `target` now (synchronous; readers ask
 * it only when they meet an in-progress marker). Null when it cannot tell.
 */
export function targetLockHeld(target: string): { held: boolean; holder: LockHolder | null } | null {
  const path = lockPathFor(target);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { held: false, holder: null }; // no lock file: no writer holds it
  }
  // Opened read-only: a reader never creates a lock file.
  const r = spawnSync('sh', ['-c', 'exec 9<"$1" 2>/dev/null || exit 0; flock -n -s -E 75 9', 'trtx-lock', path], { stdio: 'ignore' });
  if (r.error || (r.status !== 0 && r.status !== 75)) return null;
  return { held: r.status === 75, holder: holderOf(text) };
}
