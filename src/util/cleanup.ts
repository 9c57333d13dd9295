// What an interrupt must not leave behind. Code that creates a temporary
// file or folder, or starts a child process group, registers it here for as
// long as it exists; on SIGINT or SIGTERM the command line kills the
// registered groups, removes the registered paths and ends by the signal
// itself (a shell reports 130 or 143). The process's signals and its exit
// are the command line's (src/cli/signals.ts, installed by bin/trtx only);
// this file keeps the registry, and the command line connects to it
// (connectSignals). The work is synchronous so that nothing else runs in
// between: no write that recreates a removed file, no rename that publishes
// half a job.
// Children are stopped first (SIGTERM, so that a compiler can remove its own
// temporary files, then SIGKILL for what is left) so that nothing writes
// into a folder after it is removed.
//
// A step that must not be cut in half (the in-place head write, whose
// journal is for crashes, not for Ctrl-C) runs inside withSignalsHeld: a
// signal that arrives meanwhile takes effect when the step has finished.
//
// A JavaScript signal handler runs only when the event loop is free: while
// a command computes synchronously (rendering a page, decoding a program)
// it would wait, and the process with it, deaf to Ctrl-C. So the handlers
// are installed only while there is something to clean up or a step holds
// signals; the rest of the time SIGINT and SIGTERM keep their default
// action and end the process at once, by the signal (a shell reports 130
// and 143 as for the handled exit). With nothing registered there is
// nothing the handler would have done. What stays deaf is synchronous work
// done while something is registered (a command's temp folder exists):
// docs/reliability.md says where.

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ownPid, sendSignal } from './os-process.js';

const paths = new Map<string, number>();
const groups = new Map<number, number>();
let held = 0;
let pending: CleanupSignal | null = null;
/** What the held steps that ended after the signal came did to the user's files, for the exit message. */
const pendingNotes: string[] = [];

/** Exit codes a shell reports for a process ended by these signals (128 + the signal number). */
export const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
export type CleanupSignal = keyof typeof SIGNAL_EXIT_CODES;

const add = <K>(m: Map<K, number>, k: K) => {
  m.set(k, (m.get(k) ?? 0) + 1);
  rearm();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const n = (m.get(k) ?? 1) - 1;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
    rearm();
  };
};

/** Registers a temporary file or folder; call the returned function once it is gone or published. */
export function trackPath(path: string): () => void {
  return add(paths, path);
}

export interface TempDir {
  path: string;
  /** Removes the folder and everything in it, and unregisters it. */
  remove(): Promise<void>;
}

/**
 * A fresh folder `$TMPDIR/<prefix><pid>-XXXXXXXXXXXX` (`root`: the run's
 * temporary folder, util/env.ts's tempRootOf), registered before it is
 * created, so there is no moment at which it exists unregistered. The
 * process id names its owner: after a kill -9 the next command sweeps it
 * (stale-temp-dirs.ts).
 */
export async function makeTempDir(prefix: string, root: string): Promise<TempDir> {
  const path = join(root, `${prefix}${ownPid}-${randomBytes(6).toString('hex')}`);
  const untrack = trackPath(path);
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (e) {
    untrack();
    throw e;
  }
  return {
    path,
    remove: async () => {
      await rm(path, { recursive: true, force: true });
      untrack();
    },
  };
}

/** Registers a child process group by its leader's pid (a child spawned detached). */
export function trackProcessGroup(pid: number): () => void {
  return add(groups, pid);
}

/** What is registered now (for tests and diagnostics). */
export function tracked(): { paths: string[]; groups: number[] } {
  return { paths: [...paths.keys()], groups: [...groups.keys()] };
}

/** Live (not zombie) processes in any of these groups, from /proc; null where there is no /proc. */
function liveMembers(pgids: ReadonlySet<number>): number | null {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return null;
  }
  let live = 0;
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z' && pgids.has(Number(pgrp))) live++;
    } catch {
      // exited meanwhile
    }
  }
  return live;
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** How long children get to act on SIGTERM (a compiler removes its own temp files) before SIGKILL. */
const TERM_GRACE_MS = 2000;

function signalGroups(pgids: Iterable<number>, signal: NodeJS.Signals): void {
  for (const pid of pgids) {
    try {
      sendSignal(-pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Stops every registered group (SIGTERM, a short grace while any member
 * lives, then SIGKILL), then removes every registered path. Synchronous;
 * never throws.
 */
export function cleanupNow(): void {
  if (groups.size > 0) {
    const pgids = new Set(groups.keys());
    signalGroups(pgids, 'SIGTERM');
    for (const until = Date.now() + TERM_GRACE_MS; Date.now() < until;) {
      const live = liveMembers(pgids);
      if (live === 0) break;
      sleepSync(live === null ? 200 : 10);
      if (live === null) break;
    }
    signalGroups(pgids, 'SIGKILL');
    groups.clear();
  }
  for (const path of paths.keys()) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // nothing more can be done while exiting
    }
  }
  paths.clear();
}

/**
 * How the registry reaches the process, from src/cli/signals.ts (the
 * command line's, which owns the process's signals and its exit): `arm`
 * turns the SIGINT and SIGTERM handlers on while there is something to
 * clean up or a step holds signals, and off after (see the file comment);
 * `deliver` ends the process for a signal that arrived while a step held
 * signals, once the step is done. A library caller that connects nothing
 * keeps Node's default action for both signals.
 */
export interface SignalHooks {
  arm(need: boolean): void;
  /** `notes`: what the held steps did to the user's files (a file changed, kept or marked), for the exit message. */
  deliver(signal: CleanupSignal, notes: readonly string[]): void;
}
let hooks: SignalHooks | null = null;

/** For src/cli/signals.ts only; once. */
export function connectSignals(h: SignalHooks): void {
  hooks = h;
  rearm();
}

/**
 * A signal arrived: true when a step holds signals, and it is kept for the
 * step's end (withSignalsHeld delivers it); false when the handler acts now.
 */
export function deferSignal(signal: CleanupSignal): boolean {
  if (held === 0) return false;
  pending ??= signal;
  return true;
}

/**
 * Runs `step` with SIGINT and SIGTERM held: one that arrives meanwhile ends
 * the process (cleanly) right after the step, whether it succeeded or threw.
 * `says` words what the step did to the user's files, finished (`ok`) or
 * not (`error`), for the message the process ends with: a step that changed
 * a file must not end on "temporary files removed" alone.
 */
export async function withSignalsHeld<T>(
  step: () => Promise<T>,
  says?: (outcome: { ok: true; value: T } | { ok: false; error: unknown }) => string | null,
): Promise<T> {
  held++;
  rearm();
  let outcome: { ok: true; value: T } | { ok: false; error: unknown } = { ok: false, error: null };
  try {
    const value = await step();
    outcome = { ok: true, value };
    return value;
  } catch (e) {
    outcome = { ok: false, error: e };
    throw e;
  } finally {
    held--;
    if (pending && says) {
      const note = says(outcome);
      if (note) pendingNotes.push(note);
    }
    if (held === 0 && pending) hooks?.deliver(pending, [...pendingNotes]);
    rearm();
  }
}

let armed = false;

/** Handlers while there is something to clean up or signals are held; the default action otherwise (see the file comment). */
function rearm(): void {
  if (!hooks) return;
  const need = paths.size > 0 || groups.size > 0 || held > 0;
  if (need === armed) return;
  armed = need;
  hooks.arm(need);
}

/** Whether SIGINT and SIGTERM run trtx's cleanup now (true) or end the process at once (false). */
export const signalsHandled = () => armed;
