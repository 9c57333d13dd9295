// The segment table as file ranges. Program.segments offsets are relative to
// the extended header's segment base; a sound table keeps every segment
// inside the file, sorted by offset, with no two overlapping. Sizes are u64
// in the file, so bounds are checked by subtraction on bigints.

import { TrtxError } from '../util/errors.js';
import type { PteHeader } from './header.js';
import type { Program } from './model.js';
import { segmentTableEnd, truncatedFile } from './truncated.js';

export interface SegmentRange {
  index: number;
  /** Absolute file offset. */
  offset: number;
  size: number;
}

export function resolveSegments(program: Program, header: PteHeader, fileSize: number): SegmentRange[] {
  const base = header.extended?.segmentBaseOffset ?? 0;
  const programSize = header.extended?.programSize ?? fileSize;
  // A header without a segment data size says nothing of where the file ends: the table does (truncated.ts).
  const tableEnd = header.extended?.segmentDataSize === null && base !== 0 ? segmentTableEnd(base, program.segments) : null;
  if (tableEnd !== null && tableEnd > BigInt(fileSize))
    throw truncatedFile('program.segments', fileSize, tableEnd, `its segment table (segments from byte ${base} to byte ${tableEnd})`);
  const out: SegmentRange[] = [];
  let prevEnd = -1n;
  program.segments.forEach((s, index) => {
    const where = `program.segments[${index}]`;
    if (s.size === 0n) {
      out.push({ index, offset: base, size: 0 });
      return;
    }
    if (!header.extended || base === 0) {
      throw new TrtxError('PTE_SEGMENT_BASE', where, `segment of ${s.size} bytes but the file has no segment base (no extended header)`);
    }
    const room = BigInt(fileSize - base);
    if (s.offset > room || s.size > room - s.offset) {
      throw new TrtxError(
        'PTE_SEGMENT_EXTENT',
        where,
        `offset ${s.offset} + size ${s.size} runs past the end of the file (${room} bytes of segment data)`,
      );
    }
    if (s.offset < prevEnd) {
      throw new TrtxError(
        'PTE_SEGMENT_ORDER',
        where,
        `offset ${s.offset} overlaps or precedes the previous segment (which ends at ${prevEnd}); segments must be sorted and disjoint`,
      );
    }
    prevEnd = s.offset + s.size;
    out.push({ index, offset: base + Number(s.offset), size: Number(s.size) });
  });
  if (header.extended && base !== 0 && base < programSize) {
    throw new TrtxError('PTE_SEGMENT_BASE', 'header.extended.segment_base_offset', 'segments start inside the program');
  }
  return out;
}

/** The alignment a file's segments were laid out with: the largest power of
 * two (up to 64 KiB) dividing the base and every segment offset. */
export function inferSegmentAlignment(header: PteHeader, program: Program, fallback = 4096): number {
  const base = header.extended?.segmentBaseOffset ?? 0;
  const offsets = [BigInt(base), ...program.segments.filter((s) => s.size > 0n).map((s) => s.offset)].filter((o) => o > 0n);
  if (base === 0 || offsets.length === 0) return fallback;
  let align = 65536n;
  for (const o of offsets) while (align > 1n && o % align !== 0n) align /= 2n;
  return Number(align);
}
