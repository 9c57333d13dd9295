// Process-group handling for the bridge. The bridge is spawned detached, which
// makes it the leader of a new process group; TensorRT's builder and Python
// multiprocessing start children of their own, and killing only the leader
// would leave them running (and holding the GPU). Signalling the negative pid
// reaches every member of the group.

import { platform } from 'node:os';
import { trackProcessGroup } from '../util/cleanup.js';
import { sendSignal } from '../util/os-process.js';

// Registered with src/util/cleanup.ts: the command line's interrupt handler
// kills them before it removes the files they may be writing, and so does
// its exit hook if trtx exits first (src/cli/signals.ts installs both).
const untrackers = new Map<number, () => void>();

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;
}

/** Sends `signal` to the whole group led by `pid`. False when nothing is left to signal. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  if (platform() === 'win32') {
    // No process groups; the Torch-TensorRT ExecuTorch path is Linux-only anyway.
    try {
      sendSignal(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
  try {
    sendSignal(-pid, signal);
    return true;
  } catch (e) {
    if (isErrno(e, 'ESRCH') || isErrno(e, 'EPERM')) return false;
    throw e;
  }
}

/** Remembers a group so that it is killed if trtx is interrupted or exits first. */
export function trackGroup(pid: number): void {
  untrackers.set(pid, trackProcessGroup(pid));
}

export function untrackGroup(pid: number): void {
  untrackers.get(pid)?.();
  untrackers.delete(pid);
}
