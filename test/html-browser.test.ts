// The HTML reports in a real browser (headless Chromium): the staged vs
// zero-copy diff of the demo's KV decoder, the zero-copy program alone, and a
// real ExecuTorch program from the corpus. What a person would check: the
// tensor names and byte totals on the page, that nothing is fetched, the
// keyboard path (skip link, method links, then the drawing, whose arrow keys
// walk the tensors), the landmarks in the accessibility tree, light and dark.
// Screenshots and load times are kept under .cache/artifacts/. Timeouts are
// generous: a browser on a loaded 2-core machine is slow to start, not wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page, SerializedAXNode } from 'puppeteer-core';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { writeSparsePte } from '../fixtures/sparse.js';
import { exactBytes } from '../src/html/escape.js';
import { memoryPlan } from '../src/inspect/memory-plan.js';
import { withPte } from '../src/pte/open.js';
import { ARTIFACTS, launchBrowser } from './helpers/browser.js';
import { runCli } from './helpers/cli.js';
import { corpusPath } from './helpers/corpus.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('html-browser');
const staged = join(dir, 'kv-decode-staged.pte');
const zeroCopy = join(dir, 'kv-decode-zero-copy.pte');
const corpus = corpusPath('keyword-spotting-cortex-m');
const pages = { diff: join(dir, 'diff.html'), zc: join(dir, 'zc.html'), corpus: join(dir, 'corpus.html'), big: join(dir, 'big.html') };
const loadTimes: Record<string, number> = {};
let browser: Browser;

beforeAll(async () => {
  await writeFixture(staged, kvDecoder({ mode: 'staged' }));
  await writeFixture(zeroCopy, kvDecoder({ mode: 'zero-copy' }));
  for (const args of [
    ['diff', staged, zeroCopy, '--html', pages.diff],
    ['inspect', zeroCopy, '--html', pages.zc],
    ['inspect', corpus, '--html', pages.corpus],
  ]) {
    const r = await runCli(args);
    expect(r.code, r.stderr).toBe(0);
  }
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  writeFileSync(join(ARTIFACTS, 'html-load-times.json'), JSON.stringify(loadTimes, null, 2) + '\n');
});

/** Opens a report, failing on any request other than the page itself; returns the page and its load time. */
async function open(file: string, scheme: 'light' | 'dark' = 'light'): Promise<{ page: Page; ms: number }> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1400 });
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
  const url = pathToFileURL(file).href;
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url, { waitUntil: 'load' });
  // Browser-side code is passed as text: the project compiles without the DOM library.
  const ms = (await page.evaluate(
    `(() => { const nav = performance.getEntriesByType('navigation')[0]; return nav.loadEventEnd - nav.startTime; })()`,
  )) as number;
  expect(requests).toEqual([url]);
  expect(errors).toEqual([]);
  return { page, ms };
}

const text = (page: Page) => page.evaluate('document.body.innerText') as Promise<string>;

function findAll(node: SerializedAXNode | null, pred: (n: SerializedAXNode) => boolean, out: SerializedAXNode[] = []): SerializedAXNode[] {
  if (!node) return out;
  if (pred(node)) out.push(node);
  for (const c of node.children ?? []) findAll(c, pred, out);
  return out;
}

