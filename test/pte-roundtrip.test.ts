import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openPte, withPte } from '../src/pte/open.js';
import { writeFromSource } from '../src/pte/copy.js';
import { programToFlatcJson } from '../src/pte/flatc-json.js';
import { corpusPath, corpusPrograms } from './helpers/corpus.js';
import { flatcDecode } from './helpers/flatc.js';
import { tempDir } from './helpers/temp.js';

const out = tempDir('roundtrip');

describe.each(corpusPrograms())('round trip %s', (name) => {
  const target = join(out, `${name}.pte`);

  it('re-encodes to the same program with byte-equal segments', async () => {
    const src = await openPte(corpusPath(name));
    const before = programToFlatcJson(src.program);
    const srcSegments = await Promise.all(src.segments.map((s) => src.readRange(s.offset, s.size)));
    await writeFromSource(src, src.program, target);
    await src.close();

    await withPte(target, async (dst) => {
      expect(programToFlatcJson(dst.program)).toEqual(before);
      expect(dst.segments.length).toBe(srcSegments.length);
      for (const [i, s] of dst.segments.entries()) {
        expect(Buffer.from(await dst.readRange(s.offset, s.size)).equals(Buffer.from(srcSegments[i]))).toBe(true);
      }
    });
  });

  it('decodes with the reference flatc and our schema to what flatc reads in the original', async () => {
    const original = await openPte(corpusPath(name));
    await original.close();
    const rewritten = await openPte(target);
    await rewritten.close();
    expect(flatcDecode(rewritten.programBytes)).toEqual(flatcDecode(original.programBytes));
  });

  it('keeps inline data 16-byte aligned', async () => {
    const pte = await openPte(target);
    await pte.close();
    for (const c of pte.program.constantBuffer) expect(c.storage.byteOffset % 16).toBe(0);
    for (const d of pte.program.backendDelegateData) expect(d.data.byteOffset % 16).toBe(0);
  });

  it('is canonical: rewriting the rewrite gives the same bytes', async () => {
    const again = join(out, `${name}.again.pte`);
    await withPte(target, (p) => writeFromSource(p, p.program, again));
    expect(readFileSync(again).equals(readFileSync(target))).toBe(true);
  });
});
