// Writes a whole small output (an HTML report) the way every trtx output is
// written: to a temporary file beside the target (a name that fits whatever
// the target's length: src/util/target.ts), fsynced, then renamed over it, so
// a reader never sees half a file and a failure leaves the target as it was
// and no temporary file behind. Errors are the coded refusals of every
// writer (WRITE_PERMISSION, WRITE_NO_SPACE, OUTPUT_DIR, ...).
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDir } from './file-io.js';
import { fileRefusal, tempPath } from './target.js';
import { trackPath } from './cleanup.js';
import { sweepStaleTemps } from './stale-temps.js';

export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<number> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  // What a killed writer of this target left goes first (src/util/stale-temps.ts).
  await sweepStaleTemps([target]);
  const tmp = tempPath(target);
  // An interrupt removes it too (src/util/cleanup.ts).
  const untrack = trackPath(tmp);
  let fh;
  try {
    fh = await open(tmp, 'wx', 0o644);
    await fh.writeFile(bytes);
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, target);
    await syncDir(dirname(target));
    return bytes.length;
  } catch (e) {
    await fh?.close().catch(() => {});
    await rm(tmp, { force: true });
    throw fileRefusal(e, target, 'write it (the target was left untouched)');
  } finally {
    untrack();
  }
}
