// A file that travels with a program from its input to its output: `trtx
// rewrite -o OUT` carries IN.reference.json (eager PyTorch's outputs, which
// a rewrite leaves valid) to OUT.reference.json. The copy is made the way
// every trtx output is written, in two steps around the program's own write:
// staged to a temporary file beside the target before the program is written
// (so a copy that cannot be made fails before anything is published), then
// renamed into place right after the program (one rename, as `trtx export`
// places its reference). An interrupt or a failure removes the temporary
// file (src/util/cleanup.ts); the next writer sweeps one a killed writer left
// (src/util/stale-temps.ts). Without a source, a stale target (the sidecar
// of the program OUT held before) goes, so a sidecar always belongs to the
// program beside it.

import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { trackPath } from './cleanup.js';
import { TrtxError } from './errors.js';
import { copyBytes, identityOf, syncDir, verifyUnchanged } from './file-io.js';
import { kernelCopy } from './kernel-copy.js';
import { checkOutputTarget, fileRefusal, tempPath } from './target.js';

export interface Sidecar {
  /** The file beside the input. */
  source: string;
  /** Where its copy goes, beside the output. */
  target: string;
}

/**
 * What became of a sidecar: copied beside the output; removed (no source, and
 * a stale target went); or nothing to do (no source and no target, or source
 * and target one file already).
 */
export type SidecarOutcome = Sidecar & { action: 'copied' | 'removed' | 'none' };

export interface StagedSidecar {
  sidecar: Sidecar;
  /** Puts the staged copy in place (or removes the stale target); what it did. */
  publish(): Promise<SidecarOutcome>;
  /** Removes the staged copy, unless it was published; the target is left as it was. */
  discard(): Promise<void>;
}

// A program whose name is near NAME_MAX has no room for `.reference.json`: such a sidecar cannot exist.
const statOrNull = (path: string) =>
  stat(path).catch((e: unknown) => {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENAMETOOLONG') return null;
    throw new TrtxError('INPUT_UNREADABLE', path, `cannot read (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  });

/**
 * Copies `source` to a fresh temporary file beside `target`, fsynced; the
 * path, registered for cleanup until published or discarded. Copied from an
 * open descriptor, by the kernel where it can (src/util/kernel-copy.ts),
 * bounded by the size the source had when it was opened, and refused when
 * the source changed meanwhile (WRITE_SOURCE_TRUNCATED, WRITE_SOURCE_CHANGED).
 */
async function stageCopy(s: Sidecar): Promise<{ tmp: string; untrack: () => void }> {
  const tmp = tempPath(s.target);
  const untrack = trackPath(tmp);
  let src: FileHandle | undefined;
  let out: FileHandle | undefined;
  try {
    src = await open(s.source, 'r');
    const opened = { handle: src, identity: await identityOf(src) };
    const size = Number(opened.identity.size);
    out = await open(tmp, 'wx', (await src.stat()).mode & 0o777);
    const check = () => verifyUnchanged(s.source, opened);
    if (!(await kernelCopy(src, out, { watch: check }))) {
      await out.truncate(0);
      await copyBytes(src, out, size);
    }
    await check();
    if ((await out.stat()).size !== size) throw new TrtxError('WRITE_FAILED', s.target, `the copy of ${s.source} is not its size`);
    await out.sync();
    return { tmp, untrack };
  } catch (e) {
    await out?.close().catch(() => {});
    out = undefined;
    await rm(tmp, { force: true });
    untrack();
    throw fileRefusal(e, s.target, 'write it (the target was left untouched)');
  } finally {
    await out?.close();
    await src?.close();
  }
}

/** Stages the copy of `s.source` beside `s.target`, or, without a source, the removal of a stale target. */
export async function stageSidecar(s: Sidecar): Promise<StagedSidecar> {
  const source = await statOrNull(s.source);
  const target = await statOrNull(s.target);
  const none: StagedSidecar = { sidecar: s, publish: () => Promise.resolve({ ...s, action: 'none' }), discard: () => Promise.resolve() };
  if (source === null) {
    if (target === null) return none;
    return {
      sidecar: s,
      publish: async () => {
        await rm(s.target, { force: true });
        return { ...s, action: 'removed' };
      },
      discard: () => Promise.resolve(),
    };
  }
  // The output is the input (rewrite -o IN --force): its sidecar is already the one beside it.
  if (target !== null && target.dev === source.dev && target.ino === source.ino) return none;
  if (!source.isFile()) throw new TrtxError('INPUT_UNREADABLE', s.source, 'is not a regular file');
  await checkOutputTarget(s.target, s.source);
  const { tmp, untrack } = await stageCopy(s);
  let settled = false;
  return {
    sidecar: s,
    publish: async () => {
      settled = true;
      try {
        await rename(tmp, s.target);
        await syncDir(dirname(s.target));
        return { ...s, action: 'copied' };
      } catch (e) {
        await rm(tmp, { force: true });
        throw fileRefusal(e, s.target, 'put it in place');
      } finally {
        untrack();
      }
    },
    discard: async () => {
      if (settled) return;
      settled = true;
      await rm(tmp, { force: true });
      untrack();
    },
  };
}
