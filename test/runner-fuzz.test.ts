// The native runner fuzzed under AddressSanitizer and UBSan: a seeded
// campaign of mutants of every fixture and corpus program
// (test/helpers/fuzz.ts) through `trtx-runner run` on the CPU
// (test/helpers/runner-fuzz.ts). Every run must end in the runner's
// documented exit codes (0, 1, 3) with a report that agrees, within the time
// bound, and with no sanitizer report and no crash signal, except a crash
// inside ExecuTorch itself on a program `trtx check` refuses: trtx never hands
// such a program to the runtime (verify checks first), and
// docs/reliability.md lists each one by shape.
//
// CI runs it on the ASan+UBSan build .ci/run makes (TRTX_RUNNER_BIN); without
// one the test builds its own. TRTX_RUNNER_FUZZ_MUTANTS (default 300) and
// TRTX_RUNNER_FUZZ_SEED (default 19) widen or replay it:
//   TRTX_RUNNER_FUZZ_SEED=7 TRTX_RUNNER_FUZZ_MUTANTS=5000 npx vitest run test/runner-fuzz.test.ts
import { beforeAll, describe, expect, it } from 'vitest';
import { fuzzRunner, isFinding, RUNNER_MS, type RunnerMutantResult } from './helpers/runner-fuzz.js';
import { BUILD_TIMEOUT_MS, isSanitized, sanitizedRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const MUTANTS = Number(process.env.TRTX_RUNNER_FUZZ_MUTANTS ?? 300);
const SEED = Number(process.env.TRTX_RUNNER_FUZZ_SEED ?? 19);

let runner = '';
let dir = '';
beforeAll(async () => {
  runner = await sanitizedRunner();
  dir = tempDir('runner-fuzz');
}, BUILD_TIMEOUT_MS);

describe('the runner under hostile input', () => {
  it('runs with AddressSanitizer and UndefinedBehaviorSanitizer linked in', () => {
    expect(isSanitized(runner), runner).toBe(true);
  });

  it(`${MUTANTS} mutants (seed ${SEED}): documented exit codes, a report, no sanitizer report, no crash, at most ${RUNNER_MS / 1000} s each`, async () => {
    const results = await fuzzRunner({ runner, seed: SEED, count: MUTANTS, dir });
    const replay = (r: RunnerMutantResult) =>
      `mutant ${r.mutant} (${r.kind} of ${r.seed}; replay: TRTX_RUNNER_FUZZ_SEED=${SEED} TRTX_RUNNER_FUZZ_MUTANTS=${r.mutant + 1}): ${r.problem}; check ${r.checkExit} ${r.checkCode ?? ''}\n${r.crash ?? ''}`;
    expect(results.filter(isFinding).map(replay)).toEqual([]);
    expect(results).toHaveLength(MUTANTS);

    // What is let through: ExecuTorch's own crashes, each on a program check refuses.
    const runtimeCrashes = results.filter((r) => r.problem !== null);
    for (const r of runtimeCrashes) {
      expect(r.insideExecutorch, replay(r)).toBe(true);
      expect(r.checkExit, replay(r)).toBe(1);
    }
    // The campaign reaches past the loader: programs run, and the runtime and the plugins refuse others.
    const codes = new Set(results.map((r) => r.runnerCode));
    expect(results.filter((r) => r.runnerCode === 'ok').length).toBeGreaterThan(MUTANTS / 20);
    expect(codes).toContain('InvalidProgram');
    expect([...codes].some((c) => c?.startsWith('TRT_'))).toBe(true);
    expect(codes.size).toBeGreaterThan(8);
  }, 600_000);
});
