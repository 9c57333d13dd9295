// Writes a whole small output (an HTML report) the way every trtx output is
// written: to a temporary file beside the target, fsynced, then renamed over
// it, so a reader never sees half a file and a failure leaves the target as
// it was and no temporary file behind.
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { syncDir } from './file-io.js';
import { TrtxError } from './errors.js';

export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<number> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const tmp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
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
    const code = (e as NodeJS.ErrnoException).code;
    throw new TrtxError('WRITE_FAILED', target, `cannot write (${code ?? (e as Error).message}); the target was left untouched`, {
      kind: 'usage',
      hint: 'write the report into an existing, writable directory',
    });
  }
}
