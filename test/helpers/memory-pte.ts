// Programs for the check tests, held in memory: a fixture spec (or a program
// changed by a test) is encoded to real `.pte` bytes and decoded again, so a
// diagnostic is always tripped by bytes a file could hold, without touching
// the disk.
import { buildProgram, type BuiltProgram } from '../../src/examples/builder.js';
import type { ProgramSpec } from '../../src/examples/spec.js';
import type { Program } from '../../src/pte/model.js';
import { decodePteBytes, type PteFile } from '../../src/pte/open.js';
import type { SegmentSource } from '../../src/pte/write.js';
import { layoutProgram } from '../../src/pte/write.js';
import { TrtxError } from '../../src/util/errors.js';
import { ReportBudget } from '../../src/util/report-budget.js';

/** `.pte` bytes for `program` with its segments (extended header, 4096-aligned). */
export function encodePte(program: Program, sources: SegmentSource[]): Uint8Array {
  const { head, segmentBase, relative, segmentDataSize } = layoutProgram(program, sources, { alignment: 4096, extendedHeader: true });
  const out = new Uint8Array(segmentDataSize > 0 ? segmentBase + segmentDataSize : head.length);
  out.set(head, 0);
  sources.forEach((s, i) => {
    if (s.kind !== 'bytes') throw new Error('memory-pte: file sources are not supported');
    out.set(s.bytes, segmentBase + relative[i]);
  });
  return out;
}

/** A PteFile over bytes in memory. */
export function pteFromBytes(bytes: Uint8Array, path = 'memory.pte'): PteFile {
  const { header, program, segments } = decodePteBytes(bytes);
  const programSize = header.extended ? header.extended.programSize : bytes.length;
  return {
    path,
    fileSize: bytes.length,
    header,
    programBytes: bytes.subarray(0, programSize),
    program,
    segmentBase: header.extended?.segmentBaseOffset ?? 0,
    segments,
    readRange: (offset, length) => {
      if (offset < 0 || length < 0 || offset + length > bytes.length)
        return Promise.reject(new TrtxError('PTE_RANGE', path, `range ${offset}+${length} is outside the file`));
      return Promise.resolve(bytes.slice(offset, offset + length));
    },
    close: async () => {},
    // A library caller's: unbounded.
    reportBudget: new ReportBudget(),
  };
}

/** Builds `spec`, lets `edit` change the program model, and round-trips it through bytes. */
export function pteOf(spec: ProgramSpec, edit?: (program: Program, built: BuiltProgram) => void): PteFile {
  const built = buildProgram(spec);
  edit?.(built.program, built);
  return pteFromBytes(encodePte(built.program, built.segments));
}
