// Asking the file system first: before a writer creates a whole program it
// compares what the file will take (its size, rounded up to the file
// system's blocks: a sparse input is written dense, so its holes count) with
// what statfs(2) says an unprivileged writer may still use, and refuses
// (WRITE_NO_SPACE, with both sizes and the folder) instead of filling the
// disk and failing at the end (issue 43: a 200 GB sparse program filled the
// file system before the refusal). The reading is a parameter so that a
// library caller (a test) can state a small disk; the CLI always asks statfs.

import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TrtxError } from './errors.js';
import { formatIEC } from './size.js';

/** What a writer may still use in a folder's file system: bytes and the block size they are allocated in. */
export interface FreeSpace {
  available: bigint;
  blockSize: bigint;
}

/** Reads a folder's free space; null when the file system cannot say (the write then goes ahead). */
export type FreeSpaceReader = (dir: string) => Promise<FreeSpace | null>;

/** statfs(2): blocks available to an unprivileged writer (`f_bavail`, not `f_bfree`), in the file system's block size. */
export const statfsFreeSpace: FreeSpaceReader = async (dir) => {
  try {
    const s = await statfs(dir, { bigint: true });
    return { available: s.bavail * s.bsize, blockSize: s.bsize > 0n ? s.bsize : 1n };
  } catch {
    return null;
  }
};

/** `bytes` as whole blocks: what the file system allocates for a file written densely. */
export const allocatedSize = (bytes: bigint, blockSize: bigint): bigint => ((bytes + blockSize - 1n) / blockSize) * blockSize;

/**
 * The refusal a write of `bytes` to `target` would meet, or null when its
 * folder has room (or cannot say). Nothing is written.
 */
export async function spaceShortfall(target: string, bytes: bigint, read: FreeSpaceReader = statfsFreeSpace): Promise<TrtxError | null> {
  const dir = dirname(target);
  const free = await read(dir);
  if (free === null) return null;
  const need = allocatedSize(bytes, free.blockSize);
  if (need <= free.available) return null;
  return new TrtxError(
    'WRITE_NO_SPACE',
    target,
    `not enough free space: the file needs ${formatIEC(need)} (${need} bytes) but ${dir} has ${formatIEC(free.available)} (${free.available} bytes) free; nothing was written`,
    { hint: `free ${formatIEC(need - free.available)} there, or write to a folder on another file system` },
  );
}
