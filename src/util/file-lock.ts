// One writer at a time per file: an advisory flock(2) lock on a small
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
// One file has one lock, whatever name a writer gives it. The lock file
// sits beside the file itself: through a symbolic link it is the lock of
// the file the link points to (resolveTarget, src/util/target.ts), and a
// folder reached through a link is the same folder. A hard link is the same
// file under another name, whose lock file is another: so the helper also
// locks the target file itself, open on a descriptor (flock(2) locks an
// open file, not a name), when it exists. Every writer takes its name's
// lock first and the file's second, so no two wait for each other crosswise.
//
// The lock file records who holds it, for a waiter's message, and is
// removed by its holder before it lets go (HOLD below says why that is
// safe). src/util/lock.ts is the other lock in trtx: a folder for cache
// builds, where a crashed holder is taken over by process id.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { open, readFile, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { constants, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolveTarget, sidecarPath } from './target.js';
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
  /**
   * Called once, before waiting, with the holder when it is known;
   * `otherName`: the file is held by a writer that named it otherwise (a
   * hard link), whose record is beside that name.
   */
  onWait?: (holder: LockHolder | null, otherName: boolean) => void;
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

export const describeHolder = (h: LockHolder | null, otherName = false) =>
  h
    ? `trtx pid ${h.pid}${h.host && h.host !== hostname() ? ` on ${h.host}` : ''} (${h.command}, since ${h.since})`
    : otherName
      ? 'a writer of the same file under another name (a hard link)'
      : 'another process';

// The helper shell opens the lock file on fd 9, flocks that descriptor
// (flock(1) in fd mode), and checks that the file it holds is still the one
// the path names (`-ef`: same device and inode). It is not when the previous
// holder unlinked it while this one waited: the lock then protects nothing
// and is taken again on the new file. A holder unlinks the file before it
// releases, so no lock file is left behind (except by a writer that was
// killed; the next one reuses it). With a target ($3), open on fd 3, it then
// flocks the target itself and checks it the same way (a full rewrite by the
// previous holder renamed a new file over the name). A conflict exits 75 on
// the lock file, 76 on the target; a target the filesystem cannot flock
// (NFS on a read-only descriptor) keeps the name's lock alone. Then the
// shell waits on its stdin (`read`, a builtin: two processes in all) and
// exits at EOF, closing its descriptors.
const HOLD = [
  'exec 9<>"$1" || exit 3',
  'flock $2 -E 75 -x 9 || exit $?',
  'if [ ! /proc/$$/fd/9 -ef "$1" ]; then echo moved; read _; exit 0; fi',
  'if [ -n "$3" ]; then flock $2 -E 76 -x 3; r=$?; [ $r = 76 ] && exit 76',
  'if [ $r = 0 ] && [ ! /proc/$$/fd/3 -ef "$3" ]; then echo moved; read _; exit 0; fi; fi',
  'echo same',
  'read _ || true',
].join('; ');

interface Held {
  child: ChildProcess;
  sameFile: boolean;
}

/** Under noBlock, what another writer holds: the name's lock file, or the file itself (by another name). */
type Busy = 'name' | 'file';

/**
 * Starts the helper on `lockPath` (and `file`, the target open on a
 * descriptor, when it exists); resolves once it holds the locks, or with
 * what is held elsewhere when `noBlock`.
 */
