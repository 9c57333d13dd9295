// The structure campaign as one process (run by
// test/structure-fuzz.test.ts under a capped V8 heap): every mutant of
// test/helpers/structure-fuzz.ts goes through check, inspect (text, --json,
// --html), diff against its seed (text, --json, --html) and rewrite -o, in
// process (src/cli/main.ts, as bin/trtx calls it). A finding is a command
// that threw, ended in INTERNAL, exited outside 0..2, or exited 1 or 2
// without a code (diff's 1, "the programs differ", needs none), or took
// longer than a hang bound. Prints one
// JSON line: the findings, the codes seen, the peak RSS.
//
//   npx tsx test/helpers/structure-fuzz-run.ts SEED COUNT
import { accessSync, constants, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAMILIES } from '../../src/codes/index.js';
import { runCli } from './cli.js';
import { structureMutant, structureSeeds } from './structure-fuzz.js';

/** A command taking longer than this is a hang (the largest mutants take a few seconds). */
const COMMAND_MS = 30_000;
const CODES = new Set(FAMILIES.flatMap((f) => Object.keys(f.codes)));

function scratchRoot(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/** The first listed code in the output (an `error: CODE` line, a finding, a --json document). */
function codeIn(text: string): string | null {
  for (const m of text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)) if (CODES.has(m[0])) return m[0];
  return null;
}

async function main(): Promise<void> {
  const runSeed = Number(process.argv[2] ?? 27);
  const count = Number(process.argv[3] ?? 12);
  const seeds = structureSeeds();
  const dir = mkdtempSync(join(scratchRoot(), 'trtx-structure-fuzz-'));
  const findings: { mutant: number; shape: string; detail: string; seed: string; command: string; problem: string }[] = [];
  const codes: Record<string, number> = {};
  try {
    const file = join(dir, 'mutant.pte');
    const orig = join(dir, 'seed.pte');
    for (let i = 0; i < count; i++) {
      const m = structureMutant(runSeed, i, seeds);
      writeFileSync(file, m.bytes);
      writeFileSync(orig, m.seed.bytes);
      const commands = [
        ['check', file],
        ['inspect', file],
        ['inspect', '--json', file],
        ['inspect', file, '--html', join(dir, 'inspect.html')],
        ['diff', orig, file],
        ['diff', '--json', file, orig],
        ['diff', orig, file, '--html', join(dir, 'diff.html')],
        ['rewrite', file, '-o', join(dir, 'out.pte')],
      ];
      for (const args of commands) {
        let problem: string | null = null;
        let code = 'ok';
        try {
          const t0 = Date.now();
          const r = await runCli(['--quiet', ...args]);
          const ms = Date.now() - t0;
          const text = r.stdout + r.stderr;
          const found = codeIn(text);
          code = r.code === 0 ? 'ok' : (found ?? `exit ${r.code}`);
          if (/INTERNAL/.test(r.stderr)) problem = `INTERNAL: ${(r.stderr.match(/INTERNAL: (.*)/)?.[1] ?? '').slice(0, 160)}`;
          else if (![0, 1, 2].includes(r.code)) problem = `exit ${r.code}`;
          else if (r.code !== 0 && !found && !(args[0] === 'diff' && r.code === 1)) problem = `exit ${r.code} without a code`;
          else if (ms > COMMAND_MS) problem = `took ${ms} ms`;
        } catch (e) {
          problem = `threw: ${String(e).slice(0, 160)}`;
        }
        codes[code] = (codes[code] ?? 0) + 1;
        if (problem)
          findings.push({
            mutant: i,
            shape: m.shape,
            detail: m.detail,
            seed: m.seed.name,
            command: args.join(' ').replaceAll(dir + '/', ''),
            problem,
          });
      }
      for (const n of readdirSync(dir)) rmSync(join(dir, n), { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const maxRssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify({ runSeed, count, maxRssMiB, findings, codes }) + '\n');
}

await main();
