// A source that changes while the writer copies it (issue 43): truncated
// mid-copy, it made the kernel-copy path spin at 100% CPU for ever; another
// program written over it mid-copy published a file of both, exit 0. Every
// source is now copied from the descriptor it was read through and checked
// before, during and after the copy: truncation and change end in a coded
// refusal, with no published file and no temporary left. The changes land
// at the writer's own steps (its afterCopy hook), not by timing.
import { beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { writeFromSource } from '../src/pte/copy.js';
import { publishRewrite } from '../src/pte/in-place.js';
import { openPte, type PteFile } from '../src/pte/open.js';
import { budgetPass } from '../src/passes/budget.js';
import { writePte } from '../src/pte/write.js';
import { tempDir } from './helpers/temp.js';

let source: string;
beforeAll(async () => {
  source = join(tempDir('source-change'), 'source.pte');
  await writeFixture(source, kvDecoder({ mode: 'staged' }));
});

/** A folder of its own holding a copy of the source program. */
function scene(): { dir: string; input: string; out: string } {
  const dir = tempDir('source-change');
  const input = join(dir, 'in.pte');
  copyFileSync(source, input);
  return { dir, input, out: join(dir, 'out.pte') };
}

/** The same file with its last segment's bytes changed: another program of the same size, as `cp other in.pte` writes it. */
function anotherProgram(path: string, pte: PteFile): Buffer {
  const bytes = readFileSync(path);
  const last = pte.segments.at(-1)!;
  for (let i = 0; i < last.size; i++) bytes[last.offset + i] ^= 0xff;
  return bytes;
}

async function withOpened<T>(path: string, fn: (pte: PteFile) => Promise<T>): Promise<T> {
  const pte = await openPte(path);
  try {
    return await fn(pte);
  } finally {
    await pte.close();
  }
}

describe('the kernel copy (every segment stays where it is)', () => {
  it('a source truncated mid-copy: WRITE_SOURCE_TRUNCATED at once, nothing published, nothing left', async () => {
    const { dir, input, out } = scene();
    const copies: number[] = [];
    await withOpened(input, async (pte) => {
      const started = Date.now();
      await expect(
        writeFromSource(pte, pte.program, out, {
          hooks: {
            afterCopy: (n) => {
              copies.push(n);
              truncateSync(input, pte.segmentBase);
            },
          },
        }),
      ).rejects.toMatchObject({ code: 'WRITE_SOURCE_TRUNCATED', location: input });
      expect(Date.now() - started).toBeLessThan(10_000);
      // The kernel copy of the whole file, once: this is the same-layout path.
      expect(copies).toEqual([pte.fileSize]);
    });
    expect(readdirSync(dir)).toEqual(['in.pte']);
  });

  it('another program written over the source mid-copy: WRITE_SOURCE_CHANGED, not a file of both', async () => {
    const { dir, input, out } = scene();
    writeFileSync(out, 'the previous out.pte\n');
    await withOpened(input, async (pte) => {
      const other = anotherProgram(input, pte);
      const p = writeFromSource(pte, pte.program, out, { hooks: { afterCopy: () => writeFileSync(input, other) } });
      await expect(p).rejects.toMatchObject({
        code: 'WRITE_SOURCE_CHANGED',
        location: input,
        message: expect.stringContaining('written to'),
      });
    });
    expect(readFileSync(out, 'utf8')).toBe('the previous out.pte\n');
    expect(readdirSync(dir).sort()).toEqual(['in.pte', 'out.pte']);
  });

  it('a source changed after it was read and before the write: refused before anything is copied', async () => {
    const { dir, input, out } = scene();
    await withOpened(input, async (pte) => {
      writeFileSync(input, anotherProgram(input, pte));
      let copied = false;
      const p = writeFromSource(pte, pte.program, out, { hooks: { afterCopy: () => void (copied = true) } });
      await expect(p).rejects.toMatchObject({ code: 'WRITE_SOURCE_CHANGED' });
      expect(copied).toBe(false);
    });
    expect(readdirSync(dir)).toEqual(['in.pte']);
  });

  it('a path replaced by another file after the program was read: the file that was read is copied, whole', async () => {
    const { dir, input, out } = scene();
    const original = readFileSync(input);
    const reference = join(dir, 'reference.pte');
    await withOpened(input, (pte) => writeFromSource(pte, pte.program, reference));
    await withOpened(input, async (pte) => {
      const other = join(dir, 'other.pte');
      writeFileSync(other, anotherProgram(input, pte));
      renameSync(other, input); // mv other.pte in.pte: a new file under the old name
      await writeFromSource(pte, pte.program, out);
    });
    expect(readFileSync(out).equals(readFileSync(reference))).toBe(true);
    expect(readFileSync(input).equals(original)).toBe(false);
  });
});

describe('the streaming copy (segments move)', () => {
  const MiB = 1024 * 1024;

  /** A program whose one segment is 40 MiB of `data` from its start: three chunks of 16 MiB, moved to the segment base. */
  async function streamed(dir: string) {
    const data = join(dir, 'data.bin');
    writeFileSync(data, Buffer.alloc(40 * MiB, 7));
    const pte = await openPte(source);
    await pte.close();
    pte.program.segments = [{ offset: 0n, size: 0n }];
    return { data, program: pte.program };
  }

  it('a source truncated between chunks: WRITE_SOURCE_TRUNCATED, nothing published', async () => {
    const dir = tempDir('source-change');
    const { data, program } = await streamed(dir);
    const chunks: number[] = [];
    const hooks = {
      afterCopy: (n: number) => {
        chunks.push(n);
        if (chunks.length === 1) truncateSync(data, 20 * MiB);
      },
    };
    const p = writePte(join(dir, 'out.pte'), program, [{ kind: 'file', path: data, offset: 0, size: 40 * MiB }], { hooks });
    await expect(p).rejects.toMatchObject({ code: 'WRITE_SOURCE_TRUNCATED', location: data });
    expect(chunks).toEqual([16 * MiB, 4 * MiB]);
    expect(readdirSync(dir)).toEqual(['data.bin']);
  });

  it('a source written to between chunks: WRITE_SOURCE_CHANGED, nothing published', async () => {
    const dir = tempDir('source-change');
    const { data, program } = await streamed(dir);
    let chunks = 0;
    const hooks = {
      afterCopy: () => {
        if (++chunks === 2) writeFileSync(data, Buffer.alloc(40 * MiB, 9));
      },
    };
    const p = writePte(join(dir, 'out.pte'), program, [{ kind: 'file', path: data, offset: 0, size: 40 * MiB }], { hooks });
    await expect(p).rejects.toMatchObject({ code: 'WRITE_SOURCE_CHANGED', location: data });
    expect(chunks).toBe(3);
    expect(readdirSync(dir)).toEqual(['data.bin']);
  });
});

describe('an in-place write', () => {
  it('refuses a file written to since it was read, before its journal or its head is written', async () => {
    const { dir, input } = scene();
    await withOpened(input, async (pte) => {
      const segments = pte.program.segments.map((s) => ({ ...s }));
      const { changed } = budgetPass({ budget: 2n << 30n })(pte.program);
      const other = anotherProgram(input, pte);
      writeFileSync(input, other);
      const p = publishRewrite(pte, pte.program, segments, { inPlace: true, output: input, changed });
      await expect(p).rejects.toMatchObject({ code: 'WRITE_SOURCE_CHANGED', location: input });
      expect(readFileSync(input).equals(other)).toBe(true);
    });
    expect(readdirSync(dir)).toEqual(['in.pte']);
    expect(existsSync(join(dir, 'in.pte.trtx-inplace'))).toBe(false);
  });
});
