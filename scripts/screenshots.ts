// `npm run screenshots`: regenerates docs/commands/diff.md's picture of the zero-copy
// diff (docs/zero-copy-diff.png). It builds the demo's KV decoder staged and
// zero-copy (the catalogue's kv-decode-staged.pte and kv-decode-zero-copy.pte),
// writes `trtx diff --html` of the pair, opens it in headless Chromium
// (Debian's chromium, or TRTX_CHROMIUM) and keeps the decode method's
// summary and its two drawings side by side.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { main } from '../src/cli/main.js';

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
const out = join(repo, 'docs', 'zero-copy-diff.png');
const dir = mkdtempSync(join(tmpdir(), 'trtx-screenshots-'));
try {
  // Relative names, so the page shows the files as a user would name them.
  process.chdir(dir);
  await writeFixture('kv-decode-staged.pte', kvDecoder({ mode: 'staged' }));
  await writeFixture('kv-decode-zero-copy.pte', kvDecoder({ mode: 'zero-copy' }));
  const code = await main(['diff', 'kv-decode-staged.pte', 'kv-decode-zero-copy.pte', '--html', 'diff.html']);
  if (code !== 0) throw new Error(`trtx diff exited ${code}`);
  const browser = await puppeteer.launch({
    executablePath: process.env.TRTX_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900, deviceScaleFactor: 1 });
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.goto(pathToFileURL(join(dir, 'diff.html')).href, { waitUntil: 'load' });
    const clip = (await page.evaluate(`(() => {
      const section = document.querySelector('main section');
      const top = section.getBoundingClientRect().top + window.scrollY - 8;
      const figures = [...section.querySelectorAll('.sides figure')].map((f) => f.getBoundingClientRect().bottom + window.scrollY);
      return { x: 0, y: top, width: document.documentElement.clientWidth, height: Math.max(...figures) - top + 4 };
    })()`)) as { x: number; y: number; width: number; height: number };
    await page.screenshot({ path: out, clip });
  } finally {
    await browser.close();
  }
  console.log(`wrote ${out}`);
} finally {
  process.chdir(repo);
  rmSync(dir, { recursive: true, force: true });
}
