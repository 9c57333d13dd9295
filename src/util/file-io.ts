// Small file primitives the writers share: a positioned write that finishes
// (the OS may write less than asked), an fsync of a directory entry, and a
// file's identity (which file, its size and last change), by which a writer
// tells that a source did not change while it was copied.
import { open, type FileHandle } from 'node:fs/promises';
import { TrtxError } from './errors.js';

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

/**
 * One state of one file: which file it is (device and inode, whatever its
 * name), its size and its last modification (nanoseconds). Two equal
 * identities taken before and after a copy mean nothing wrote the file
 * meanwhile. Not its status change time: that moves when the file loses or
 * gains a name (renamed over, hard-linked), which leaves its bytes as they
 * were.
 */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

/** A source file a writer copies from: held open, so a path replaced meanwhile does not matter, and its identity when opened. */
export interface OpenedFile {
  handle: FileHandle;
  identity: FileIdentity;
}

export async function identityOf(fh: FileHandle): Promise<FileIdentity> {
  const s = await fh.stat({ bigint: true });
  return { dev: s.dev, ino: s.ino, size: s.size, mtimeNs: s.mtimeNs };
}

/** What changed between two identities of a file, in words; null when nothing did. */
export function identityChange(before: FileIdentity, after: FileIdentity): string | null {
  if (before.dev !== after.dev || before.ino !== after.ino) return 'it is another file now';
  if (before.size !== after.size) return `its size went from ${before.size} to ${after.size} bytes`;
  if (before.mtimeNs !== after.mtimeNs) return 'it was written to';
  return null;
}

/**
 * Refuses the source `file` (named `path`) when it is no longer what it was
 * when it was opened: WRITE_SOURCE_TRUNCATED when it shrank, else
 * WRITE_SOURCE_CHANGED. A writer asks before it publishes a copy of it.
 */
export async function verifyUnchanged(path: string, file: OpenedFile): Promise<void> {
  const now = await identityOf(file.handle);
  const change = identityChange(file.identity, now);
  if (change === null) return;
  throw new TrtxError(
    now.size < file.identity.size ? 'WRITE_SOURCE_TRUNCATED' : 'WRITE_SOURCE_CHANGED',
    path,
    `the source changed while it was being copied (${change}); nothing was written`,
    { hint: 'write it again once nothing else writes the source (the target was left untouched)' },
  );
}

/**
 * Copies `size` bytes of `src` from its start to `dst`, chunk by chunk.
 * Bounded by `size`: a read that ends early stops the copy (false), it is
 * never retried.
 */
export async function copyBytes(src: FileHandle, dst: FileHandle, size: number): Promise<boolean> {
  const buf = new Uint8Array(Math.min(size, 1024 * 1024) || 1);
  for (let done = 0; done < size;) {
    const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, size - done), done);
    if (bytesRead === 0) return false;
    await writeAllAt(dst, buf, done, bytesRead);
    done += bytesRead;
  }
  return true;
}