function startFlock(lockPath: string, noBlock: boolean, file: { path: string; fh: FileHandle } | null): Promise<Held | Busy> {
  const args = ['-c', HOLD, 'trtx-lock', lockPath, noBlock ? '-n' : '', file ? file.path : ''];
  return new Promise((resolve, reject) => {
    const child = spawn('sh', args, { stdio: ['pipe', 'pipe', 'pipe', ...(file ? [file.fh.fd] : [])] });
    let stderr = '';
    let stdout = '';
    let settled = false;
    const done = (v: Held | Busy | null, e?: Error) => {
      if (settled) return;
      settled = true;
      if (e || v === null) reject(e ?? new Error('flock helper ended without an answer'));
      else resolve(v);
    };
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!stdout.includes('\n')) return;
      done({ child, sameFile: stdout.startsWith('same') });
    });
    child.once('error', (e) => done(null, e));
    child.once('exit', (code) => {
      if (code === 75) return done('name');
      if (code === 76) return done('file');
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

/** The target itself, open read-only for its lock, when it is an existing regular file (never a link: `path` is resolved). */
async function openTargetFile(path: string): Promise<{ path: string; fh: FileHandle } | null> {
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return null; // a new path, or one this user cannot read: the name's lock alone
  }
  if ((await fh.stat()).isFile()) return { path, fh };
  await fh.close();
  return null;
}

/** Reads who holds the lock of `target` (null when unknown). */
export async function lockHolder(target: string): Promise<LockHolder | null> {
  return holderOf(await readFile(lockPathFor(await resolveTarget(target).catch(() => target)), 'utf8').catch(() => ''));
}

/** One try at both locks: held (on files that may have moved), or what is held elsewhere when `noBlock`. */
async function tryLock(lockPath: string, target: string, noBlock: boolean): Promise<Held | Busy> {
  const file = await openTargetFile(target);
  try {
    return await startFlock(lockPath, noBlock, file);
  } finally {
    // The helper has its own copy of the descriptor, whose open file the lock is on.
    await file?.fh.close();
  }
}

/**
 * Takes the writer lock of `target` (the file a symbolic link points to, and
 * the file itself by any name): waits for the holder, or fails at once
 * without `wait`.
 */
export async function lockTarget(target: string, opts: LockOptions): Promise<TargetLock> {
  const real = await resolveTarget(target).catch(() => target);
  const path = lockPathFor(real);
  let announced = false;
  let held: Held | Busy;
  for (;;) {
    held = await tryLock(path, real, true);
    if (held === 'name' || held === 'file') {
      const holder = held === 'name' ? await lockHolder(real) : null;
      const otherName = held === 'file';
      if (!opts.wait) {
        throw new TrtxError('REWRITE_LOCKED', target, `another writer holds it: ${describeHolder(holder, otherName)}`, {
          hint: 'wait for it to finish, or run without --no-wait to wait for it',
        });
      }
      if (!announced) opts.onWait?.(holder, otherName);
      announced = true;
      held = await tryLock(path, real, false);
      if (held === 'name' || held === 'file') continue; // not under a blocking take; only for the types
    }
    if (held.sameFile) break;
    await stop(held.child); // the previous holder removed the lock file, or replaced the file, while we waited: lock the new one
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
 * Whether a writer holds the lock of `target` now: its lock file, or the
 * file itself (a writer that named it otherwise). Synchronous; readers ask
 * it only when they meet an in-progress marker. Null when it cannot tell.
 */
export function targetLockHeld(target: string): { held: boolean; holder: LockHolder | null } | null {
  let real = target;
  try {
    if (lstatSync(target).isSymbolicLink()) real = realpathSync(target);
  } catch {
    // as named
  }
  const path = lockPathFor(real);
  let text: string | null;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    text = null; // no lock file: only a writer by another name can hold the file
  }
  // Opened read-only: a reader never creates a lock file.
  const script =
    'exec 8<"$1" 2>/dev/null || exit 0; flock -n -s -E 75 8 || exit $?; [ -z "$2" ] && exit 0; exec 9<"$2" 2>/dev/null || exit 0; flock -n -s -E 75 9';
  const r = spawnSync('sh', ['-c', script, 'trtx-lock', real, text === null ? '' : path], { stdio: 'ignore' });
  if (r.error || (r.status !== 0 && r.status !== 75)) return null;
  return { held: r.status === 75, holder: text === null ? null : holderOf(text) };
}
