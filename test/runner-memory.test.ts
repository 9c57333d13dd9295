// The runner's device memory through its report (CPU build): --shared-scratch
// gives the same outputs and caches as private scratch while holding one
// buffer per device sized to the largest engine; the buffer outlives method
// reloads; the report's memory section passes the JSON schema; and with no
// device pool (a CPU run) the pool is "unavailable" with no pool call, under
// --cold-pool too, never "failed".
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { multiEngine } from '../src/examples/programs.js';
import type { RunnerReport } from '../src/runner/report.js';
import { runRunner, type RunRunnerOptions } from '../src/runner/run.js';
import { validate } from './helpers/json-schema.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const SCHEMA = JSON.parse(readFileSync(new URL('../schemas/runner-report.schema.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;
const dir = tempDir('runner-memory');

let runner = '';
let multi = '';
let kvZeroCopy = '';
const MiB = 1024 * 1024;

beforeAll(async () => {
  runner = await testRunner();
  multi = join(dir, 'multi-engine.pte');
  await writeFixture(multi, multiEngine(3));
  kvZeroCopy = join(dir, 'kv-two-engine-zero-copy.pte');
  await writeFixture(kvZeroCopy, kvDecoder({ kvEngines: 2, mode: 'zero-copy' }));
}, BUILD_TIMEOUT_MS);

async function run(path: string, o: Omit<RunRunnerOptions, 'runner'> = {}): Promise<RunnerReport> {
  const r = await runRunner(path, { runner, device: 'cpu', ...o });
  expect(r.exitCode, r.stderr).toBe(0);
  expect(validate(SCHEMA, r.report)).toEqual([]);
  return r.report;
}

function digests(r: RunnerReport) {
  return r.methods.map((m) => m.steps.map((s) => [s.outputs.map((o) => o.digest), s.buffers.map((b) => `${b.name}=${b.digest}`)]));
}

describe('--shared-scratch', () => {
  it('multi-engine: the same outputs as private scratch, from one buffer sized to the largest engine', async () => {
    for (const callerStream of [false, true]) {
      const priv = await run(multi, { steps: 4, callerStream });
      const shared = await run(multi, { steps: 4, callerStream, sharedScratch: true });
      expect(digests(shared)).toEqual(digests(priv));
      expect(shared.options.shared_scratch).toBe(true);

      // multiEngine(3) asks for 1, 2 and 3 MiB of scratch.
      const needs = priv.methods[0].delegates.map((d) => d.scratch_bytes);
      expect(needs).toEqual([1 * MiB, 2 * MiB, 3 * MiB]);
      expect(priv.memory.scratch).toMatchObject({ mode: 'private', peak_bytes: 6 * MiB, peak_buffers: 3, devices: [] });
      expect(priv.methods[0].delegates.map((d) => d.scratch_capacity)).toEqual(needs);

      const s = shared.memory.scratch;
      expect(s).toMatchObject({
        mode: 'shared',
        reclaim: true,
        warmup_executes: 3,
        shrink_after: 3,
        peak_bytes: 3 * MiB,
        peak_buffers: 1,
        handoff_failures: 0,
      });
      expect(s.devices).toEqual([{ device: 0, capacity: 3 * MiB, peak_capacity: 3 * MiB, floor: 3 * MiB, executes: 12 }]);
      expect(shared.methods[0].delegates.map((d) => d.scratch_capacity)).toEqual([3 * MiB, 3 * MiB, 3 * MiB]);
      // Grown within the first step; a steady program never shrinks below its floor.
      expect(s.capacity_events.map((e) => [e.execute_index, e.from, e.to, e.reason])).toEqual([
        [0, 0, 1 * MiB, 'grow'],
        [1, 1 * MiB, 2 * MiB, 'grow'],
        [2, 2 * MiB, 3 * MiB, 'grow'],
      ]);
    }
  });

  it('zero-copy KV in two engines under a caller stream: caches and outputs identical to private scratch', async () => {
    const priv = await run(kvZeroCopy, { steps: 3, callerStream: true });
    const shared = await run(kvZeroCopy, { steps: 3, callerStream: true, sharedScratch: true });
    expect(digests(shared)).toEqual(digests(priv));
    expect(shared.memory.scratch.devices).toHaveLength(1);
    expect(shared.memory.scratch.peak_buffers).toBe(1);
    const delegates = shared.methods.flatMap((m) => m.delegates);
    expect(delegates.length).toBeGreaterThan(2);
    expect(shared.memory.scratch.peak_bytes).toBe(Math.max(...priv.methods.flatMap((m) => m.delegates.map((d) => d.scratch_bytes))));
    expect(priv.memory.scratch.peak_buffers).toBe(delegates.length);
  });

  it('keeps the device buffer across --fresh-state reloads, where private scratch is reallocated', async () => {
    const shared = await run(multi, { steps: 3, freshState: true, sharedScratch: true });
    expect(shared.memory.scratch.capacity_events).toHaveLength(3);
    expect(shared.memory.scratch.devices[0].executes).toBe(9);
    const priv = await run(multi, { steps: 3, freshState: true });
    expect(digests(shared)).toEqual(digests(priv));
    expect(priv.memory.scratch.peak_bytes).toBe(6 * MiB);
  });
});

describe('the device pool on a CPU run', () => {
  it('is unavailable, not failed, and makes no pool call, with and without --cold-pool', async () => {
    for (const coldPool of [false, true]) {
      const r = await run(multi, { coldPool });
      expect(r.options.cold_pool).toBe(coldPool);
      expect(r.memory.pool.mode).toBe('unavailable');
      expect(r.memory.pool.unavailable_reason).toMatch(/without CUDA|on the CPU/);
      expect(r.memory.pool.api_calls).toBe(0);
      expect(r.memory.pool.devices).toEqual([]);
    }
  });
});

describe('step time', () => {
  it('is reported for every step of every method', async () => {
    const r = await run(kvZeroCopy, { steps: 2 });
    const times = r.methods.flatMap((m) => m.steps.map((s) => s.step_us));
    expect(times).toHaveLength(2 * r.methods.length);
    for (const t of times) expect(t).toBeGreaterThan(0);
  });
});
