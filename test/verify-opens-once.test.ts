// verify as values (issue 42): one verify opens each program file once for
// the whole run (the check, the buffer naming and the state roles all read
// it through one open), reads what it makes itself (the derived zero-copy
// twin, the copies naming unnamed buffers) from memory, and writes its twin
// into its private folder without the public write path's writer lock (a
// flock child) or stale-temp sweep. Opens and locks are counted by wrapping
// the modules that do them.
import { describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { runPipeline } from '../src/pipeline/run.js';
import type { Program } from '../src/pte/model.js';
import { verifyProgram } from '../src/verify/verify.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { rewrite } from './helpers/diff-files.js';
import { tempDir } from './helpers/temp.js';

const calls = vi.hoisted(() => ({ opened: [] as string[], locked: [] as string[], swept: [] as string[] }));

vi.mock('../src/pte/open.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/pte/open.js')>();
  return {
    ...real,
    openPte: (path: string, opts?: Parameters<typeof real.openPte>[1]) => (calls.opened.push(path), real.openPte(path, opts)),
    withPte: <T>(path: string, fn: Parameters<typeof real.withPte<T>>[1], opts?: Parameters<typeof real.withPte>[2]) => (
      calls.opened.push(path),
      real.withPte(path, fn, opts)
    ),
  };
});

vi.mock('../src/util/file-lock.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/util/file-lock.js')>();
  return {
    ...real,
    lockTarget: (path: string, opts: Parameters<typeof real.lockTarget>[1]) => (calls.locked.push(path), real.lockTarget(path, opts)),
  };
});

vi.mock('../src/util/stale-temps.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/util/stale-temps.js')>();
  return {
    ...real,
    sweepStaleTemps: (owners: readonly string[]) => (calls.swept.push(...owners), real.sweepStaleTemps(owners)),
  };
});

function reset(): void {
  calls.opened.length = 0;
  calls.locked.length = 0;
  calls.swept.length = 0;
}

const dir = tempDir('verify-once');

describe('verify reads each program once and writes its twin privately', () => {
  it(
    'a staged program and its derived twin: the input opened once, the twin never, no lock, no sweep',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const file = join(dir, 'kv-staged.pte');
      await writeFixture(file, kvDecoder());
      const runner = await testRunner();
      reset();
      const r = await verifyProgram(file, { zeroCopyKv: true, steps: 2, callerStream: 'off', initDeviceBuffers: true, runner });
      expect(r.mode).toBe('staged-vs-zero-copy');
      expect(r.ok).toBe(true);
      expect(calls.locked).toEqual([]);
      expect(calls.swept).toEqual([]);
      expect(calls.opened).toEqual([file]);
    },
  );

  it('a given twin (--zero-copy-twin): it and the input each opened once', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const file = join(dir, 'kv-given.pte');
    const twin = join(dir, 'kv-given-twin.pte');
    await writeFixture(file, kvDecoder());
    await runPipeline(file, { request: { zeroCopyKv: {} }, output: { path: twin, command: 'test' } });
    const runner = await testRunner();
    reset();
    const r = await verifyProgram(file, {
      zeroCopyKv: true,
      zeroCopyTwin: twin,
      steps: 2,
      callerStream: 'off',
      initDeviceBuffers: true,
      runner,
    });
    expect(r.mode).toBe('staged-vs-zero-copy');
    expect(r.ok).toBe(true);
    expect(calls.opened.sort()).toEqual([file, twin].sort());
    expect(calls.locked).toEqual([]);
  });

  it(
    'a program without buffer names: its named copies are read from memory, the input still opened once',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const named = join(dir, 'kv-named.pte');
      await writeFixture(named, kvDecoder());
      const unname = (p: Program) => {
        for (const plan of p.executionPlan)
          for (const v of plan.values)
            if (v.type === 'Tensor' && v.tensor.extraTensorInfo) v.tensor.extraTensorInfo.fullyQualifiedName = null;
      };
      const file = await rewrite(named, join(dir, 'kv-unnamed.pte'), unname);
      const runner = await testRunner();
      reset();
      const r = await verifyProgram(file, { zeroCopyKv: true, steps: 2, callerStream: 'off', initDeviceBuffers: true, runner });
      expect(r.notes.join('\n')).toMatch(/the runner ran a copy naming them/);
      expect(r.ok).toBe(true);
      expect(calls.opened).toEqual([file]);
    },
  );
});
