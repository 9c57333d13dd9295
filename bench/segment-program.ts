// A real ExecuTorch program (the conformance corpus's add-segment.pte) whose
// segments carry `total` bytes of non-zero data in 8 more segments (nothing
// sparse), for the write benchmarks (bench/pte.ts, bench/rewrite-copy.ts).
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { withPte } from '../src/pte/open.js';
import { writePte, type SegmentSource } from '../src/pte/write.js';
import { MiB } from './lib.js';

const corpus = () => resolve(process.env.TRTX_PTE_CORPUS ?? '../shared/pte-corpus');

/** A data file of `size` bytes with non-zero content (so nothing is sparse). */
function dataFile(path: string, size: number): string {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(8 * MiB);
  for (let i = 0; i < chunk.length; i += 4) chunk.writeUInt32LE((i * 2654435761) >>> 0, i);
  for (let done = 0; done < size; done += chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, size - done));
  closeSync(fd);
  return path;
}

export async function segmentProgram(dir: string, name: string, total: number): Promise<string> {
  const data = dataFile(join(dir, `${name}.data`), total);
  const out = join(dir, `${name}.pte`);
  await withPte(join(corpus(), 'add-segment.pte'), async (pte) => {
    const first = pte.segments[0];
    const sources: SegmentSource[] = [{ kind: 'file', path: pte.path, offset: first.offset, size: first.size }];
    const per = Math.floor(total / 8);
    for (let i = 0; i < 8; i++) sources.push({ kind: 'file', path: data, offset: i * per, size: per });
    pte.program.segments = sources.map(() => ({ offset: 0n, size: 0n }));
    await writePte(out, pte.program, sources, { alignment: 4096 });
  });
  rmSync(data);
  return out;
}
