// Benchmark: `trtx inspect` wall time and peak RSS on programs whose
// segments total 40 MB and 4 GiB (cost must not grow with segment bytes), and
// `trtx rewrite` throughput as a ratio to `cp` (and `cp` + fsync, since the
// writer fsyncs) of the same file, all in one run.
//
//   npx tsx bench/pte.ts [--dir DIR] [--big-gib 4]
import { mkdirSync, statSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { segmentProgram } from './segment-program.js';
import { arg, GiB, MiB, ensureBundle, fmtMs, median, timed, wall } from './lib.js';

const dir = resolve(arg('--dir', 'bench/out'));
const bigBytes = Math.round(Number(arg('--big-gib', '4')) * GiB);
mkdirSync(dir, { recursive: true });
ensureBundle();

const program = (name: string, total: number) => segmentProgram(dir, name, total);

const trtx = ['node', 'bin/trtx'];
const files = { '40 MB': await program('segments-40mb', 40_000_000), [`${bigBytes / GiB} GiB`]: await program('segments-big', bigBytes) };

console.log(`command: npx tsx bench/pte.ts --big-gib ${bigBytes / GiB}   (node ${process.version})`);
console.log('\ntrtx inspect --json (median of 5; peak RSS of the slowest)');
for (const [label, file] of Object.entries(files)) {
  const runs = Array.from({ length: 5 }, () => timed([...trtx, 'inspect', file, '--json']));
  const w = Array.from({ length: 5 }, () => wall([...trtx, 'inspect', file, '--json']));
  const baseline = Array.from({ length: 5 }, () => wall(['node', '-e', '0']));
  console.log(
    `  ${label.padEnd(8)} file ${(statSync(file).size / MiB).toFixed(0)} MiB: ${fmtMs(median(w))} wall (node startup alone ${fmtMs(median(baseline))}), peak RSS ${(Math.max(...runs.map((r) => r.maxRssKiB)) / 1024).toFixed(1)} MiB`,
  );
}

console.log('\ntrtx rewrite vs cp of the same file (median of 3, alternating)');
for (const [label, file] of Object.entries(files)) {
  const size = statSync(file).size;
  const t = { rewrite: [] as number[], cp: [] as number[], cpsync: [] as number[] };
  // Each command writes a new file (no unlink of a previous copy inside the
  // timing) and starts with no dirty pages left by the one before.
  const fresh = () => {
    for (const f of ['cp.pte', 'cps.pte', 'rw.pte']) rmSync(join(dir, f), { force: true });
    wall(['sync']);
  };
  for (let i = 0; i < 3; i++) {
    fresh();
    t.cp.push(wall(['cp', file, join(dir, 'cp.pte')]));
    fresh();
    t.cpsync.push(wall(['sh', '-c', `cp "${file}" "${join(dir, 'cps.pte')}" && sync "${join(dir, 'cps.pte')}"`]));
    fresh();
    t.rewrite.push(wall([...trtx, 'rewrite', file, '-o', join(dir, 'rw.pte'), '--quiet']));
  }
  const [r, c, cs] = [median(t.rewrite), median(t.cp), median(t.cpsync)];
  const gbps = (s: number) => `${(size / s / 1e9).toFixed(2)} GB/s`;
  console.log(
    `  ${label.padEnd(8)} rewrite ${fmtMs(r)} (${gbps(r)}), cp ${fmtMs(c)} (${gbps(c)}), cp+fsync ${fmtMs(cs)}; throughput ratio vs cp ${(c / r).toFixed(2)}, vs cp+fsync ${(cs / r).toFixed(2)}`,
  );
}
for (const f of ['cp.pte', 'cps.pte', 'rw.pte']) rmSync(join(dir, f), { force: true });
