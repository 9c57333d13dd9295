// trtx verify end to end on the CPU runner: the staged KV decoder against its
// derived zero-copy twin, and the refusals.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder, multiEngine, trtSingle } from '../src/examples/catalogue.js';
import { verifyProgram } from '../src/verify/verify.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';
import { corpusPath } from './helpers/corpus.js';

const dir = tempDir('verify');

describe('trtx verify', () => {
  it('proves a staged KV decoder and its zero-copy twin agree step by step', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const file = join(dir, 'kv-staged.pte');
    await writeFixture(file, kvDecoder());
    // As an application must: the zero-copy caches are initialised after load.
    const r = await verifyProgram(file, { zeroCopyKv: true, steps: 4, initDeviceBuffers: true, runner: await testRunner() });
    expect(r.mode).toBe('staged-vs-zero-copy');
    expect(r.device?.kind).toBe('cpu');
    expect(r.caches.length).toBeGreaterThan(0);
    expect(r.assertions.filter((a) => !a.ok)).toEqual([]);
    const names = r.assertions.map((a) => a.name).join('\n');
    expect(names).toMatch(/identical at every step: staged \(stream off\) vs zero-copy \(stream on\)/);
    expect(names).toMatch(/every cache changes at every step: zero-copy \(stream on\)/);
    expect(names).toMatch(/persistent vs fresh/);
    const staged = r.runs.find((x) => x.variant === 'staged')!.staging[0];
    const zc = r.runs.find((x) => x.variant === 'zero-copy')!.staging[0];
    expect(zc.h2d_bytes + zc.d2h_bytes).toBeLessThan(staged.h2d_bytes + staged.d2h_bytes);
    expect(r.ok).toBe(true);
    // The check ran first and found only what the deployment must provide.
    expect(r.check.refused).toBe(false);
    expect(r.check.summary.errors).toBe(0);
    expect(r.memory).toMatchObject({
      pool: { mode: 'unavailable' },
      scratch: { mode: 'private' },
      device_arenas: { allocator: 'host', fill: 'poison' },
    });
    expect(r.runs.every((x) => x.init_device_buffers)).toBe(true);
  });

  it('passes --shared-scratch and --cold-pool to every run and reports the memory section', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const file = join(dir, 'multi.pte');
    await writeFixture(file, multiEngine(3));
    const r = await verifyProgram(file, { steps: 2, callerStream: 'off', sharedScratch: true, coldPool: true, runner: await testRunner() });
    expect(r.ok).toBe(true);
    expect(r.options).toMatchObject({ shared_scratch: true, cold_pool: true, arena_fill: 'poison' });
    expect(r.memory!.scratch).toMatchObject({ mode: 'shared', peak_buffers: 1 });
    expect(r.memory!.pool.api_calls).toBe(0);
  });

  it(
    'runs a program with no aliased cache as it is under --zero-copy-kv (nothing to make zero-copy)',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const file = join(dir, 'single.pte');
      await writeFixture(file, trtSingle());
      const r = await verifyProgram(file, { zeroCopyKv: true, steps: 2, callerStream: 'off', runner: await testRunner() });
      expect(r.mode).toBe('as-is');
      expect(r.caches).toEqual([]);
      expect(r.ok).toBe(true);
      expect(r.notes[0]).toMatch(/^no KV cache to make zero-copy: no TensorRT delegate declares a kv_cache_update alias/);
      // --strict: the same program is refused, as before.
      await expect(verifyProgram(file, { zeroCopyKv: true, strict: true, runner: await testRunner() })).rejects.toMatchObject({
        code: 'ZC_REWRITE_NO_ALIASED_CACHE',
      });
    },
  );

  it('reports a real TensorRT plan as not executable here, as an environment limit', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const spec = trtSingle();
    const d = spec.methods[0].delegates[0] as { blob: { engine: unknown } };
    d.blob.engine = new Uint8Array([0x66, 0x74, 0x72, 0x74, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const file = join(dir, 'plan.pte');
    await writeFixture(file, spec);
    await expect(verifyProgram(file, { runner: await testRunner() })).rejects.toMatchObject({
      code: 'VERIFY_TENSORRT_PLAN',
      kind: 'usage',
    });
  });

  it(
    'reports an operator the runner has no kernel for as an environment result, like a missing backend',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      // ExecuTorch's own program with cortex_m operators (../shared/pte-corpus).
      await expect(verifyProgram(corpusPath('keyword-spotting-cortex-m'), { runner: await testRunner() })).rejects.toMatchObject({
        code: 'VERIFY_KERNEL_MISSING',
        kind: 'usage',
      });
    },
  );

  it('needs at least two steps', async () => {
    await expect(verifyProgram(join(dir, 'x.pte'), { steps: 1 })).rejects.toMatchObject({ code: 'VERIFY_STEPS' });
  });
});
