// Benchmark: `trtx rewrite IN -o OUT` on a program of 3 GiB of segments
// against `cp --sparse=never IN OUT` of the same file (the issue-26 target:
// at least 0.9x cp's speed). The rewrite leaves every segment where it is
// (the head is re-encoded; the segment bytes are the kernel's copy of the
// file, src/pte/write.ts). Each run starts with no dirty pages left by the
// one before (sync), and writes a new file. The rewrite fsyncs its output
// before the rename and cp does not, so cp is also timed with `sync OUT`
// after it (the same durability): on a disk slower to write back than the
// page cache takes the copy, that is the comparison that means something. Then the same rewrite is
// interrupted (SIGINT to its group, as Ctrl-C) --interrupt-after seconds in,
// in the middle of the copy: the time from the signal to its end, which must
// not wait for the copy (src/util/cleanup.ts, endBy), against the full
// rewrite's time, and what it left beside the output.
//
//   npx tsx bench/rewrite-copy.ts [--dir DIR] [--gib 3] [--runs 3] [--interrupt-after 1]
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { arg, GiB, ensureBundle, fmtMs, median, wall } from './lib.js';
import { segmentProgram } from './segment-program.js';

const dir = resolve(arg('--dir', 'bench/out'));
const bytes = Math.round(Number(arg('--gib', '3')) * GiB);
const runs = Number(arg('--runs', '3'));
const interruptAfter = Number(arg('--interrupt-after', '1'));
mkdirSync(dir, { recursive: true });
ensureBundle();

const file = await segmentProgram(dir, 'rewrite-copy', bytes);
const size = statSync(file).size;
const trtx = ['node', 'bin/trtx'];
const out = (n: string) => join(dir, n);
const fresh = () => {
  for (const f of ['cp.pte', 'cps.pte', 'rw.pte']) rmSync(out(f), { force: true });
  wall(['sync']);
};
const t = { cp: [] as number[], cpSync: [] as number[], rewrite: [] as number[] };
for (let i = 0; i < runs; i++) {
  fresh();
  t.cp.push(wall(['cp', '--sparse=never', file, out('cp.pte')]));
  fresh();
  t.cpSync.push(wall(['sh', '-c', 'cp --sparse=never "$1" "$2" && sync "$2"', 'cp-sync', file, out('cps.pte')]));
  fresh();
  t.rewrite.push(wall([...trtx, 'rewrite', file, '-o', out('rw.pte'), '--quiet']));
}
fresh();

/** Starts the rewrite in a group of its own, SIGINTs the group after `after` s: seconds from the signal to the end, and how it ended. */
function interrupted(after: number): Promise<{ seconds: number; how: string }> {
  return new Promise((done) => {
    const child = spawn(trtx[0], [...trtx.slice(1), 'rewrite', file, '-o', out('rw.pte'), '--quiet'], { detached: true, stdio: 'ignore' });
    let sent = 0;
    setTimeout(() => {
      sent = performance.now();
      process.kill(-child.pid!, 'SIGINT');
    }, after * 1000);
    child.on('exit', (code, signal) => done({ seconds: (performance.now() - sent) / 1000, how: signal ?? `exit ${code}` }));
  });
}
const stops: { seconds: number; how: string }[] = [];
for (let i = 0; i < runs; i++) {
  fresh();
  stops.push(await interrupted(interruptAfter));
  const left = readdirSync(dir).filter((f) => f.includes('rw.pte')); // the output, its temporary, its lock file
  if (left.length > 0) throw new Error(`the interrupted rewrite left ${left.join(', ')}`);
}
fresh();
const gbps = (s: number) => `${(size / s / 1e9).toFixed(2)} GB/s`;
const [c, cs, r] = [median(t.cp), median(t.cpSync), median(t.rewrite)];
console.log(
  `command: npx tsx bench/rewrite-copy.ts --gib ${bytes / GiB} --runs ${runs}   (node ${process.version}, file ${(size / GiB).toFixed(2)} GiB)`,
);
console.log(`  cp --sparse=never           ${fmtMs(c)} (${gbps(c)})`);
console.log(`  cp --sparse=never; sync OUT ${fmtMs(cs)} (${gbps(cs)})`);
console.log(
  `  rewrite -o (segments stay)  ${fmtMs(r)} (${gbps(r)}): ${(c / r).toFixed(2)}x cp's speed, ${(cs / r).toFixed(2)}x cp + sync's`,
);
const stop = median(stops.map((x) => x.seconds));
console.log(
  `  SIGINT ${interruptAfter} s into the rewrite: ended ${fmtMs(stop)} after the signal (${stops.map((x) => x.how).join(', ')}; ${((stop / r) * 100).toFixed(0)}% of a full rewrite), nothing left`,
);
rmSync(file);
