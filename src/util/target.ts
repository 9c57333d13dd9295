// Where a writer may write, and the names of what it puts beside a target.
//
// A rewrite publishes by renaming a temporary file over the target, so the
// target must be a regular file or a new name: rename over a FIFO, a device
// node, a socket or a symbolic link would replace the node itself (`-o
// /dev/null` would turn the null device into a file), and a directory cannot
// be replaced at all. `-o` naming the input is almost always a slip for
// `--in-place`; `--force` says it is meant. An in-place target must be a
// regular file too (never `/dev/null` or `/dev/stdin`); given through a
// symbolic link, the file it points to is the target (resolveTarget), so the
// link stays a link and the file has one lock and one journal.
//
// Temporary files, the in-place journal and the writer lock live beside the
// target (a rename is atomic only within one filesystem). Their names add a
// prefix and a suffix to the target's, so a target name near NAME_MAX (255
// bytes on Linux filesystems) would make them too long; such a name is
// shortened, keeping a hash of the whole name so two long targets never
// share a journal or a lock.

import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, lstat, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Code } from '../codes/index.js';
import { TrtxError } from './errors.js';
import { ownPid } from './os-process.js';

/** NAME_MAX of Linux filesystems (ext4, xfs, btrfs, tmpfs): bytes in one path component. */
export const NAME_MAX = 255;

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** The longest prefix of `s` (whole code points) that fits in `bytes` UTF-8 bytes. */
function prefixWithin(s: string, bytes: number): string {
  let out = '';
  let n = 0;
  for (const ch of s) {
    const b = utf8(ch);
    if (n + b > bytes) break;
    out += ch;
    n += b;
  }
  return out;
}

/** `${lead}${name}${suffix}`, with `name` shortened (and hashed) when the whole would pass NAME_MAX. */
function fitName(lead: string, name: string, suffix: string): string {
  const whole = `${lead}${name}${suffix}`;
  if (utf8(whole) <= NAME_MAX) return whole;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 12);
  const room = NAME_MAX - utf8(lead) - utf8(suffix) - hash.length - 1;
  return `${lead}${prefixWithin(name, room)}~${hash}${suffix}`;
}

/** A sidecar beside `target` with a fixed suffix (the same name for every process). */
export function sidecarPath(target: string, suffix: string, hidden = false): string {
  return join(dirname(target), fitName(hidden ? '.' : '', basename(target), suffix));
}

/**
 * A fresh temporary name beside `target`, for a file renamed over it when
 * complete: `.NAME.<pid>-<12 hex>.tmp`. The writer's process id is in the
 * name so that the next writer of the target can tell one left by a killed
 * writer from one being written (src/util/stale-temps.ts).
 */
export function tempPath(target: string, pid = ownPid, tag = randomBytes(6).toString('hex')): string {
  return sidecarPath(target, `.${pid}-${tag}.tmp`, true);
}

/** The temporary name an earlier trtx wrote, without its process id: `.NAME.<12 hex>.tmp`. */
export const legacyTempPath = (target: string, tag: string) => sidecarPath(target, `.${tag}.tmp`, true);

/** An errno from a file operation on `path` as a coded refusal (exit 2: the environment, not the program). */
export function fileRefusal(e: unknown, path: string, doing: string): TrtxError {
  if (e instanceof TrtxError) return e;
  const code = (e as NodeJS.ErrnoException)?.code;
  const what: Record<string, [Code, string]> = {
    EACCES: ['WRITE_PERMISSION', 'permission denied'],
    EPERM: ['WRITE_PERMISSION', 'operation not permitted'],
    EROFS: ['WRITE_PERMISSION', 'read-only filesystem'],
    ENAMETOOLONG: ['OUTPUT_NAME_TOO_LONG', 'name too long'],
    ENOSPC: ['WRITE_NO_SPACE', 'no space left on the device'],
    EDQUOT: ['WRITE_NO_SPACE', 'disk quota exceeded'],
    ENOENT: ['OUTPUT_DIR', 'no such file or directory'],
    ENOTDIR: ['OUTPUT_DIR', 'a component of the path is not a directory'],
    EISDIR: ['OUTPUT_NOT_REGULAR', 'is a directory'],
    ERR_FS_EISDIR: ['OUTPUT_NOT_REGULAR', 'is a directory'], // node's rm of a directory
  };
  const [c, why]: [Code, string] = (code ? what[code] : undefined) ?? ['WRITE_FAILED', code ?? (e as Error)?.message ?? String(e)];
  return new TrtxError(c, path, `cannot ${doing}: ${why}`);
}

export interface OutputTargetOptions {
  /** The output may be an input (rewrite --force: a full rewrite over it). */
  force?: boolean;
  /** The hint of OUTPUT_IS_INPUT; default the rewrite's (--in-place or --force). */
  isInputHint?: string;
}