describe('the diff report of the demo KV decoder, staged vs zero-copy', { timeout: 60_000 }, () => {
  it('shows the caches, both sides and the bytes moved per execution, as the programs say', async () => {
    const { page, ms } = await open(pages.diff);
    loadTimes['diff kv-decode staged vs zero-copy'] = ms;
    const [a, b] = [await withPte(staged, (p) => memoryPlan(p)), await withPte(zeroCopy, (p) => memoryPlan(p))];
    // The tables sit in closed <details> under the drawings: open them as a reader would.
    for (const summary of await page.$$('details > summary')) await summary.click();
    const body = await text(page);
    for (const plan of [a, b]) {
      const decode = plan.methods.find((m) => m.name === 'decode')!;
      const s = decode.staging;
      expect(body).toContain(exactBytes(s.host_to_device_bytes));
      expect(body).toContain(exactBytes(s.device_to_host_bytes));
      for (const t of decode.arenas.flatMap((x) => x.tensors)) expect(body).toContain(t.label);
    }
    const before = a.methods[0].staging.host_to_device_bytes + a.methods[0].staging.device_to_host_bytes;
    const after = b.methods[0].staging.host_to_device_bytes + b.methods[0].staging.device_to_host_bytes;
    expect(body).toContain(`Bytes moved per execution: ${exactBytes(before)} → ${exactBytes(after)}`);
    expect(body).toMatch(/A \(staged\)/);
    expect(body).toMatch(/B \(zero-copy\)/);
    // Side by side: the two sides of a method share a row.
    const [left, right] = await page.$$eval('section .sides > section.side', (els) =>
      els.slice(0, 2).map((e) => e.getBoundingClientRect().toJSON()),
    );
    expect(right.x).toBeGreaterThan(left.x + left.width - 1);
    expect(Math.abs(right.y - left.y)).toBeLessThan(2);
    // Staged draws a copy arrow per staging copy; zero-copy draws the few left.
    const arrows = await page.$$eval('section.side', (els) => els.slice(0, 2).map((e) => e.querySelectorAll('path.copy').length));
    expect(arrows).toEqual([a.methods[0].copies.length, b.methods[0].copies.length]);
    const decodeSection = await page.$('section.sides, section[aria-labelledby^="m0-"]');
    await (decodeSection ?? page).screenshot({ path: join(ARTIFACTS, 'html-diff-kv-decode.png') });
    await page.close();
  });

  it('is readable in dark and light: the page follows prefers-color-scheme', async () => {
    const bg = async (scheme: 'light' | 'dark') => {
      const { page } = await open(pages.diff, scheme);
      const rgb = (await page.evaluate('getComputedStyle(document.body).backgroundColor')) as string;
      const fg = (await page.evaluate('getComputedStyle(document.body).color')) as string;
      if (scheme === 'dark') await page.screenshot({ path: join(ARTIFACTS, 'html-diff-kv-dark.png') });
      await page.close();
      const lum = (c: string) =>
        c
          .match(/[0-9]+/g)!
          .slice(0, 3)
          .map(Number)
          .reduce((n, v) => n + v, 0) / 765;
      return { bg: lum(rgb), fg: lum(fg) };
    };
    const light = await bg('light');
    const dark = await bg('dark');
    expect(light.bg).toBeGreaterThan(0.9);
    expect(light.fg).toBeLessThan(0.3);
    expect(dark.bg).toBeLessThan(0.15);
    expect(dark.fg).toBeGreaterThan(0.8);
  });
});

