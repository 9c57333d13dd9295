// Weight streaming on ATen's kernels (issue 40): with a budget below an
// engine's weights, the runner keeps weights resident up to the budget and
// copies the rest in at every execute, and verify shows what it counted
// beside the spec's arithmetic; without one, nothing streams. The program is
// a zoo model exported the user's way (the zoo is built on first use; it
// fails, never skips).
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { trtx } from '../scripts/zoo-steps.js';
import type { Zoo } from '../scripts/zoo-build.js';
import type { VerifyResult } from '../src/verify/result.js';
import { tempDir } from './helpers/temp.js';
import { ZOO_TIMEOUT_MS, realZoo } from './helpers/zoo.js';

type Budget = VerifyResult['budgets'][number];
const MIB = 1 << 20;

describe('weight streaming on ATen kernels (the qwen2-ci zoo model, 40 MB of float32 weights)', () => {
  let zoo: Zoo;
  let work: string;
  beforeAll(async () => {
    zoo = await realZoo();
    work = tempDir('engine-streaming');
    // --budget at export builds the engine for streaming (weight_streaming), as the user's line does.
    const exported = await trtx(
      ['export', join(zoo.dir, 'qwen2-ci.pt2'), '--engine', 'reference', '--budget', '8GiB', '-o', 'q.pte'],
      work,
    );
    expect(exported.exitCode, exported.stderr).toBe(0);
  }, ZOO_TIMEOUT_MS);

  const verify = async (...args: string[]) => {
    const r = await trtx(['verify', '--json', '--caller-stream', 'off', '--steps', '3', ...args, 'q.pte'], work);
    const json = JSON.parse(r.stdout) as { ok: boolean; budgets: Budget[] };
    return { r, json, budget: json.budgets[0] };
  };

  it(
    'a 4 MiB budget keeps at most 4 MiB resident and copies the rest in at every execute, counted by the runner, and the outputs still match eager',
    { timeout: 300_000 },
    async () => {
      const { r, json, budget } = await verify('--budget', '4MiB');
      expect(r.exitCode, r.stdout + r.stderr).toBe(0);
      expect(json.ok).toBe(true);
      expect(budget?.kernels).toBe('aten-cpu');
      const m = budget?.measured;
      expect(m, 'the runner reported no weight placement').toBeTruthy();
      if (!m || !budget?.streamable_weight_bytes) return;
      const total = Number(budget.streamable_weight_bytes);
      const resident = Number(m.resident_bytes);
      const perExecute = Number(m.streamed_bytes_per_execute);
      expect(resident).toBeGreaterThan(0);
      expect(resident).toBeLessThanOrEqual(4 * MIB);
      // Every weight is either resident or streamed (a tied weight read twice streams twice).
      expect(perExecute).toBeGreaterThanOrEqual(total - resident);
      expect(Number(m.window_bytes)).toBeGreaterThan(0);
      expect(Number(m.window_bytes)).toBeLessThan(total);
      // Counted, not computed: the bytes copied over the run's executes.
      expect(m.executes).toBe(3);
      expect(Number(m.streamed_bytes)).toBe(3 * perExecute);
      // The spec's arithmetic beside it: min(budget, weights) resident.
      expect(Number(budget.resident_bytes)).toBe(4 * MIB);
      expect(r.stderr).toBe('');
    },
  );

  it('without a budget every weight stays resident and nothing is copied', { timeout: 300_000 }, async () => {
    const { r, budget } = await verify();
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(budget?.measured).toMatchObject({ streamed_bytes_per_execute: '0', streamed_bytes: '0', window_bytes: '0' });
    expect(budget?.measured?.resident_bytes).toBe(budget?.streamable_weight_bytes);
  });

  it('the text says what streaming copied beside the spec, and which kernels ran', { timeout: 300_000 }, async () => {
    const r = await trtx(['verify', '--caller-stream', 'off', '--steps', '2', '--budget', '4MiB', 'q.pte'], work);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/engines computed by ATen's CPU kernels/);
    expect(r.stdout).toMatch(
      /measured: 4(\.00)? MiB resident|measured: [0-9.]+ [KM]iB resident, [0-9.]+ MiB copied in per execute through a [0-9.]+ [KM]iB window \([0-9.]+ MiB over 2 executes\)/,
    );
    // verify talks: the plan first, on stderr.
    expect(r.stderr).toMatch(/verify plan: 2 or 3 runs of 2 steps of forward: as-is, stream off; as-is, stream off, fresh caches/);
  });
});
