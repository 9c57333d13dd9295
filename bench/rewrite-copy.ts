// Benchmark: `trtx rewrite IN -o OUT` on a program of 3 GiB of segments
// against `cp --sparse=never IN OUT` of the same file (the issue-26 target:
// at least 0.9x cp's speed). The rewrite leaves every segment where it is
// (the head is re-encoded; the segment bytes are the kernel's copy of the
// file, src/pte/write.ts). Each run starts with no dirty pages left by the
// one before (sync), and writes a new file.
//
//   npx tsx bench/rewrite-copy.ts [--dir DIR] [--gib 3] [--runs 3]
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { arg, GiB, ensureBundle, fmtMs, median, wall } from './lib.js';
import { segmentProgram } from './segment-program.js';

const dir = resolve(arg('--dir', 'bench/out'));
const bytes = Math.round(Number(arg('--gib', '3')) * GiB);
const runs = Number(arg('--runs', '3'));
mkdirSync(dir, { recursive: true });
ensureBundle();

const file = await segmentProgram(dir, 'rewrite-copy', bytes);
const size = statSync(file).size;
const trtx = ['node', 'bin/trtx'];
const out = (n: string) => join(dir, n);
const fresh = () => {
  for (const f of ['cp.pte', 'rw.pte']) rmSync(out(f), { force: true });
  wall(['sync']);
};
const t = { cp: [] as number[], rewrite: [] as number[] };
for (let i = 0; i < runs; i++) {
  fresh();
  t.cp.push(wall(['cp', '--sparse=never', file, out('cp.pte')]));
  fresh();
  t.rewrite.push(wall([...trtx, 'rewrite', file, '-o', out('rw.pte'), '--quiet']));
}
fresh();
const gbps = (s: number) => `${(size / s / 1e9).toFixed(2)} GB/s`;
const [c, r] = [median(t.cp), median(t.rewrite)];
console.log(
  `command: npx tsx bench/rewrite-copy.ts --gib ${bytes / GiB} --runs ${runs}   (node ${process.version}, file ${(size / GiB).toFixed(2)} GiB)`,
);
console.log(`  cp --sparse=never           ${fmtMs(c)} (${gbps(c)})`);
console.log(`  rewrite -o (segments stay)  ${fmtMs(r)} (${gbps(r)}): ${(c / r).toFixed(2)}x cp's speed`);
rmSync(file);
