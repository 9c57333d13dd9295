// Benchmark: `trtx check` wall time and peak RSS on a program with 8
// TensorRT delegates whose engine segments total 40 MB and 4 GiB (the cost
// must not grow with engine bytes), and `trtx rewrite --in-place --budget` on
// the 4 GiB file, in one run. Times are given with node's own startup beside
// them, and the in-place change is also timed in process (open, pass,
// checks, head write with its fsyncs) to separate it from process startup.
//
//   npx tsx bench/check.ts [--dir DIR] [--big-gib 4] [--runs 7]
//
// The engines are holes: the .pte is written by fixtures/sparse.ts
// (writeSparsePte, which the tests use too): the same layoutProgram writePte
// uses, its head and each blob's header and metadata written at their
// offsets, and the file extended with truncate, so the engine bytes are zeros
// that take no disk and no time to make. trtx never reads engine bytes, so
// their content does not matter; the 40 MB file is also written with
// writePte from a sparse source and compared byte for byte, to show the
// shortcut makes the same file.
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeSparsePte } from '../fixtures/sparse.js';
import { buildProgram } from '../src/examples/builder.js';
import { multiEngine } from '../src/examples/programs.js';
import { runChecks } from '../src/checks/run.js';
import { budgetPass } from '../src/passes/budget.js';
import { publishRewrite } from '../src/pte/in-place.js';
import { openPte } from '../src/pte/open.js';
import { writePte, type SegmentSource } from '../src/pte/write.js';
import { parseBlob, writeBlobHead } from '../src/tensorrt/blob.js';
import { arg, GiB, MiB, ensureBundle, fmtMs, median, timed, wall } from './lib.js';

const dir = resolve(arg('--dir', 'bench/out'));
const bigGiB = Number(arg('--big-gib', '4'));
const runs = Number(arg('--runs', '7'));
mkdirSync(dir, { recursive: true });

const ENGINES = 8;
const spec = () => multiEngine(ENGINES, { budget: 2n * BigInt(GiB) });

/** The 8-engine program and each blob's head (header and metadata) with its engine resized to `engineBytes`. */
function program(engineBytes: number) {
  const built = buildProgram(spec());
  const plan = built.program.executionPlan[0];
  const heads: Uint8Array[] = [];
  const sizes: number[] = [];
  plan.delegates.forEach((d) => {
    const src = built.segments[d.processed!.index];
    if (src.kind !== 'bytes') throw new Error('expected blob bytes');
    const parsed = parseBlob(src.bytes);
    const head = writeBlobHead({ magic: parsed.magic, metadata: parsed.metadata, engineSize: engineBytes });
    heads[d.processed!.index] = head;
    sizes[d.processed!.index] = head.length + engineBytes;
  });
  return { built, heads, sizes };
}

/** Writes the .pte sparse with the fixtures' writer (engines left as holes). */
function sparsePte(path: string, engineBytes: number): string {
  writeSparsePte(path, spec(), engineBytes);
  return path;
}

/** The same program written by writePte from a sparse source file (the slow, reference way). */
async function viaWritePte(path: string, engineBytes: number): Promise<string> {
  const { built, heads, sizes } = program(engineBytes);
  const source = join(dir, 'engines.sparse');
  const fd = openSync(source, 'w');
  const sources: SegmentSource[] = [];
  let at = 0;
  built.segments.forEach((s, i) => {
    if (!heads[i]) return sources.push(s);
    writeSync(fd, heads[i], 0, heads[i].length, at);
    sources.push({ kind: 'file', path: source, offset: at, size: sizes[i] });
    at += sizes[i];
  });
  ftruncateSync(fd, at);
  closeSync(fd);
  await writePte(path, built.program, sources, { alignment: 4096, extendedHeader: true });
  rmSync(source);
  return path;
}

ensureBundle();
const small = sparsePte(join(dir, 'check-40mb.pte'), Math.floor(40_000_000 / ENGINES));
const reference = await viaWritePte(join(dir, 'check-40mb.writepte.pte'), Math.floor(40_000_000 / ENGINES));
if (!readFileSync(small).equals(readFileSync(reference))) throw new Error('the sparse layout differs from what writePte writes');
rmSync(reference);
const big = sparsePte(join(dir, 'check-big.pte'), Math.floor((bigGiB * GiB) / ENGINES));

