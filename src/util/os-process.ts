// The one place below src/cli/ that touches Node's `process`, for what is a
// fact of the operating-system process rather than state of one run: its id
// (the owner a lock or a temporary name records) and signals sent to other
// processes (is a recorded owner alive; stop a child's process group). Every
// run in the process shares these and none can change them, so they do not
// stop runs from going at once in one process. What belongs to a run (its
// environment, working folder, streams, exit status, cancellation) reaches
// the library as values from src/cli/ (io.ts); the signal handlers and the
// exit are src/cli/signals.ts's. eslint.config.js allows `process` in this
// file and src/cli/ only.

/** This process's id: the owner recorded in locks and temporary names. */
export const ownPid: number = process.pid;

/** True when a process with this id exists on this host (EPERM: it exists but is not ours). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends `signal` to process `pid` (a negative pid: its whole group). Throws as process.kill does (ESRCH: none). */
export function sendSignal(pid: number, signal: NodeJS.Signals | 0): void {
  process.kill(pid, signal);
}
