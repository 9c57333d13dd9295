// Runs bin/trtx in a child process with a capped V8 heap and reports its
// exit code, output and peak RSS (test/helpers/max-rss.mjs). For tests that
// bound what a hostile input may cost: a regression shows up as a V8 heap
// abort or an RSS over the bound, not as a machine swapping.
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN } from './spawn-trtx.js';
import { tempDir } from './temp.js';

const PRELOAD = resolve(fileURLToPath(new URL('./max-rss.mjs', import.meta.url)));

export interface ChildResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Peak resident set size of the child, in MiB (NaN when it died before exit handlers ran). */
  maxRssMiB: number;
  wallMs: number;
}

export async function runChild(
  args: string[],
  opts: { heapMiB?: number; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<ChildResult> {
  const dir = tempDir('rss');
  const rssFile = join(dir, 'rss');
  const started = Date.now();
  const r = await execa(process.execPath, [`--max-old-space-size=${opts.heapMiB ?? 256}`, '--import', PRELOAD, BIN, ...args], {
    reject: false,
    timeout: opts.timeoutMs ?? 60_000,
    env: { ...opts.env, TRTX_TEST_MAX_RSS_FILE: rssFile, NO_COLOR: '1' },
    stripFinalNewline: false,
  });
  let kib = NaN;
  try {
    kib = Number(readFileSync(rssFile, 'utf8'));
  } catch {
    // killed before its exit handler ran
  }
  return {
    code: r.exitCode ?? -1,
    stdout: String(r.stdout),
    stderr: String(r.stderr),
    maxRssMiB: kib / 1024,
    wallMs: Date.now() - started,
  };
}
