// Program-wide facts: the header style, segment count and sizes, and the
// tables outside the methods. Offsets, the program size and the segment base
// are layout, not meaning (a canonical re-encoding moves them), so they are
// not compared; segment contents are not read.

import type { PteFile } from '../pte/open.js';
import { inferSegmentAlignment } from '../pte/segments.js';
import { pairBy } from './match.js';
import type { FieldChange, Scalar, SegmentChange } from './report.js';

function field(out: FieldChange[], name: string, before: Scalar | null, after: Scalar | null): void {
  if (before !== after) out.push({ field: name, before, after });
}

export function diffHeader(a: PteFile, b: PteFile): FieldChange[] {
  const out: FieldChange[] = [];
  field(out, 'extended_header', a.header.extended !== null, b.header.extended !== null);
  field(out, 'extended_header.magic', a.header.extended?.magic ?? null, b.header.extended?.magic ?? null);
  // Only meaningful where segments sit at a recorded base to align.
  const align = (p: PteFile) =>
    p.segments.length && p.header.extended?.segmentBaseOffset ? inferSegmentAlignment(p.header, p.program) : null;
  field(out, 'segment_alignment', align(a), align(b));
  return out;
}

/** Bytes of constant data: the constant segment's size, or the inline buffers of older programs. */
function constantBytes(p: PteFile): number {
  const inline = p.program.constantBuffer.reduce((n, buf) => n + buf.storage.length, 0);
  const cs = p.program.constantSegment;
  const seg = cs && cs.offsets.length > 0 ? (p.segments[cs.segmentIndex]?.size ?? 0) : 0;
  return inline + seg;
}

export function diffProgramFields(a: PteFile, b: PteFile): FieldChange[] {
  const out: FieldChange[] = [];
  field(out, 'version', a.program.version, b.program.version);
  field(out, 'constant_data_bytes', constantBytes(a), constantBytes(b));
  field(
    out,
    'constant_tensors',
    Math.max(0, (a.program.constantSegment?.offsets.length ?? 1) - 1),
    Math.max(0, (b.program.constantSegment?.offsets.length ?? 1) - 1),
  );
  field(out, 'mutable_data_segments', a.program.mutableDataSegments.length, b.program.mutableDataSegments.length);
  // Named data by key; its size is the size of the segment it names.
  const named = (p: PteFile) => p.program.namedData.map((n) => ({ key: n.key ?? '', size: p.segments[n.segmentIndex]?.size ?? null }));
  const { both, onlyA, onlyB } = pairBy(named(a), named(b), (n) => n.key);
  for (const n of onlyA) out.push({ field: 'named_data', before: n.key, after: null });
  for (const n of onlyB) out.push({ field: 'named_data', before: null, after: n.key });
  for (const [x, y] of both) field(out, `named_data[${JSON.stringify(x.key)}].size`, x.size, y.size);
  return out;
}

export function diffSegments(a: PteFile, b: PteFile): { count: { before: number; after: number } | null; sizes: SegmentChange[] } {
  const sizes: SegmentChange[] = [];
  for (let index = 0; index < Math.max(a.segments.length, b.segments.length); index++) {
    const before = a.segments[index]?.size ?? null;
    const after = b.segments[index]?.size ?? null;
    if (before !== after) sizes.push({ index, before, after });
  }
  return { count: a.segments.length === b.segments.length ? null : { before: a.segments.length, after: b.segments.length }, sizes };
}
