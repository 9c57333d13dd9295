// The writer's promise: the target is replaced by a complete file or not at
// all, and no temporary file is left behind.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openPte } from '../src/pte/open.js';
import { writePte } from '../src/pte/write.js';
import { TrtxError } from '../src/util/errors.js';
import { corpusPath } from './helpers/corpus.js';
import { tempDir } from './helpers/temp.js';

async function program() {
  const pte = await openPte(corpusPath('add-segment'));
  await pte.close();
  return pte;
}

describe('atomic write', () => {
  it('leaves the target untouched when a segment source is short', async () => {
    const dir = tempDir('write');
    const target = join(dir, 'out.pte');
    writeFileSync(target, 'previous contents');
    const src = join(dir, 'short.bin');
    writeFileSync(src, new Uint8Array(10));
    const pte = await program();
    await expect(writePte(target, pte.program, [{ kind: 'file', path: src, offset: 0, size: 1000 }])).rejects.toMatchObject({
      code: 'WRITE_SOURCE_TRUNCATED',
    });
    expect(readFileSync(target, 'utf8')).toBe('previous contents');
    expect(readdirSync(dir).sort()).toEqual(['out.pte', 'short.bin']);
  });

  it('leaves the target untouched when interrupted', async () => {
    const dir = tempDir('write');
    const target = join(dir, 'out.pte');
    writeFileSync(target, 'previous contents');
    const src = join(dir, 'big.bin');
    writeFileSync(src, new Uint8Array(48 * 1024 * 1024));
    const pte = await program();
    const ac = new AbortController();
    const p = writePte(target, pte.program, [{ kind: 'file', path: src, offset: 0, size: 48 * 1024 * 1024 }], {
      signal: ac.signal,
      onProgress: (done) => {
        if (done > 1024 * 1024) ac.abort();
      },
    });
    await expect(p).rejects.toBeInstanceOf(TrtxError);
    await expect(p).rejects.toMatchObject({ code: 'WRITE_ABORTED' });
    expect(readFileSync(target, 'utf8')).toBe('previous contents');
    expect(readdirSync(dir).sort()).toEqual(['big.bin', 'out.pte']);
  });

  it('writes a new file that reads back, with segments at the asked alignment', async () => {
    const dir = tempDir('write');
    const target = join(dir, 'out.pte');
    const pte = await program();
    const bytes = new Uint8Array([1, 2, 3, 4]);
    const r = await writePte(target, pte.program, [{ kind: 'bytes', bytes }], { alignment: 4096 });
    expect(r.segmentBase % 4096).toBe(0);
    const back = await openPte(target);
    expect(Array.from(await back.readRange(back.segments[0].offset, 4))).toEqual([1, 2, 3, 4]);
    await back.close();
  });
});

describe('kernel-copy fast path', () => {
  it('gives the same bytes as streaming, padding zeroed even when the source had garbage there', async () => {
    const { openSync, writeSync, closeSync } = await import('node:fs');
    const { writeFromSource } = await import('../src/pte/copy.js');
    const dir = tempDir('write');
    const pte = await program();
    const a = new Uint8Array(5000).fill(7);
    const b = new Uint8Array(3000).fill(9);
    pte.program.segments = [
      { offset: 0n, size: 0n },
      { offset: 0n, size: 0n },
    ];
    const src = join(dir, 'src.pte');
    await writePte(
      src,
      pte.program,
      [
        { kind: 'bytes', bytes: a },
        { kind: 'bytes', bytes: b },
      ],
      { alignment: 4096 },
    );
    // Garbage in the padding between the two segments.
    const fd = openSync(src, 'r+');
    writeSync(fd, new Uint8Array(100).fill(0xee), 0, 100, 4096 + 5000 + 10); // segment 0 ends at 9096, segment 1 starts at 12288
    closeSync(fd);

    const opened = await openPte(src);
    const fast = join(dir, 'fast.pte');
    await writeFromSource(opened, opened.program, fast); // same layout: kernel copy + head + zeroed gaps
    await opened.close();
    const streamed = join(dir, 'streamed.pte');
    const again = await program();
    again.program.segments = [
      { offset: 0n, size: 0n },
      { offset: 0n, size: 0n },
    ];
    await writePte(
      streamed,
      again.program,
      [
        { kind: 'bytes', bytes: a },
        { kind: 'bytes', bytes: b },
      ],
      { alignment: 4096, extendedHeader: true },
    );
    expect(readFileSync(fast).equals(readFileSync(streamed))).toBe(true);
  });
});
