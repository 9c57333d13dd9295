// The mutation fuzzer as a standing test: a seeded campaign over every
// fixture and corpus program (test/helpers/fuzz.ts), each mutant through
// check, inspect --json and a writer or diff (test/helpers/fuzz-run.ts),
// in one child process whose V8 heap is capped. Every command must end in
// exit 0, 1 or 2 with a code, never INTERNAL, within a time bound, with
// output in proportion to its input; the whole campaign within a memory
// bound. TRTX_FUZZ_MUTANTS (default 2000) and TRTX_FUZZ_SEED (default 19)
// widen or replay it: `TRTX_FUZZ_SEED=7 TRTX_FUZZ_MUTANTS=20000 npx vitest
// run test/fuzz.test.ts`.
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const MUTANTS = Number(process.env.TRTX_FUZZ_MUTANTS ?? 2000);
const SEED = Number(process.env.TRTX_FUZZ_SEED ?? 19);
/** The child's V8 heap; a decoding bound that failed would exhaust it. */
const HEAP_MIB = 384;

describe('mutation fuzzing', () => {
  it(`${MUTANTS} mutants (seed ${SEED}): exit 0/1/2 with a code, no INTERNAL, bounded time, output and memory`, async () => {
    const r = await execa(
      process.execPath,
      [`--max-old-space-size=${HEAP_MIB}`, '--import', 'tsx', 'test/helpers/fuzz-run.ts', String(SEED), String(MUTANTS)],
      {
        cwd: ROOT,
        reject: false,
        env: { NO_COLOR: '1' },
        timeout: Math.max(120_000, MUTANTS * 100),
      },
    );
    expect(r.exitCode, r.stderr.slice(-2000)).toBe(0);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
      count: number;
      ms: number;
      maxRssMiB: number;
      findings: { mutant: number; command: string; problem: string; seed: string; kind: string }[];
      codes: Record<string, number>;
    };
    const replay = (f: (typeof result.findings)[0]) =>
      `mutant ${f.mutant} (${f.kind} of ${f.seed}, replay: mutant(${SEED}, ${f.mutant}, fuzzSeeds())): ${f.command}: ${f.problem}`;
    expect(result.findings.map(replay)).toEqual([]);
    expect(result.count).toBe(MUTANTS);
    expect(result.maxRssMiB).toBeLessThan(HEAP_MIB + 256);
    // The campaign reaches past the readers: sound programs, container refusals and check findings all occur.
    const seen = Object.keys(result.codes);
    expect(result.codes.ok).toBeGreaterThan(MUTANTS / 10);
    expect(seen.some((c) => c.startsWith('PTE_'))).toBe(true);
    expect(seen.filter((c) => c !== 'ok').length).toBeGreaterThan(10);
  }, 600_000);
});
