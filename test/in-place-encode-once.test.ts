// An in-place rewrite whose new program no longer fits before the segments
// falls back to a full atomic rewrite (src/pte/in-place.ts). The program was
// already encoded to find that out; the full write uses those bytes when its
// layout gives the same segment table, instead of encoding again (issue 28:
// "an in-place write that does not fit encodes the program twice"). The
// encoder is wrapped in a counting spy; the file must read the same as one
// written from a fresh encode.
import { describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram } from '../src/examples/builder.js';
import { trtBesideCuda } from '../src/examples/programs.js';
import * as encode from '../src/pte/encode.js';
import { publishRewrite } from '../src/pte/in-place.js';
import { openPte } from '../src/pte/open.js';
import { writePte } from '../src/pte/write.js';
import { budgetPass } from '../src/passes/budget.js';
import { tempDir } from './helpers/temp.js';

vi.mock('../src/pte/encode.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/pte/encode.js')>();
  return { ...real, encodeProgram: vi.fn(real.encodeProgram) };
});
const encodes = vi.mocked(encode.encodeProgram);

const dir = tempDir('encode-once');

/** A program whose segments start right after its head (alignment 16): any growth of the head does not fit. */
async function tightProgram(name: string): Promise<string> {
  const path = join(dir, name);
  const built = buildProgram(trtBesideCuda());
  await writePte(path, built.program, built.segments, { alignment: 16 });
  return path;
}

/** Opens `path`, bakes an 8 GiB budget, publishes with `inPlace`; returns the write and the encodes it took. */
async function bake(path: string, inPlace: boolean, output = path) {
  const pte = await openPte(path);
  try {
    const fileSegments = pte.program.segments.map((s) => ({ ...s }));
    expect(budgetPass({ budget: 8n << 30n })(pte.program).changed).toBe(true);
    encodes.mockClear();
    const write = await publishRewrite(pte, pte.program, fileSegments, { inPlace, output, changed: true });
    return { write, encodes: encodes.mock.calls.length };
  } finally {
    await pte.close();
  }
}

describe('an in-place rewrite that falls back to a full write', () => {
  it('encodes the program once, and writes what a full rewrite from a fresh encode writes', async () => {
    const inPlace = await tightProgram('in-place.pte');
    const fallback = await bake(inPlace, true);
    expect(fallback.write.mode).toBe('atomic');
    if (fallback.write.mode === 'atomic') expect(fallback.write.fallback).toMatch(/does not fit before the segments/);
    expect(fallback.encodes).toBe(1);

    const fresh = await bake(await tightProgram('source.pte'), false, join(dir, 'fresh.pte'));
    expect(fresh.encodes).toBe(1);
    expect(readFileSync(inPlace).equals(readFileSync(join(dir, 'fresh.pte')))).toBe(true);
  });
});
