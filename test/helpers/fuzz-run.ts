// The mutation campaign as one process (run by test/fuzz.test.ts under a
// capped V8 heap): every mutant of test/helpers/fuzz.ts goes through
// `check`, `inspect --json` and one of the writers or `diff`, in process
// (src/cli/main.ts, as bin/trtx calls it). Prints one JSON line: the
// findings (a command that ended in INTERNAL, an exit code outside 0..2, a
// command over the time bound, output out of proportion to its input), the
// counts, and the peak RSS of this process.
//
//   npx tsx test/helpers/fuzz-run.ts SEED COUNT
import { accessSync, constants, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './cli.js';
import { fuzzSeeds, mutant } from './fuzz.js';

/** A command taking longer than this is a hang (these programs take milliseconds). */
const COMMAND_MS = 5_000;
/** Output per input byte, beyond a fixed allowance for messages. */
const OUTPUT_PER_BYTE = 64;
const OUTPUT_FLOOR = 64 * 1024;

export interface FuzzFinding {
  mutant: number;
  kind: string;
  seed: string;
  command: string;
  problem: string;
}

/**
 * Where mutants are written: /dev/shm when there is one (the writers fsync
 * every output, and a disk's fsyncs would dominate the campaign), else the
 * temp dir.
 */
function scratchRoot(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

async function main(): Promise<void> {
  const runSeed = Number(process.argv[2] ?? 19);
  const count = Number(process.argv[3] ?? 2000);
  const seeds = fuzzSeeds();
  const dir = mkdtempSync(join(scratchRoot(), 'trtx-fuzz-'));
  const findings: FuzzFinding[] = [];
  const codes: Record<string, number> = {};
  const started = Date.now();
  try {
    const file = join(dir, 'mutant.pte');
    const orig = join(dir, 'original.pte');
    const out = join(dir, 'out.pte');
    for (let i = 0; i < count; i++) {
      const m = mutant(runSeed, i, seeds);
      writeFileSync(file, m.bytes);
      writeFileSync(orig, m.seed.bytes);
      const writers = [
        ['rewrite', file, '-o', out],
        ['rewrite', file, '-o', out, '--zero-copy-kv'],
        ['rewrite', file, '-o', out, '--budget', '1GiB', '--method', 'decode'],
        ['diff', orig, file, '--json'],
        ['rewrite', file, '--in-place', '--budget', '2GiB'],
        ['rewrite', file, '-o', out, '--zero-copy-kv', '--share-cache', '--json'],
        ['check', '--zero-copy-kv', '--json', file],
      ];
      for (const args of [['check', file], ['inspect', '--json', file], writers[i % writers.length]]) {
        const t0 = Date.now();
        const r = await runCli(['--quiet', ...args]);
        const ms = Date.now() - t0;
        const output = r.stdout.length + r.stderr.length;
        const problem = /INTERNAL/.test(r.stderr)
          ? `INTERNAL: ${(r.stderr.match(/INTERNAL: (.*)/)?.[1] ?? '').slice(0, 160)}`
          : ![0, 1, 2].includes(r.code)
            ? `exit ${r.code}`
            : ms > COMMAND_MS
              ? `took ${ms} ms`
              : output > OUTPUT_PER_BYTE * m.bytes.length + OUTPUT_FLOOR
                ? `${output} bytes of output for a ${m.bytes.length}-byte input`
                : null;
        const code =
          r.code === 0
            ? 'ok'
            : (r.stdout.match(/"code": "([A-Z0-9_]+)"/)?.[1] ?? r.stderr.match(/^error: ([A-Z0-9_]+)/m)?.[1] ?? `exit ${r.code}`);
        codes[code] = (codes[code] ?? 0) + 1;
        if (problem)
          findings.push({ mutant: i, kind: m.kind, seed: m.seed.name, command: args.join(' ').replaceAll(dir + '/', ''), problem });
      }
      for (const n of readdirSync(dir)) if (n !== 'mutant.pte' && n !== 'original.pte') rmSync(join(dir, n), { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const maxRssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify({ runSeed, count, ms: Date.now() - started, maxRssMiB, findings, codes }) + '\n');
}

await main();
