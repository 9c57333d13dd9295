// A program with large TensorRT engine segments, made in no time and no disk:
// the fixture multiEngine(n) laid out by layoutProgram (what writePte uses),
// its head and each blob's header and metadata written at their offsets, and
// the file extended with ftruncate, so the engine bytes are holes. trtx never
// reads engine bytes, so their zeros change nothing; copying the file (what
// `trtx rewrite` does) still moves every byte, which is what makes it slow
// enough to interrupt.
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { buildProgram } from '../../src/examples/builder.js';
import { multiEngine } from '../../src/examples/programs.js';
import { layoutProgram, type SegmentSource } from '../../src/pte/write.js';
import { parseBlob, writeBlobHead } from '../../src/tensorrt/blob.js';

/** Writes a sparse program whose `engines` engine segments each hold `engineBytes`. */
export function writeSparseProgram(path: string, engineBytes: number, engines = 4): number {
  const built = buildProgram(multiEngine(engines));
  const heads: Uint8Array[] = [];
  const sources: SegmentSource[] = built.segments.map((s, i) => {
    const delegate = built.program.executionPlan[0].delegates.find((d) => d.processed?.index === i);
    if (!delegate || s.kind !== 'bytes') return s;
    const parsed = parseBlob(s.bytes);
    heads[i] = writeBlobHead({ magic: parsed.magic, metadata: parsed.metadata, engineSize: engineBytes });
    return { kind: 'file', path: '/dev/null', offset: 0, size: heads[i].length + engineBytes };
  });
  const { head, segmentBase, relative, segmentDataSize } = layoutProgram(built.program, sources, { alignment: 4096, extendedHeader: true });
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head, 0, head.length, 0);
    sources.forEach((s, i) => {
      const bytes = heads[i] ?? (s.kind === 'bytes' ? s.bytes : null);
      if (bytes) writeSync(fd, bytes, 0, bytes.length, segmentBase + relative[i]);
    });
    ftruncateSync(fd, segmentBase + segmentDataSize);
  } finally {
    closeSync(fd);
  }
  return segmentBase + segmentDataSize;
}
