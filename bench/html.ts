// The HTML memory-plan report on a 4 GiB program: how long `trtx inspect
// --html` takes to write it, and how long the page takes to open in headless
// Chromium, beside the same for a 40 MB program (the cost must not grow with
// engine bytes: the report never reads a segment body).
//
//   npx tsx bench/html.ts [--dir DIR] [--big-gib 4] [--runs 7]
//
// The program is the demo's KV decoder at seed scale (the 30-layer model of
// pytorch/TensorRT#4667; 246 planned tensors and 123 staging copies in
// decode), its two engines resized so they total 40 MB in one file and
// --big-gib GiB in the other, written sparse (fixtures/sparse.ts): the
// engines are holes.
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';
import { kvDecoder } from '../src/examples/catalogue.js';
import { writeSparsePte } from '../fixtures/sparse.js';
import { renderInspectHtml } from '../src/html/page.js';
import { memoryPlan } from '../src/inspect/memory-plan.js';
import { openPte } from '../src/pte/open.js';
import { arg, GiB, MiB, ensureBundle, fmtMs, median, wall } from './lib.js';

const dir = resolve(arg('--dir', 'bench/out'));
const bigGiB = Number(arg('--big-gib', '4'));
const runs = Number(arg('--runs', '7'));
mkdirSync(dir, { recursive: true });
ensureBundle();

const ENGINES = 2; // prefill and decode
const spec = () => kvDecoder({ mode: 'staged', scale: 'seed' });
const files = [
  ['40 MB', join(dir, 'html-40mb.pte'), 40_000_000],
  [`${bigGiB} GiB`, join(dir, 'html-big.pte'), bigGiB * GiB],
] as const;
for (const [, path, total] of files) writeSparsePte(path, spec(), Math.floor(total / ENGINES));

console.log(`command: npx tsx bench/html.ts --big-gib ${bigGiB} --runs ${runs}   (node ${process.version})`);
const inProc = files.map(() => [] as number[]);
const cli = files.map(() => [] as number[]);
const sizes: number[] = [];
for (let i = 0; i <= runs; i++) {
  for (const [k, [, path]] of files.entries()) {
    const t0 = process.hrtime.bigint();
    const pte = await openPte(path);
    const html = renderInspectHtml(await memoryPlan(pte));
    await pte.close();
    if (i > 0) inProc[k].push(Number(process.hrtime.bigint() - t0) / 1e9); // round 0 warms up
    sizes[k] = html.length;
    cli[k].push(wall(['node', 'bin/trtx', 'inspect', path, '--html', join(dir, `html-${k}.html`)]));
  }
}
const node = median(Array.from({ length: runs }, () => wall(['node', '-e', '0'])));

const browser = await puppeteer.launch({
  executablePath: process.env.TRTX_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu'],
});
const load = files.map(() => [] as number[]);
try {
  for (let i = 0; i <= runs; i++) {
    for (const k of files.keys()) {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(join(dir, `html-${k}.html`)).href, { waitUntil: 'load' });
      const ms = (await page.evaluate(
        `(() => { const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime; })()`,
      )) as number;
      if (i > 0) load[k].push(ms / 1000);
      await page.close();
    }
  }
} finally {
  await browser.close();
}

for (const [k, [label, path]] of files.entries()) {
  console.log(
    `  ${label.padEnd(7)} program ${(statSync(path).size / MiB).toFixed(0)} MiB, page ${(sizes[k] / 1024).toFixed(1)} KiB: ` +
      `plan + render in process ${fmtMs(median(inProc[k]))}; \`trtx inspect --html\` ${fmtMs(median(cli[k]))} wall; page load in Chromium ${fmtMs(median(load[k]))}`,
  );
}
console.log(
  `  ratio ${bigGiB} GiB / 40 MB: in process ${(median(inProc[1]) / median(inProc[0])).toFixed(2)}, CLI ${(median(cli[1]) / median(cli[0])).toFixed(2)}, page load ${(median(load[1]) / median(load[0])).toFixed(2)}`,
);
console.log(`  node startup alone: ${fmtMs(node)}; target: the ${bigGiB} GiB report written and opened in under 2 s`);
for (const [, path] of files) rmSync(path);
