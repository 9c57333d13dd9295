// Process-group handling for the bridge. The bridge is spawned detached, which
// makes it the leader of a new process group; TensorRT's builder and Python
// multiprocessing start children of their own, and killing only the leader
// would leave them running (and holding the GPU). Signalling the negative pid
// reaches every member of the group.

import { trackProcessGroup } from '../util/cleanup.js';

const live = new Set<number>();
// The command line's interrupt handler (src/util/cleanup.ts) kills them too,
// before it removes the files they may be writing.
const untrackers = new Map<number, () => void>();
let exitHookInstalled = false;

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;
}

/** Sends `signal` to the whole group led by `pid`. False when nothing is left to signal. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  if (process.platform === 'win32') {
    // No process groups; the Torch-TensorRT ExecuTorch path is Linux-only anyway.
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
  try {
    process.kill(-pid, signal);
    return true;
  } catch (e) {
    if (isErrno(e, 'ESRCH') || isErrno(e, 'EPERM')) return false;
    throw e;
  }
}

function killAllOnExit(): void {
  for (const pid of live) signalGroup(pid, 'SIGKILL');
}

/** Remembers a group so that it is killed if this process exits first. */
export function trackGroup(pid: number): void {
  live.add(pid);
  untrackers.set(pid, trackProcessGroup(pid));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // 'exit' handlers run synchronously; process.kill is synchronous.
    process.once('exit', killAllOnExit);
  }
}

export function untrackGroup(pid: number): void {
  live.delete(pid);
  untrackers.get(pid)?.();
  untrackers.delete(pid);
}
