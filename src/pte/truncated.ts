// A program file cut short: an interrupted copy or download, a disk that
// filled up while it was written. Its header (and, in older files without a
// segment data size, its segment table) still says how long the whole file
// is, so the refusal names both sizes and what to do, PTE_TRUNCATED, rather
// than the field that first runs past the end (PTE_SEGMENT_DATA_SIZE and its
// kin stay for headers that contradict themselves, and for sizes no file can
// have: a corrupt field, not a short file).

import { TrtxError } from '../util/errors.js';
import { formatIEC } from '../util/size.js';

/** Past this a claimed size is no file's (JavaScript's exact integers; 8 PiB): a corrupt field, refused by its own code. */
const LARGEST_FILE = BigInt(Number.MAX_SAFE_INTEGER);

export const TRUNCATED_HINT =
  'the file is incomplete (an interrupted copy or download, or a disk that filled up while it was written): copy or download it again, or re-export it';

const bytes = (n: bigint) => (n === 1n ? '1 byte' : n < 1024n ? `${n} bytes` : `${n} bytes (${formatIEC(n)})`);

/** PTE_TRUNCATED: the file is `fileSize` bytes and `what` says it is `expected`. */
export function truncatedFile(location: string, fileSize: number | bigint, expected: bigint, what: string): TrtxError {
  const size = BigInt(fileSize);
  return new TrtxError(
    'PTE_TRUNCATED',
    location,
    `the file is ${bytes(size)}, but ${what} says it is ${bytes(expected)}: the last ${bytes(expected - size)} ${expected - size === 1n ? 'is' : 'are'} missing`,
    { hint: `${TRUNCATED_HINT}; the whole file is ${expected} bytes` },
  );
}

/** Fields of an extended header, as read (64-bit, unchecked). */
export interface ClaimedSizes {
  headerLength: number;
  programSize: bigint;
  segmentBase: bigint;
  /** null: the header is too short to carry it (older files). */
  segmentDataSize: bigint | null;
}

/**
 * How long the extended header says the file is (the program, then the
 * segment data from the segment base), and in words; null when its fields
 * contradict each other or claim more than any file holds: each is then
 * refused for itself.
 */
export function claimedFileSize(c: ClaimedSizes): { size: bigint; what: string } | null {
  if (c.programSize < 8n + BigInt(c.headerLength)) return null;
  if (c.segmentBase === 0n) {
    if (c.segmentDataSize !== null && c.segmentDataSize !== 0n) return null;
    return c.programSize <= LARGEST_FILE ? { size: c.programSize, what: `its header (a ${c.programSize}-byte program)` } : null;
  }
  if (c.segmentBase < c.programSize) return null;
  const size = c.segmentBase + (c.segmentDataSize ?? 0n);
  if (size > LARGEST_FILE) return null;
  const data = c.segmentDataSize === null ? '' : `, then ${c.segmentDataSize} bytes of segment data`;
  return { size, what: `its header (a ${c.programSize}-byte program, segments from byte ${c.segmentBase}${data})` };
}

/** Where the segment table says the file ends (the segment base plus the furthest segment's end), when that is a size a file can have. */
export function segmentTableEnd(base: number, segments: readonly { offset: bigint; size: bigint }[]): bigint | null {
  let end = 0n;
  for (const s of segments) if (s.size > 0n && s.offset + s.size > end) end = s.offset + s.size;
  const size = BigInt(base) + end;
  return end > 0n && size <= LARGEST_FILE ? size : null;
}
