// The kernel's copy of one open file into another: `cp` (GNU coreutils, as
// flock(1) an Essential package) on the two descriptors, which reflinks
// where the filesystem shares extents (XFS, Btrfs) and otherwise loops over
// copy_file_range(2), the copy that never brings the bytes into trtx. Node's
// fs.copyFile would do the same from a path, but its loop (libuv's
// uv_fs_copyfile) sends the size the source had when it started and never
// stops when the source ends early: a source truncated mid-copy made trtx
// spin at 100% CPU for ever (issue 43). cp stops at the end of the file.
//
// Bounded: cp reads a regular file until its end; meanwhile `watch` is asked
// every POLL_MS whether the source is still the file it was (the caller
// compares its identity, src/util/file-io.ts) and cp is killed at the first
// answer that it is not, so a source that grows or changes costs at most
// one poll. cp runs in a group of its own, registered for the interrupt
// handler (cleanup.ts); an abort kills it.
//
// The descriptors are the caller's: cp opens them again through
// /proc/self/fd, which names the open file itself, so a path renamed or
// replaced meanwhile does not matter. Where cp is missing, not GNU's or
// cannot run, the answer is `false`: the caller copies the bytes itself.

import { spawn } from 'node:child_process';
import type { FileHandle } from 'node:fs/promises';
import { trackProcessGroup } from './cleanup.js';
import { sendSignal } from './os-process.js';

const POLL_MS = 100;

export interface KernelCopyOptions {
  /** Throws (the caller's refusal) when the source is no longer what it was; asked while the copy runs. */
  watch: () => Promise<void>;
  signal?: AbortSignal;
  /** Only a reflink (shared extents, no new blocks), or nothing: for a folder too full for a copy of the bytes. */
  cloneOnly?: boolean;
}

const kill = (pid: number | undefined) => {
  if (pid === undefined) return;
  try {
    sendSignal(-pid, 'SIGKILL');
  } catch {
    // gone already
  }
};

/**
 * Copies the whole of `src` over `dst` (from their starts). True once cp
 * has copied to the source's end; false when cp could not do it (the
 * caller copies itself; what cp wrote is the caller's to discard). Rejects
 * with what `watch` threw, or an AbortError.
 */
export function kernelCopy(src: FileHandle, dst: FileHandle, opts: KernelCopyOptions): Promise<boolean> {
  opts.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    // --sparse=never: every byte written, as fs.copyFile did (no holes made
    // from a source's zeros). A clone only: cp fails where the file system
    // cannot share the extents (and --reflink=always takes no --sparse).
    const mode = opts.cloneOnly ? ['--reflink=always'] : ['--reflink=auto', '--sparse=never'];
    const child = spawn('cp', [...mode, '--', '/proc/self/fd/3', '/proc/self/fd/4'], {
      stdio: ['ignore', 'ignore', 'ignore', src.fd, dst.fd],
      detached: true,
    });
    const untrack = child.pid === undefined ? () => {} : trackProcessGroup(child.pid);
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (child.exitCode === null && child.signalCode === null) kill(child.pid);
      untrack();
      outcome();
    };
    const onAbort = () => settle(() => reject(new DOMException('the copy was aborted', 'AbortError')));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const poll = () => {
      timer = setTimeout(() => {
        opts.watch().then(
          () => (settled ? undefined : poll()),
          (e: unknown) => settle(() => reject(e instanceof Error ? e : new Error(String(e)))),
        );
      }, POLL_MS);
    };
    poll();
    child.once('error', () => settle(() => resolve(false)));
    child.once('exit', (code) => settle(() => resolve(code === 0)));
  });
}
