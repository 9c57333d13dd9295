// Re-encoding an opened program into a new file: the program may have been
// changed by passes, the segments are streamed from the source file
// unchanged (a pass that adds a segment passes it as bytes).

import type { Program } from './model.js';
import type { PteFile } from './open.js';
import { inferSegmentAlignment } from './segments.js';
import { writePte, type SegmentSource, type WriteOptions, type WriteResult } from './write.js';

/** Segment sources that copy every segment of `pte` from the file it was read from (its open descriptor, when it has one). */
export function sourcesFrom(pte: PteFile): SegmentSource[] {
  return pte.segments.map((s) => ({ kind: 'file' as const, path: pte.path, offset: s.offset, size: s.size, opened: pte.opened }));
}

/**
 * Writes `program` (`pte`'s own, or one derived from it by passes) to
 * `target` with `pte`'s segments, keeping the source's segment alignment and
 * header style. `extraSegments` are appended after the source's segments.
 */
export function writeFromSource(
  pte: PteFile,
  program: Program,
  target: string,
  opts: WriteOptions & { extraSegments?: SegmentSource[] } = {},
): Promise<WriteResult> {
  const sources = [...sourcesFrom(pte), ...(opts.extraSegments ?? [])];
  // A pass that appended segments has already added their table entries.
  return writePte(target, program, sources.slice(0, program.segments.length), {
    alignment: opts.alignment ?? inferSegmentAlignment(pte.header, pte.program),
    extendedHeader: opts.extendedHeader ?? pte.header.extended !== null,
    onProgress: opts.onProgress,
    signal: opts.signal,
    encoded: opts.encoded,
    hooks: opts.hooks,
    freeSpace: opts.freeSpace,
  });
}
