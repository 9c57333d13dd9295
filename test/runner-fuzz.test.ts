// The native runner fuzzed under AddressSanitizer and UBSan. First the
// shapes that crashed ExecuTorch inside the runner (test/helpers/
// hostile-seeds.ts: an op_index of -1, value indices past the values, list
// lengths past the buffer, huge planned sizes, ...), each as it is: the
// runner's own validation refuses every one before ExecuTorch reads it, in
// both verification modes. Then a seeded campaign of mutants of those
// shapes and of every fixture and corpus program (test/helpers/fuzz.ts)
// through `trtx-runner run` on the CPU in both modes
// (test/helpers/runner-fuzz.ts): every run must end in the runner's
// documented exit codes (0, 1, 3) with a report that agrees, within the time
// bound, with no sanitizer report and no crash signal, inside ExecuTorch or
// not.
//
// CI runs it on the ASan+UBSan build .ci/run makes (TRTX_RUNNER_BIN); without
// one the test builds its own. TRTX_RUNNER_FUZZ_MUTANTS (default 300) and
// TRTX_RUNNER_FUZZ_SEED (default 19) widen or replay it:
//   TRTX_RUNNER_FUZZ_SEED=7 TRTX_RUNNER_FUZZ_MUTANTS=5000 npx vitest run test/runner-fuzz.test.ts
import { beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostileSeeds } from './helpers/hostile-seeds.js';
import { runCli } from './helpers/cli.js';
import {
  DEFAULT_ARGS,
  fuzzRunner,
  isFinding,
  RUNNER_MS,
  runRunnerOn,
  VERIFICATIONS,
  type RunnerMutantResult,
} from './helpers/runner-fuzz.js';
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

describe('the shapes that crashed ExecuTorch are refused before it reads the program, in both verification modes', () => {
  const cases = hostileSeeds().flatMap((seed) => VERIFICATIONS.map((v) => [seed.name, v, seed] as const));
  it.each(cases)(
    '%s, --verification %s',
    async (_name, verification, seed) => {
      const file = join(dir, `${seed.name.replace(/[^a-z0-9-]/gi, '_')}.pte`);
      writeFileSync(file, seed.bytes);
      const run = await runRunnerOn(runner, file, dir, [...DEFAULT_ARGS, '--verification', verification]);
      expect(run.crashed, run.stderr).toBe(false);
      expect(run.exit, run.stderr).toBe(seed.code === 'PlannedMemoryLimit' ? 3 : 1);
      const error = run.report!.errors[0];
      expect(error.code).toBe(seed.code);
      // The refusal names the trtx check code that refuses the same file.
      expect(error.message).toMatch(seed.check ? `trtx check: ${seed.check})` : /--max-planned-bytes/);
      if (seed.check) expect((await runCli(['--quiet', 'check', file])).code).toBe(1);
    },
    60_000,
  );
});

describe('the runner under hostile input', () => {
  it('runs with AddressSanitizer and UndefinedBehaviorSanitizer linked in', () => {
    expect(isSanitized(runner), runner).toBe(true);
  });

  it(`${MUTANTS} mutants (seed ${SEED}), each in both verification modes: documented exit codes, a report, no sanitizer report, no crash, at most ${RUNNER_MS / 1000} s each`, async () => {
    const results = await fuzzRunner({ runner, seed: SEED, count: MUTANTS, dir });
    const replay = (r: RunnerMutantResult) =>
      `mutant ${r.mutant} (${r.kind} of ${r.seed}, --verification ${r.verification}; replay: TRTX_RUNNER_FUZZ_SEED=${SEED} TRTX_RUNNER_FUZZ_MUTANTS=${r.mutant + 1}): ${r.problem}; check ${r.checkExit} ${r.checkCode ?? ''}\n${r.crash ?? ''}`;
    expect(results.filter(isFinding).map(replay)).toEqual([]);
    expect(results).toHaveLength(MUTANTS * VERIFICATIONS.length);

    // The campaign reaches past the loader: programs run, and the runtime and the plugins refuse others.
    const codes = new Set(results.map((r) => r.runnerCode));
    expect(results.filter((r) => r.runnerCode === 'ok').length).toBeGreaterThan(MUTANTS / 20);
    expect(codes).toContain('InvalidProgram');
    expect([...codes].some((c) => c?.startsWith('TRT_'))).toBe(true);
    expect(codes.size).toBeGreaterThan(8);
  }, 600_000);
});