describe('keyboard and screen reader', { timeout: 60_000 }, () => {
  it('Tab reaches the skip link, the method links, then the drawing; arrows walk the tensors and select their rows', async () => {
    const { page } = await open(pages.zc);
    const plan = await withPte(zeroCopy, (p) => memoryPlan(p));
    type Focus = { tag: string; text: string; label: string | null; id: string };
    const focused = () =>
      page.evaluate(
        `(() => { const e = document.activeElement; return { tag: e.tagName.toLowerCase(), text: (e.textContent || '').trim(), label: e.getAttribute('aria-label'), id: e.id }; })()`,
      ) as Promise<Focus>;
    const order: Focus[] = [];
    for (let i = 0; i < 2 + plan.methods.length; i++) {
      await page.keyboard.press('Tab');
      order.push(await focused());
    }
    expect(order[0]).toMatchObject({ tag: 'a', text: 'Skip to the report' });
    expect(order.slice(1, 1 + plan.methods.length).map((o) => o.text)).toEqual(plan.methods.map((m) => `method ${m.name}`));
    const first = plan.methods[0].arenas.flatMap((a) => a.tensors)[0];
    expect(order.at(-1)!.tag).toBe('rect');
    expect(order.at(-1)!.label).toContain(first.label);
    // Right arrow: the next tensor; its description is announced and its row highlighted.
    await page.keyboard.press('ArrowRight');
    const second = plan.methods[0].arenas.flatMap((a) => a.tensors)[1];
    const now = await focused();
    expect(now.label).toContain(second.label);
    expect(await page.$eval('#live', (e) => e.textContent)).toBe(now.label);
    expect(await page.$eval(`#${now.id}-row`, (e) => e.classList.contains('hl'))).toBe(true);
    // Down arrow: the first tensor of the next arena.
    await page.keyboard.press('ArrowDown');
    const nextArena = plan.methods[0].arenas[1].tensors[0];
    expect((await focused()).label).toContain(nextArena.label);
    // Only one tensor per drawing is in the tab order.
    const tabbable = await page.$$eval('svg.plan', (svgs) => svgs.map((s) => s.querySelectorAll('rect.t[tabindex="0"]').length));
    expect(tabbable.every((n) => n === 1)).toBe(true);
    await page.close();
  });

  it('the accessibility tree has the landmarks, the headings and a named image per tensor', async () => {
    const { page } = await open(pages.zc);
    const tree = await page.accessibility.snapshot({ interestingOnly: false });
    const roles = new Set(findAll(tree, () => true).map((n) => n.role));
    for (const r of ['banner', 'navigation', 'main', 'contentinfo', 'table', 'status']) expect(roles, r).toContain(r);
    const headings = findAll(tree, (n) => n.role === 'heading');
    expect(headings.filter((h) => h.level === 1)).toHaveLength(1);
    expect(headings.filter((h) => h.level === 2).map((h) => h.name)).toEqual(['method decode', 'method prefill']);
    const images = findAll(tree, (n) => n.role === 'image' || n.role === 'img');
    expect(images.some((n) => n.name?.startsWith('layers.0.attn.k_cache: float[1, 2, 8, 4], 256 B at offset'))).toBe(true);
    await page.close();
  });
});

describe('a real ExecuTorch program from the corpus', { timeout: 60_000 }, () => {
  it('draws and lists every planned tensor with its place', async () => {
    const { page, ms } = await open(pages.corpus);
    loadTimes['inspect keyword-spotting-cortex-m'] = ms;
    const plan = await withPte(corpus, (p) => memoryPlan(p));
    const all = plan.methods.flatMap((m) => m.arenas.flatMap((a) => a.tensors));
    expect(all.length).toBeGreaterThan(10);
    expect(await page.$$eval('svg.plan rect.t', (r) => r.length)).toBe(all.length);
    expect(await page.$$eval('table.tensors tbody tr', (r) => r.length)).toBe(all.length);
    const body = await text(page);
    for (const m of plan.methods) for (const a of m.arenas) expect(body).toContain(exactBytes(a.size));
    await page.screenshot({ path: join(ARTIFACTS, 'html-inspect-corpus.png') });
    await page.close();
  });
});

describe('a 4 GiB program', { timeout: 60_000 }, () => {
  it('the seed-scale KV decoder with 4 GiB of engines: the report opens (its load time is kept as an artifact)', async () => {
    const big = join(dir, 'big.pte');
    writeSparsePte(big, kvDecoder({ mode: 'staged', scale: 'seed' }), 2 * 1024 ** 3);
    const r = await runCli(['inspect', big, '--html', pages.big]);
    expect(r.code, r.stderr).toBe(0);
    const { page, ms } = await open(pages.big);
    loadTimes['inspect seed-scale KV decoder, 4 GiB of engines'] = ms;
    expect(await text(page)).toContain('layers.29.attn.v_cache');
    // A sanity bound, not a benchmark (bench/html.ts measures): far above the 2 s target.
    expect(ms).toBeLessThan(30_000);
    await page.close();
  });
});
