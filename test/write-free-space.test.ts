// Pre-flights ask first (issue 43): a writer of a whole program compares
// what the file will take with what its folder's file system has free
// (statfs(2)) before it writes a byte, and refuses with WRITE_NO_SPACE,
// both sizes and the folder, instead of filling the disk. A sparse input is
// written dense, so its holes count: before, `rewrite -o` of a 200 GB sparse
// program filled the file system and only then said WRITE_NO_SPACE.
// The library takes the reading as a parameter, so a test can state a small
// disk; the command line asks statfs, tested with a sparse giant larger
// than what the test's file system has free.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSparsePte } from '../fixtures/sparse.js';
import { multiEngine } from '../src/examples/programs.js';
import { runPipeline } from '../src/pipeline/run.js';
import { writeFromSource } from '../src/pte/copy.js';
import { openPte } from '../src/pte/open.js';
import { TrtxError } from '../src/util/errors.js';
import { allocatedSize, type FreeSpaceReader } from '../src/util/free-space.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const MiB = 1024 * 1024;
const small =
  (bytes: bigint): FreeSpaceReader =>
  () =>
    Promise.resolve({ available: bytes, blockSize: 4096n });

/** Whether the file system of `dir` clones files (a reflink takes no new blocks: the one write a full folder still allows). */
function clones(dir: string): boolean {
  writeFileSync(join(dir, 'probe-a'), 'x');
  return spawnSync('cp', ['--reflink=always', join(dir, 'probe-a'), join(dir, 'probe-b')]).status === 0;
}

function scene(prefix: string, engineBytes: number) {
  const dir = tempDir(prefix);
  const input = join(dir, 'big.pte');
  const { fileSize } = writeSparsePte(input, multiEngine(2), engineBytes);
  const out = join(dir, 'out');
  mkdirSync(out);
  return { dir, input, out, fileSize, target: join(out, 'new.pte') };
}

describe('the free-space pre-flight', () => {
  it('refuses a full copy into a folder with less free than the file needs: both sizes and the folder, nothing written', async () => {
    const s = scene('free-stream', 16 * MiB);
    const pte = await openPte(s.input);
    try {
      // A new alignment moves every segment: the bytes are streamed, never cloned.
      const e = await writeFromSource(pte, pte.program, s.target, { alignment: 65536, freeSpace: small(1n * BigInt(MiB)) }).catch(
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(TrtxError);
      expect((e as TrtxError).code).toBe('WRITE_NO_SPACE');
      expect((e as TrtxError).location).toBe(s.target);
      expect((e as TrtxError).message).toMatch(
        new RegExp(`needs 32\\.\\d+ MiB \\(\\d+ bytes\\) but ${s.out} has 1 MiB \\(1048576 bytes\\) free`),
      );
      expect(readdirSync(s.out)).toEqual([]);
    } finally {
      await pte.close();
    }
  });

  it('rewrite -o through the pipeline: refused before the copy unless the file system clones it', async () => {
    const s = scene('free-pipeline', 16 * MiB);
    const run = runPipeline(s.input, { request: {}, output: { path: s.target, command: 'test', freeSpace: small(4096n) } });
    if (clones(s.dir)) {
      // A clone shares the source's blocks: the one copy a full folder can take.
      await run;
      expect(statSync(s.target).size).toBe(s.fileSize);
    } else {
      await expect(run).rejects.toMatchObject({ code: 'WRITE_NO_SPACE', location: s.target });
      expect(readdirSync(s.out)).toEqual([]);
    }
  });

  it('writes when the folder has room for the allocated size', async () => {
    const s = scene('free-room', 4 * MiB);
    const need = allocatedSize(BigInt(s.fileSize), 4096n);
    await runPipeline(s.input, { request: {}, output: { path: s.target, command: 'test', freeSpace: small(need) } });
    expect(statSync(s.target).size).toBe(s.fileSize);
  });

  it(
    'trtx rewrite -o of a sparse program larger than the disk\u2019s free space: WRITE_NO_SPACE at once, nothing left',
    { timeout: 60_000 },
    async () => {
      const dir = tempDir('free-giant');
      const { bavail, bsize } = statfsSync(dir, { bigint: true });
      const free = bavail * bsize;
      // Twice what is free, at least 200 GB; ext4 files end at 16 TiB.
      const want = free * 2n > 200_000_000_000n ? free * 2n : 200_000_000_000n;
      if (want > 8n << 40n || clones(dir)) return; // a disk this large, or one that clones: nothing to show here
      const input = join(dir, 'giant.pte');
      writeSparsePte(input, multiEngine(2), Number(want / 2n));
      const out = join(dir, 'out');
      mkdirSync(out);
      const r = await runCli(['rewrite', input, '-o', join(out, 'giant.pte'), '--budget', '16TiB']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        /^error: WRITE_NO_SPACE: .*giant\.pte: not enough free space: the file needs .* but .* free; nothing was written/m,
      );
      expect(readdirSync(out)).toEqual([]);
    },
  );
});
