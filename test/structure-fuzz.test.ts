// The structure-heavy shapes of issue 27 as a standing, seeded fuzz job:
// wide shapes named many times, repeated indices, many planned buffers,
// many out-of-range inputs, many instructions (test/helpers/structure-
// fuzz.ts), each through check, inspect (text, --json, --html), diff
// (text, --json, --html) and rewrite, in one child process whose V8 heap
// is capped. Every command ends in exit 0, 1 or 2 with a code, never
// INTERNAL, never a crash. TRTX_STRUCTURE_FUZZ_MUTANTS (default 18, each
// shape on each of the three seed programs) and TRTX_STRUCTURE_FUZZ_SEED (default 27) widen or replay it.
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHAPE_NAMES } from './helpers/structure-fuzz.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const MUTANTS = Number(process.env.TRTX_STRUCTURE_FUZZ_MUTANTS ?? 3 * SHAPE_NAMES.length);
const SEED = Number(process.env.TRTX_STRUCTURE_FUZZ_SEED ?? 27);
/** The child's V8 heap: the report and decode budgets keep every command far below it. */
const HEAP_MIB = 768;

describe('structure fuzzing', () => {
  it(`${MUTANTS} structure mutants (seed ${SEED}): exit 0/1/2 with a code, no INTERNAL, no crash`, async () => {
    const r = await execa(
      process.execPath,
      [`--max-old-space-size=${HEAP_MIB}`, '--import', 'tsx', 'test/helpers/structure-fuzz-run.ts', String(SEED), String(MUTANTS)],
      { cwd: ROOT, reject: false, env: { NO_COLOR: '1' }, timeout: Math.max(300_000, MUTANTS * 60_000) },
    );
    expect(r.exitCode, r.stderr.slice(-2000)).toBe(0);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
      count: number;
      findings: { mutant: number; shape: string; detail: string; seed: string; command: string; problem: string }[];
      codes: Record<string, number>;
    };
    const replay = (f: (typeof result.findings)[0]) =>
      `mutant ${f.mutant} (${f.shape}: ${f.detail} on ${f.seed}; replay: structureMutant(${SEED}, ${f.mutant}, structureSeeds())): ${f.command}: ${f.problem}`;
    expect(result.findings.map(replay)).toEqual([]);
    expect(result.count).toBe(MUTANTS);
    // The shapes reach the bounds they are there for, and past them.
    expect(result.codes.REPORT_BUDGET).toBeGreaterThan(0);
    expect(result.codes.ok).toBeGreaterThan(0);
  }, 900_000);
});
