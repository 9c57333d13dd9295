// The process's SIGINT and SIGTERM, for the command line only (bin/trtx
// installs them; a run in process, a test or an embedder, does not): while
// something is registered for cleanup (src/util/cleanup.ts) or a step holds
// signals, a signal aborts the run's AbortSignal, kills the registered
// process groups, removes the registered paths and ends the process by the
// signal itself; the rest of the time both keep Node's default action (see
// cleanup.ts's file comment). Any other exit still runs the cleanup.

import { escapeControls } from '../util/escape.js';
import { SIGNAL_EXIT_CODES, cleanupNow, connectSignals, deferSignal, type CleanupSignal } from '../util/cleanup.js';

const controller = new AbortController();
let installed = false;

function exitOn(signal: CleanupSignal, notes: readonly string[] = []): never {
  // What listens to the run's signal (execa's cancelSignal, the bridge) hears it first, as a listener of SIGINT did.
  controller.abort(signal);
  cleanupNow();
  // What a step that held the signal did to the user's files comes after: "removed" is about temporaries only.
  process.stderr.write(`\ntrtx: stopped by ${signal}; temporary files removed${notes.map((n) => `; ${escapeControls(n)}`).join('')}\n`);
  endBy(signal);
  process.exit(SIGNAL_EXIT_CODES[signal]);
}

/**
 * Ends the process by `signal` itself, its default action, once trtx has
 * cleaned up: how a program that handles SIGINT should leave, so that its
 * caller knows it was interrupted (a shell reports 130 or 143 and stops a
 * loop, which it does not for an exit 130; Python ends this way on an
 * unhandled KeyboardInterrupt since 3.8). And at once: process.exit runs
 * libuv's exit-time cleanup, which joins the thread pool, so it waits for a
 * file copy in flight there to finish (fs.copyFile of a multi-GiB program in
 * rewrite -o: 3.5 s on an idle 2-core machine, against 0.1 s by the signal).
 * First the 'exit' hooks process.exit would have run: execa's, which stops
 * the children it watches (signal-exit emits 'exit' on a signal the same
 * way), and cleanupNow (nothing left by now). The other listeners of the
 * signal go: what they would do is done. The 'exit' hooks go too once run,
 * so that the process.exit after this (reached only if the signal did not
 * end the process) does not run them twice.
 */
function endBy(signal: CleanupSignal): void {
  const code = SIGNAL_EXIT_CODES[signal];
  process.exitCode = code;
  process.emit('exit', code);
  process.removeAllListeners('exit');
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

const handlers = {
  SIGINT: () => onSignal('SIGINT'),
  SIGTERM: () => onSignal('SIGTERM'),
} satisfies Record<CleanupSignal, () => void>;

function onSignal(signal: CleanupSignal): void {
  if (!deferSignal(signal)) exitOn(signal);
}

function arm(need: boolean): void {
  for (const signal of Object.keys(handlers) as CleanupSignal[]) {
    if (need) process.on(signal, handlers[signal]);
    else process.removeListener(signal, handlers[signal]);
  }
}

/**
 * For the command line only: SIGINT and SIGTERM clean up and end the process
 * (while something is registered; else they end it at once), and a process
 * that exits any other way still kills and removes what is left registered.
 * Returns the signal to give the run (io.ts's `signal`): aborted by SIGINT or
 * SIGTERM before the cleanup. Idempotent.
 */
export function installSignalCleanup(): AbortSignal {
  if (!installed) {
    installed = true;
    connectSignals({ arm, deliver: exitOn });
    process.on('exit', cleanupNow);
  }
  return controller.signal;
}
