// Reference engines are read by their tables' extents (issue 43 item 6). A
// version-1 engine whose one step sits at the end of a 2 GiB - 1 engine was
// read whole to take its steps (2.1 GB for inspect and check), one whose
// tables touch more than 64 pages was read whole after 64 misses, and an
// engine named by 100 delegates was read once per delegate. Now the steps are
// read a field at a time (reference-engine-steps.ts), an engine in a file is
// walked once through a bounded page cache (pagedFileSource), and each engine
// is read once per opened file (engine-once.ts). The engines are holes but
// for their tables: the 2 GiB file takes a few KiB of disk.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeSparseEnginePte, writeSparseProgram } from '../fixtures/sparse-giants.js';
import { closeSync, openSync, writeSync, ftruncateSync } from 'node:fs';
import { withPte } from '../src/pte/open.js';
import { MAX_KEPT_PAGES, pagedFileSource } from '../src/pte/program-source.js';
import { delegatesOf, isTensorRT, readDelegateBlob } from '../src/tensorrt/delegates.js';
import { readStandinEngine } from '../src/tensorrt/engine-kind.js';
import { runChild } from './helpers/child-cli.js';
import { tempDir } from './helpers/temp.js';

const MiB = 1024 * 1024;
let dir: string;
beforeAll(() => {
  dir = tempDir('engine-extents');
});

/** check --json and inspect --json on `file`: exit 0, under `rssMiB` of peak RSS. */
async function boundedCommands(file: string, rssMiB: number): Promise<void> {
  for (const args of [
    ['check', '--json', file],
    ['inspect', '--json', file],
  ]) {
    const r = await runChild(args, { timeoutMs: 110_000 });
    expect(r.code, `${args[0]}: ${r.stderr.slice(-2000)}`).toBe(0);
    expect(r.maxRssMiB, args[0]).toBeLessThan(rssMiB);
  }
}

describe('reference engines read by their extents', () => {
  it('a version-1 engine of 2 GiB - 1 whose one step is at its end: check and inspect under 300 MiB', { timeout: 240_000 }, async () => {
    const file = join(dir, 'tail-step.pte');
    writeSparseEnginePte(file, { engineBytes: 2 ** 31 - 1, shape: 'tail-step' });
    await withPte(file, async (pte) => {
      const [ref] = delegatesOf(pte, isTensorRT);
      const cost = { bytesRead: 0, reads: 0 };
      const engine = await readStandinEngine(pte, ref, await readDelegateBlob(pte, ref), cost);
      expect(engine.steps).toEqual([{ op: 'Affine', input: 0, output: 1, scale: 1, bias: 0 }]);
      // The head's page and the step's: never the 2 GiB between them.
      expect(cost.bytesRead).toBeLessThan(MiB);
    });
    await boundedCommands(file, 300);
  });

  it('a 512 MiB engine with a step on every 64 KiB page: check and inspect under 300 MiB', { timeout: 240_000 }, async () => {
    const file = join(dir, 'every-page.pte');
    writeSparseEnginePte(file, { engineBytes: 512 * MiB, shape: 'every-page' });
    await withPte(file, async (pte) => {
      const [ref] = delegatesOf(pte, isTensorRT);
      const engine = await readStandinEngine(pte, ref, await readDelegateBlob(pte, ref));
      expect(engine.steps).toHaveLength(512 * 16 - 3);
    });
    await boundedCommands(file, 300);
  });

  it('an engine that 100 delegates name is read once per opened file, its one reading shared', { timeout: 120_000 }, async () => {
    const file = join(dir, 'shared.pte');
    writeSparseEnginePte(file, { engineBytes: 64 * MiB, shape: 'tail-step', delegates: 100 });
    await withPte(file, async (pte) => {
      const refs = delegatesOf(pte, isTensorRT);
      expect(refs).toHaveLength(100);
      const engines = new Set();
      for (const ref of refs) engines.add(await readStandinEngine(pte, ref, await readDelegateBlob(pte, ref)));
      expect(engines.size).toBe(1);
    });
  });
});

describe('a large FlatBuffer', () => {
  it(
    'touching every 64 KiB page of 512 MiB: verified without holding its pages, read without its zeros; check under 300 MiB',
    { timeout: 240_000 },
    async () => {
      // Before: the verifier's pages were all kept, then the extent was read whole (a 2 GiB one cost 4.2 GB).
      const file = join(dir, 'program.pte');
      const { tables } = writeSparseProgram(file, 512 * MiB);
      await withPte(file, (pte) => {
        expect(pte.programBytes.length).toBeGreaterThan(511 * MiB);
        expect(pte.program.constantBuffer).toHaveLength(tables);
      });
      const r = await runChild(['check', '--json', file], { timeoutMs: 110_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      expect(r.stdout).toContain('STRUCT_NO_METHODS');
      expect(r.maxRssMiB).toBeLessThan(300);
    },
  );
});

describe('a paged source', () => {
  it('keeps a bounded number of pages whatever it touches, and reads a dropped page again', () => {
    // The program FlatBuffer's verifier walks a large claimed program from pages (pte/open.ts); they were all
    // kept, then the extent was read again: a 2 GiB FlatBuffer touching every page held 4.2 GB.
    const file = join(dir, 'pages.bin');
    const pages = 4 * MAX_KEPT_PAGES;
    const fd = openSync(file, 'w+');
    try {
      for (let i = 0; i < pages; i++) writeSync(fd, new Uint8Array(new Uint32Array([i]).buffer), 0, 4, i * 65536);
      ftruncateSync(fd, pages * 65536);
      const src = pagedFileSource(fd, pages * 65536, file);
      for (let i = 0; i < pages; i++) expect(src.u32(i * 65536)).toBe(i);
      expect(src.pagesKept()).toBeLessThanOrEqual(MAX_KEPT_PAGES);
      expect(src.u32(0)).toBe(0);
      expect(src.pagesRead()).toBe(pages + 1);
    } finally {
      closeSync(fd);
    }
  });
});
