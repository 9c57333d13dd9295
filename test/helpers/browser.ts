// Headless Chromium for the report tests: Debian's `chromium` package (CI
// installs it in .ci/run), driven by puppeteer-core, which never downloads a
// browser. TRTX_CHROMIUM points at another binary. A missing browser fails
// the tests loudly, like a missing corpus: CI must not pass by skipping them.
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser } from 'puppeteer-core';

const repo = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CHROMIUM = process.env.TRTX_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots and timings the browser tests keep (git-ignored). */
export const ARTIFACTS = join(repo, '.cache', 'artifacts');

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install chromium, or set TRTX_CHROMIUM`);
  mkdirSync(ARTIFACTS, { recursive: true });
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}
