// Benchmark (issue 36 item 3): what inspect, check and rewrite --budget cost
// on a program of 5 GB of weights whose engine is a version-3 reference
// engine (docs/reference-lowering.md section 1): the engine's program lists its weights
// as EXTERNAL constants and the weights are the outer program's named data
// (fixtures/external-weights.ts; the file is sparse, its weights holes, so it
// takes no disk to make). Targets: inspect and check in at most 1 s and
// 200 MB of peak RSS, whatever the weights weigh (they read the engine's
// table and its program's header and flatbuffer, never a weight); rewrite
// -o --budget at cp's speed (the head is re-encoded, the segments are the
// kernel's copy). The same commands on a 5 MB twin (the same program with
// 1/1000 of the weights) say whether anything grows with the weights.
//
//   npx tsx bench/big-metadata.ts [--dir DIR] [--gb 5] [--weights 4] [--runs 3]
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeSparseExternal } from '../fixtures/external-weights.js';
import { arg, ensureBundle, fmtMs, median, timed, wall } from './lib.js';

const dir = resolve(arg('--dir', 'bench/out'));
const gb = Number(arg('--gb', '5'));
const count = Number(arg('--weights', '4'));
const runs = Number(arg('--runs', '3'));
mkdirSync(dir, { recursive: true });
ensureBundle();

/** A program of `bytes` of weights in `count` float32 tensors, baked with a budget of a fifth of them. */
function program(name: string, bytes: number): string {
  const elements = Math.floor(bytes / count / 4);
  const weights = Array.from({ length: count }, (_, i) => ({ key: `layers.${i}.mlp.weight`, elements }));
  const file = join(dir, name);
  writeSparseExternal(file, { weights, budget: BigInt(Math.floor(bytes / 5)) });
  return file;
}

const big = program('big-metadata.pte', gb * 1e9);
const small = program('big-metadata-small.pte', gb * 1e6);
const trtx = ['node', 'bin/trtx'];

/** Median wall seconds and the largest peak RSS (MiB) of `args` over the runs; it must exit 0. */
function measure(args: string[]): { seconds: number; rssMiB: number } {
  const s: number[] = [];
  let rss = 0;
  for (let i = 0; i < runs; i++) {
    const r = timed([...trtx, ...args]);
    if (r.status !== 0) throw new Error(`trtx ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    s.push(r.seconds);
    rss = Math.max(rss, r.maxRssKiB / 1024);
  }
  return { seconds: median(s), rssMiB: rss };
}

const rows: [string, string[]][] = [
  ['inspect', ['inspect', '@']],
  ['inspect --json', ['inspect', '--json', '@']],
  ['check', ['check', '@']],
];
console.log(
  `command: npx tsx bench/big-metadata.ts --gb ${gb} --weights ${count} --runs ${runs}   (node ${process.version}; ${(statSync(big).size / 1e9).toFixed(2)} GB and ${(statSync(small).size / 1e6).toFixed(2)} MB files)`,
);
for (const [what, args] of rows) {
  const b = measure(args.map((a) => (a === '@' ? big : a)));
  const m = measure(args.map((a) => (a === '@' ? small : a)));
  console.log(
    `  ${what.padEnd(15)} ${gb} GB: ${fmtMs(b.seconds)}, ${b.rssMiB.toFixed(1)} MiB peak RSS   ${gb} MB: ${fmtMs(m.seconds)}, ${m.rssMiB.toFixed(1)} MiB`,
  );
}

// rewrite -o --budget against cp of the same file; each run starts with no dirty pages left by the one before.
const out = (n: string) => join(dir, n);
const fresh = () => {
  for (const f of ['cp.pte', 'cps.pte', 'rw.pte', 'rwb.pte']) rmSync(out(f), { force: true });
  wall(['sync']);
};
const t = { cp: [] as number[], cpSync: [] as number[], plain: [] as number[], rewrite: [] as number[] };
for (let i = 0; i < runs; i++) {
  fresh();
  t.cp.push(wall(['cp', '--sparse=never', big, out('cp.pte')]));
  fresh();
  t.cpSync.push(wall(['sh', '-c', 'cp --sparse=never "$1" "$2" && sync "$2"', 'cp-sync', big, out('cps.pte')]));
  fresh();
  t.plain.push(wall([...trtx, 'rewrite', big, '-o', out('rw.pte'), '--quiet']));
  fresh();
  t.rewrite.push(wall([...trtx, 'rewrite', big, '-o', out('rwb.pte'), '--budget', `${Math.floor((gb * 1e9) / 4)}`, '--quiet']));
}
fresh();
const [c, cs, p, r] = [median(t.cp), median(t.cpSync), median(t.plain), median(t.rewrite)];
console.log(`  cp --sparse=never           ${fmtMs(c)}`);
console.log(`  cp --sparse=never; sync OUT ${fmtMs(cs)}`);
// The canonical rewrite reads no engine: what --budget adds over it is the reading and the checks.
console.log(`  rewrite -o                  ${fmtMs(p)}: ${(c / p).toFixed(2)}x cp's speed, ${(cs / p).toFixed(2)}x cp + sync's`);
console.log(
  `  rewrite -o --budget         ${fmtMs(r)}: ${(c / r).toFixed(2)}x cp's speed, ${(cs / r).toFixed(2)}x cp + sync's, ${(p / r).toFixed(2)}x the plain rewrite's`,
);
rmSync(big);
rmSync(small);