const trtx = ['node', 'bin/trtx'];
const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`;
const disk = (p: string) => `${((statSync(p).blocks * 512) / MiB).toFixed(1)} MiB on disk`;
console.log(`command: npx tsx bench/check.ts --big-gib ${bigGiB} --runs ${runs}   (node ${process.version}, ${ENGINES} TensorRT engines)`);

console.log(`\ntrtx check FILE (${runs} rounds, each timing node startup, loading the bundle, and check on both files in turn; medians)`);
const files = [
  ['40 MB', small],
  [`${bigGiB} GiB`, big],
] as const;
const bundleImport = ['node', '-e', `import(${JSON.stringify(resolve('dist/trtx.mjs'))})`];
const t = { node: [] as number[], bundle: [] as number[], check: files.map(() => [] as number[]) };
for (let i = 0; i < runs; i++) {
  t.node.push(wall(['node', '-e', '0']));
  t.bundle.push(wall(bundleImport));
  // check exits 0 here (the budget warning is allowed), so wall() can insist on success.
  files.forEach(([, f], k) => t.check[k].push(wall([...trtx, 'check', f])));
}
const node = median(t.node);
const rss = files.map(([, f]) => Math.max(...Array.from({ length: 3 }, () => timed([...trtx, 'check', f]).maxRssKiB)));
files.forEach(([label, f], k) =>
  console.log(
    `  ${label.padEnd(7)} file ${mib(statSync(f).size)} (${disk(f)}): ${fmtMs(median(t.check[k]))} wall; peak RSS ${(rss[k] / 1024).toFixed(1)} MiB`,
  ),
);
console.log(`  ratio ${bigGiB} GiB / 40 MB: ${(median(t.check[1]) / median(t.check[0])).toFixed(2)}  (target: under 200 ms and flat)`);
console.log(`  of which: node startup ${fmtMs(node)}, node + loading the CLI bundle ${fmtMs(median(t.bundle))}`);
const inProc = files.map(() => [] as number[]);
for (let i = 0; i <= runs; i++) {
  for (const [k, [, f]] of files.entries()) {
    const t0 = process.hrtime.bigint();
    const pte = await openPte(f);
    await runChecks(pte);
    await pte.close();
    if (i > 0) inProc[k].push(Number(process.hrtime.bigint() - t0) / 1e9); // round 0 warms up
  }
}
console.log(
  `  in process (open + every check): ${files.map(([l], k) => `${l} ${fmtMs(median(inProc[k]))}`).join(', ')}; ratio ${(median(inProc[1]) / median(inProc[0])).toFixed(2)}`,
);

const bigSize = statSync(big).size;
console.log(
  `\ntrtx rewrite ${bigGiB} GiB file --in-place --budget (alternating 1GiB / 2GiB so every run changes bytes; median of ${runs})`,
);
const budgets = ['1GiB', '2GiB'];
const cli = median(
  Array.from({ length: runs }, (_, i) => wall([...trtx, 'rewrite', big, '--in-place', '--budget', budgets[i % 2], '--quiet'])),
);
console.log(`  CLI: ${fmtMs(cli)} wall (node startup ${fmtMs(node)}, node + loading the bundle ${fmtMs(median(t.bundle))})`);
const inProcess: number[] = [];
for (let i = 0; i < runs; i++) {
  const t0 = process.hrtime.bigint();
  const pte = await openPte(big);
  const segs = pte.program.segments.map((s) => ({ ...s }));
  const report = budgetPass({ budget: BigInt(i % 2 ? 3 : 4) * BigInt(GiB) })(pte.program);
  const checked = await runChecks(pte);
  if (checked.summary.errors) throw new Error(checked.summary.line);
  const w = await publishRewrite(pte, pte.program, segs, { inPlace: true, output: big, changed: report.changed });
  await pte.close();
  if (w.mode !== 'in-place') throw new Error(`expected an in-place write, got ${w.mode}`);
  inProcess.push(Number(process.hrtime.bigint() - t0) / 1e9);
}
console.log(`  in process (open, budget pass, checks, journal + head write, 7 fsyncs): ${fmtMs(median(inProcess))}  (target: under 50 ms)`);
if (statSync(big).size !== bigSize) throw new Error('the in-place rewrite changed the file size');
console.log(`  file size unchanged (${mib(bigSize)}), still ${disk(big)}`);

rmSync(small);
rmSync(big);