/**
 * Refuses an output that is not a regular file or a new name in an existing
 * directory, and an output that is one of the inputs itself unless `force`.
 * Every writer of a named output (`rewrite -o`, `export -o`, `--html`) calls
 * it before any work, and again just before its rename.
 */
export async function checkOutputTarget(output: string, inputs: string | readonly string[], opts: OutputTargetOptions = {}): Promise<void> {
  if (utf8(basename(output)) > NAME_MAX) {
    throw new TrtxError(
      'OUTPUT_NAME_TOO_LONG',
      output,
      `the name is ${utf8(basename(output))} bytes; a file name holds at most ${NAME_MAX}`,
    );
  }
  let st;
  try {
    st = await lstat(output);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw fileRefusal(e, output, 'inspect the output path');
    const dir = dirname(output);
    const d = await stat(dir).catch((err: unknown) => {
      throw fileRefusal(err, dir, 'use the output directory');
    });
    if (!d.isDirectory()) throw new TrtxError('OUTPUT_DIR', dir, 'is not a directory');
    await access(dir, constants.W_OK).catch((err: unknown) => {
      throw fileRefusal(err, dir, 'create the output in this directory');
    });
    return;
  }
  if (!st.isFile()) {
    const pointed = st.isSymbolicLink() ? await stat(output).catch(() => null) : null;
    const kind = st.isSymbolicLink() ? `a symbolic link${pointed && !pointed.isFile() ? ` to ${kindOf(pointed)}` : ''}` : kindOf(st);
    throw new TrtxError(
      'OUTPUT_NOT_REGULAR',
      output,
      `is ${kind}; trtx writes a new file and renames it into place, which would replace it`,
      {
        hint: st.isSymbolicLink() ? 'give the path the link points to' : 'give a regular file or a new path',
      },
    );
  }
  const all = typeof inputs === 'string' ? [inputs] : inputs;
  for (const input of all) {
    const inp = await stat(input).catch(() => null);
    if (inp && inp.dev === st.dev && inp.ino === st.ino && !opts.force) {
      throw new TrtxError('OUTPUT_IS_INPUT', output, all.length > 1 ? `is the input file ${input} itself` : 'is the input file itself', {
        hint:
          opts.isInputHint ??
          'use --in-place to rewrite it (only its head when the program still fits), or --force to replace it by a full rewrite',
      });
    }
  }
  await access(dirname(output), constants.W_OK).catch((err: unknown) => {
    throw fileRefusal(err, dirname(output), 'replace a file in this directory');
  });
}

/** What a file that is not a regular file is, in words. */
function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device node';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The path a writer of `path` writes: `path` itself, or, when it is a
 * symbolic link, the file it points to (so a rewrite through a link changes
 * the file, not the link; its lock and journal are the file's). Refuses a
 * link whose file has no name of its own (a deleted file, a descriptor
 * under /proc).
 */
export async function resolveTarget(path: string): Promise<string> {
  const st = await lstat(path);
  if (!st.isSymbolicLink()) return path;
  const real = await realpath(path);
  const [pointed, named] = await Promise.all([stat(path), lstat(real).catch(() => null)]);
  if (named === null || named.dev !== pointed.dev || named.ino !== pointed.ino) {
    throw new TrtxError('OUTPUT_NOT_REGULAR', path, 'is a link to a file that has no path of its own (a deleted file, a descriptor)', {
      hint: 'give the path of the file itself',
    });
  }
  return real;
}

/**
 * An in-place rewrite needs a regular file (never a device, a FIFO or a
 * socket: `/dev/stdin`, `/dev/null`), which it may write, and a folder to
 * create its journal in. The path it writes: the file a symbolic link points
 * to (resolveTarget).
 */
export async function checkInPlaceTarget(path: string): Promise<string> {
  const st = await stat(path).catch((err: unknown) => {
    throw fileRefusal(err, path, 'rewrite it in place');
  });
  if (!st.isFile()) {
    throw new TrtxError('OUTPUT_NOT_REGULAR', path, `is ${kindOf(st)}; --in-place rewrites a regular file`, {
      hint: 'give a .pte file, or write the result elsewhere with -o OUT',
    });
  }
  const real = await resolveTarget(path).catch((err: unknown) => {
    throw fileRefusal(err, path, 'rewrite it in place');
  });
  await access(real, constants.W_OK).catch((err: unknown) => {
    throw fileRefusal(err, real, 'rewrite it in place');
  });
  await access(dirname(real), constants.W_OK).catch((err: unknown) => {
    throw fileRefusal(err, dirname(real), 'create the in-place journal beside the file');
  });
  return real;
}
