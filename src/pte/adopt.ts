// Publishing a program file this writer made itself, unpublished, beside the
// target (`trtx export`: the `.pte` the bridge wrote) by renaming it over the
// target, so the program reaches its final path once, atomically, and is not
// copied. Issue 28: export used to re-encode the bridge's whole file into a
// second one. A pass that changed the program rewrites the temporary's head
// first when it still fits before the segments (as `rewrite --in-place` does,
// but without its journal: nothing reads the temporary before the rename, and
// a crash leaves a temporary the caller's cleanup or the next writer's sweep
// removes); a head that does not fit is a full rewrite to the target, with the
// reason, as an in-place rewrite falls back.

import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDir, writeAllAt } from '../util/file-io.js';
import { fileRefusal } from '../util/target.js';
import { writeFromSource } from './copy.js';
import { planHead } from './in-place.js';
import type { Program } from './model.js';
import type { PteFile } from './open.js';
import type { WriteResult } from './write.js';

/**
 * How the program reached the target: `renamed`, the temporary itself
 * (`headBytes` rewritten first, 0 when no pass changed anything); `copied`, a
 * full rewrite because the new head did not fit (`fallback` says why).
 */
export type AdoptWrite =
  | { mode: 'renamed'; path: string; fileSize: number; headBytes: number }
  | { mode: 'copied'; path: string; fileSize: number; fallback: string; result: WriteResult };

export interface AdoptOptions {
  output: string;
  changed: boolean;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/** Publishes `pte`'s own file (a temporary of this writer) at `opts.output`, with `program` (`pte`'s, changed by passes). */
export async function adoptTemporary(
  pte: PteFile,
  program: Program,
  fileSegments: Program['segments'],
  opts: AdoptOptions,
): Promise<AdoptWrite> {
  let headBytes = 0;
  const plan = opts.changed ? planHead(pte, program, fileSegments) : null;
  if (plan && !plan.fits) {
    const result = await writeFromSource(pte, program, opts.output, { onProgress: opts.onProgress, signal: opts.signal });
    return { mode: 'copied', path: opts.output, fileSize: result.fileSize, fallback: plan.reason, result };
  }
  opts.signal?.throwIfAborted();
  try {
    const fh = await open(pte.path, 'r+');
    try {
      if (plan?.fits) {
        await writeAllAt(fh, plan.head, 0);
        headBytes = plan.head.length;
      }
      // Another process made the file: its mode follows trtx's own writes
      // (0o644 under the umask), which the maker's 0o666 under the same umask
      // becomes by dropping group and other write.
      const { mode } = await fh.stat();
      await fh.chmod(mode & 0o755);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(pte.path, opts.output);
    await syncDir(dirname(opts.output));
  } catch (e) {
    // What the system refuses (a full disk at the sync, a folder gone) is the writer's refusal, as a rewrite's is.
    throw fileRefusal(e, opts.output, 'write it');
  }
  return { mode: 'renamed', path: opts.output, fileSize: pte.fileSize, headBytes };
}
