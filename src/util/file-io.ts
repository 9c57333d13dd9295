// Small file primitives the writers share: a positioned write that finishes
// (the OS may write less than asked), and an fsync of a directory entry.
import { open, type FileHandle } from 'node:fs/promises';

export async function writeAllAt(fh: FileHandle, bytes: Uint8Array, at: number, length = bytes.length): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesWritten } = await fh.write(bytes, done, length - done, at + done);
    done += bytesWritten;
  }
}

/** Makes a rename durable: fsync the directory that holds the entry. */
export async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  } finally {
    await d.close();
  }
}
