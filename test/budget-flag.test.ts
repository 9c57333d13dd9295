// --budget slips named before the work: `--budget 0` (export, rewrite,
// verify) warns that every weight streams and says where the automatic budget
// is (BUDGET_STREAMS_EVERYTHING); a decimal unit is said with its binary
// equivalent at the start of the command (BUDGET_DECIMAL_UNIT), before a
// long export; and export's summary names its check warnings by code.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { budgetWarnings } from '../src/cli/budget-flag.js';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder, multiEngine } from '../src/examples/catalogue.js';
import { DOUBLE_PYTHON, workspace } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('budget-flag');

describe('the --budget warnings', () => {
  it('--budget 0: every weight streams, and each command says where its automatic budget is', () => {
    const [rewrite] = budgetWarnings('0', 0n, 'rewrite');
    expect(rewrite).toBe(
      "BUDGET_STREAMS_EVERYTHING: --budget: 0 keeps no weight on the device: every weight streams in at every execute; for TensorRT's automatic budget (sized at load) use --clear-budget instead",
    );
    expect(budgetWarnings('0', 0n, 'export')[0]).toMatch(/leave --budget out \(or clear it later: trtx rewrite --clear-budget\)$/);
    expect(budgetWarnings('0B', 0n, 'verify')[0]).toMatch(
      /^BUDGET_STREAMS_EVERYTHING: .*leave --budget out; .*trtx rewrite --clear-budget/,
    );
  });

  it('a decimal unit: its bytes, its binary size and the binary flag; nothing for binary units and bytes', () => {
    expect(budgetWarnings('8GB', 8_000_000_000n, 'export')).toEqual([
      'BUDGET_DECIMAL_UNIT: --budget: 8GB is in decimal GB: 8000000000 bytes = 7.45 GiB; 8 GiB is --budget 8GiB',
    ]);
    expect(budgetWarnings('512 mb', 512_000_000n, 'rewrite')).toEqual([
      'BUDGET_DECIMAL_UNIT: --budget: 512 mb is in decimal mb: 512000000 bytes = 488.28 MiB; 512 MiB is --budget 512MiB',
    ]);
    // 1.3 GiB is not whole bytes: no binary flag to offer.
    expect(budgetWarnings('1.3GB', 1_300_000_000n, 'verify')).toEqual([
      'BUDGET_DECIMAL_UNIT: --budget: 1.3GB is in decimal GB: 1300000000 bytes = 1.21 GiB',
    ]);
    for (const text of ['8GiB', '8589934592', '1.5GiB']) expect(budgetWarnings(text, 1n, 'export')).toEqual([]);
  });
});

describe.concurrent('the commands', () => {
  it('rewrite --budget 0 warns before writing, and still writes', async () => {
    const input = join(dir, 'multi.pte');
    await writeFixture(input, multiEngine(3));
    const r = await runCli(['rewrite', input, '-o', join(dir, 'multi-0.pte'), '--budget', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n')[0]).toMatch(
      /trtx warn: BUDGET_STREAMS_EVERYTHING: --budget: 0 keeps no weight .* use --clear-budget instead$/,
    );
  });

  it('verify --budget 0 warns before it runs', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const input = join(dir, 'multi-verify.pte');
    await writeFixture(input, multiEngine(2));
    const r = await runCli(['verify', input, '--budget', '0', '--steps', '2', '--caller-stream', 'off'], {
      env: { TRTX_RUNNER_BIN: await testRunner() },
    });
    expect(r.output.split('\n')[0]).toMatch(
      /trtx warn: BUDGET_STREAMS_EVERYTHING: --budget: 0 keeps no weight .*trtx rewrite --clear-budget/,
    );
  });

  it(
    'export echoes a decimal --budget first, before the bridge runs, and names its warnings by code in the summary',
    { timeout: 60_000 },
    async () => {
      const ws = workspace();
      const program = join(ws.dir, 'exported-by-double.pte');
      await writeFixture(program, kvDecoder());
      const r = await runCli(
        ['export', ws.file('model.pt2'), '-o', join(ws.dir, 'model.pte'), '--budget', '8GB', '--python', DOUBLE_PYTHON],
        {
          env: { TRTX_DOUBLE_CALLS: ws.calls, TRTX_DOUBLE_PROGRAM: program },
        },
      );
      expect(r.code, r.output).toBe(0);
      const first = r.output.split('\n').find((l) => l.includes('trtx '));
      expect(first).toMatch(
        /trtx warn: BUDGET_DECIMAL_UNIT: --budget: 8GB is in decimal GB: 8000000000 bytes = 7\.45 GiB; 8 GiB is --budget 8GiB$/,
      );
      // The staged decoder's two engines, each with a budget: one warning, named.
      expect(r.stdout).toMatch(/^ {2}checks: 1 warning \(TRT_BUDGET_MULTI_ENGINE\)$/m);
      expect(r.stdout).not.toMatch(/warning\(s\)/);
    },
  );
});
