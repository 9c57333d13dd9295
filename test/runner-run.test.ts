// The native runner on the fixture programs (CPU, the ExecuTorch runtime with
// trtx's TensorRTBackend and host stand-in allocator): the runtime contracts
// of docs/runtime-contracts.md as the report shows them. Staged and zero-copy give
// the same outputs and caches at every step in both caller-stream modes (the
// zero-copy caches initialised as an application must), every cache changes
// at every step, a persistent run differs from a fresh-cache run, syncs
// follow the caller-stream rules, budgets resolve per engine, what the real
// runtime refuses is refused, and the ExecuTorch corpus runs (or names what
// it cannot run).
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { renderBlob, writeFixture } from '../src/examples/builder.js';
import { cloneSpec, delegateOf, methodOf } from '../src/examples/broken.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { kvDecoder, type KvDecoderOptions } from '../src/examples/kv-decoder.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { runRunner, type RunRunnerOptions, type RunnerResult } from '../src/runner/run.js';
import type { RunnerReport } from '../src/runner/report.js';
import { isTrtxError } from '../src/util/errors.js';
import { corpusPath } from './helpers/corpus.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('runner-run');
let runner = '';

async function file(name: string, spec: ProgramSpec): Promise<string> {
  const path = join(dir, name);
  await writeFixture(path, spec);
  return path;
}

const run = (path: string, o: Omit<RunRunnerOptions, 'runner'> = {}): Promise<RunnerResult> =>
  runRunner(path, { runner, device: 'cpu', ...o });
/** A correct application: device-resident caches zeroed after each load. */
const runApp = (path: string, o: Omit<RunRunnerOptions, 'runner'> = {}) => run(path, { initDeviceBuffers: true, ...o });

/** Per method and step: output digests and buffer digests by name. */
function digests(r: RunnerReport) {
  return r.methods.flatMap((m) =>
    m.steps.map((s) => ({
      method: m.name,
      step: s.step,
      outputs: s.outputs.map((o) => o.digest),
      buffers: Object.fromEntries(s.buffers.map((b) => [b.name, b.digest])),
    })),
  );
}

const PAIRS: [string, KvDecoderOptions][] = [
  ['kv', {}],
  ['kv-two-engine', { kvEngines: 2 }],
  ['mixed-one', { convState: 'same-delegate', methods: ['decode'] }],
  ['mixed-split', { convState: 'own-delegate', methods: ['decode'] }],
];
const paths = new Map<string, { staged: string; zeroCopy: string }>();

beforeAll(async () => {
  runner = await testRunner();
  for (const [name, o] of PAIRS) {
    paths.set(name, {
      staged: await file(`${name}-staged.pte`, kvDecoder({ ...o, mode: 'staged' })),
      zeroCopy: await file(`${name}-zero-copy.pte`, kvDecoder({ ...o, mode: 'zero-copy' })),
    });
  }
}, BUILD_TIMEOUT_MS);

describe('staged vs zero-copy', () => {
  for (const [name] of PAIRS) {
    it(`${name}: identical outputs and caches at every step, with and without a caller stream`, async () => {
      const { staged, zeroCopy } = paths.get(name)!;
      const results: ReturnType<typeof digests>[] = [];
      for (const callerStream of [false, true]) {
        const a = await runApp(staged, { steps: 4, callerStream });
        const b = await runApp(zeroCopy, { steps: 4, callerStream });
        expect(a.exitCode, a.stderr).toBe(0);
        expect(b.exitCode, b.stderr).toBe(0);
        expect(digests(b.report)).toEqual(digests(a.report));
        results.push(digests(a.report));
      }
      expect(results[1]).toEqual(results[0]);
      // Every cache changes at every step, in every method.
      const steps = results[0];
      for (let i = 1; i < steps.length; i++) {
        if (steps[i].method !== steps[i - 1].method) continue;
        for (const [buffer, digest] of Object.entries(steps[i].buffers)) {
          expect(digest, `${steps[i].method} step ${i} ${buffer}`).not.toBe(steps[i - 1].buffers[buffer]);
        }
      }
    });
  }

  it('a persistent run differs from a fresh-cache run after the first step', async () => {
    const { zeroCopy } = paths.get('kv')!;
    const persistent = digests((await runApp(zeroCopy, { steps: 3, methods: ['decode'] })).report);
    const fresh = digests((await runApp(zeroCopy, { steps: 3, methods: ['decode'], freshState: true })).report);
    expect(fresh[0]).toEqual(persistent[0]);
    expect(fresh[1].outputs).not.toEqual(persistent[1].outputs);
    expect(fresh[2].buffers).not.toEqual(persistent[2].buffers);
  });

  it('reports the elision mode read from arity and the traffic it saves', async () => {
    const { staged, zeroCopy } = paths.get('kv')!;
    const a = (await run(staged, { methods: ['decode'] })).report.methods[0];
    const b = (await run(zeroCopy, { methods: ['decode'] })).report.methods[0];
    expect(a.delegates.map((d) => d.elision)).toEqual(['staged']);
    expect(b.delegates.map((d) => d.elision)).toEqual(['zero-copy']);
    expect(b.delegates[0].zero_copy_kv).toEqual(b.delegates[0].aliased_outputs);
    expect(a.delegates[0].zero_copy_kv).toBeNull();
    const cacheBytes = b.steps[0].buffers.reduce((n, x) => n + 4 * x.sizes.reduce((p, d) => p * d, 1), 0);
    expect(a.steps[0].h2d_bytes - b.steps[0].h2d_bytes).toBe(cacheBytes);
    expect(a.steps[0].d2h_bytes - b.steps[0].d2h_bytes).toBe(cacheBytes);
    expect(b.steps[0].buffers.every((x) => x.placement === 'device')).toBe(true);
    expect(a.steps[0].buffers.every((x) => x.placement === 'host')).toBe(true);
  });
});

describe('caller stream', () => {
  it('zero-copy under a caller stream skips the sync, waits on the next execute, and drains at teardown', async () => {
    const { zeroCopy, staged } = paths.get('kv')!;
    const z = (await run(zeroCopy, { steps: 3, methods: ['decode'], callerStream: true })).report.methods[0].delegates[0];
    expect(z).toMatchObject({ executes: 3, syncs_skipped: 3, syncs_performed: 0, waits: 2, drains: 1 });
    const off = (await run(zeroCopy, { steps: 3, methods: ['decode'], callerStream: false })).report.methods[0].delegates[0];
    expect(off).toMatchObject({ syncs_skipped: 0, syncs_performed: 3, waits: 0, drains: 0 });
    // A staged delegate has a pending reflect: it synchronizes whatever the stream.
    const s = (await run(staged, { steps: 3, methods: ['decode'], callerStream: true })).report.methods[0];
    expect(s.delegates[0]).toMatchObject({ syncs_skipped: 0, syncs_performed: 3, drains: 0 });
    expect(s.steps.every((st) => st.delegates[0].syncs_performed === 1 && st.delegates[0].d2d_bytes > 0)).toBe(true);
  });
});

describe('weight-streaming budget', () => {
  it('resolves per engine: spec, option over spec, clamp, and an engine that cannot stream', async () => {
    const path = await file('multi-engine.pte', multiEngine(3));
    const spec = (await run(path)).report.methods[0].delegates.map((d) => d.budget);
    expect(spec.map((b) => b.source)).toEqual(['spec', 'spec', 'spec']);
    expect(spec[0]).toMatchObject({ clamped: true, ignored: null, streaming: true });
    expect(spec[0].effective).toBe(spec[0].streamable_bytes);
    expect(spec[2]).toMatchObject({ streaming: false, effective: null });
    expect(spec[2].ignored).toMatch(/not built with weight streaming/);

    const option = (await run(path, { budget: 1024n })).report;
    expect(option.options.budget).toBe('1024');
    expect(option.methods[0].delegates.map((d) => [d.budget.source, d.budget.requested, d.budget.effective])).toEqual([
      ['option', '1024', '1024'],
      ['option', '1024', '1024'],
      ['option', '1024', null],
    ]);

    const automatic = (await run(await file('multi-engine-auto.pte', multiEngine(2, { budget: null })))).report;
    const b = automatic.methods[0].delegates[0].budget;
    expect(b).toMatchObject({ source: 'automatic', requested: null, clamped: false });
    expect(b.effective).toBe(b.streamable_bytes);
  });
});

describe('what the ExecuTorch runtime does, and the runner does not soften', () => {
  it('device arenas are not zeroed: a zero-copy cache read before it is written poisons the results', async () => {
    const { staged, zeroCopy } = paths.get('kv')!;
    const reference = digests((await runApp(staged, { steps: 2, methods: ['decode'] })).report);
    const poisoned = await run(zeroCopy, { steps: 2, methods: ['decode'] });
    expect(poisoned.exitCode, poisoned.stderr).toBe(0);
    const arenas = poisoned.report.memory.device_arenas;
    expect(arenas).toMatchObject({ allocator: 'host', fill: 'poison', init_device_buffers: false, zeroed_bytes: 0 });
    expect(arenas.filled_bytes).toBeGreaterThan(0);
    expect(poisoned.report.methods[0].initialised_buffers).toBe(0);
    // The caches start as 0xFF (NaN) and Attend sums over all of them.
    expect(digests(poisoned.report)[0].outputs).not.toEqual(reference[0].outputs);
    const initialised = await runApp(zeroCopy, { steps: 2, methods: ['decode'] });
    expect(initialised.report.methods[0].initialised_buffers).toBe(4);
    expect(initialised.report.memory.device_arenas.zeroed_bytes).toBeGreaterThan(0);
    expect(digests(initialised.report)).toEqual(reference);
  });

  it('initial state of a buffer planned in device memory does not load', async () => {
    const path = await file(
      'kv-initial-state-zero-copy.pte',
      kvDecoder({ mode: 'zero-copy', cacheInitialState: true, methods: ['decode'] }),
    );
    const r = await run(path, { initDeviceBuffers: true });
    expect(r.exitCode).toBe(1);
    expect(r.report.errors[0].code).toBe('DeviceInitialState');
    expect(r.report.errors[0].message).toMatch(/planned in a CUDA arena/);
    expect(r.report.methods[0].steps).toEqual([]);
    // Staged, the same initial state lives in a host arena and loads.
    const staged = await run(
      await file('kv-initial-state-staged.pte', kvDecoder({ mode: 'staged', cacheInitialState: true, methods: ['decode'] })),
    );
    expect(staged.exitCode, staged.stderr).toBe(0);
  });

  it("Module's share_memory_arenas refuses device arenas", async () => {
    const { staged, zeroCopy } = paths.get('kv')!;
    for (const path of [zeroCopy, staged]) {
      // Staged or not, a program around a CUDA delegate plans device arenas.
      const r = await run(path, { shareArenas: true, methods: ['decode'] });
      expect(r.exitCode).toBe(1);
      expect(r.report.options.share_arenas).toBe(true);
      expect(r.report.errors[0]).toMatchObject({ code: 'NotSupported' });
      expect(r.report.errors[0].message).toMatch(/share_memory_arenas/);
    }
    // Host arenas alone share.
    expect((await run(corpusPath('add'), { shareArenas: true })).exitCode).toBe(0);
  });

  it('the stock Torch-TensorRT runtime loads a zero-copy program and fails its first execute', async () => {
    const { staged, zeroCopy } = paths.get('kv')!;
    const r = await runApp(zeroCopy, { trtRuntime: 'stock', methods: ['decode'] });
    expect(r.exitCode).toBe(1);
    expect(r.report.errors[0].code).toBe('DelegateArity');
    expect(r.report.errors[0].message).toMatch(/expected at least 11 args/);
    expect(r.report.methods[0].delegates[0].zero_copy_kv).toBeNull();
    expect((await runApp(staged, { trtRuntime: 'stock', methods: ['decode'] })).exitCode).toBe(0);
  });

  it('a tensor tagged CUDA in a host arena is refused at its first device copy', async () => {
    const path = await file('host-planned.pte', catalogueEntry('broken-host-planned-arena.pte').build());
    const r = await run(path, { initDeviceBuffers: true });
    expect(r.exitCode).toBe(1);
    expect(r.report.errors[0].message).toMatch(/not device memory: a tensor tagged CUDA lives in a host arena/);
    expect(r.report.memory.device_arenas.refused_copies).toBeGreaterThan(0);
  });
});

describe('cannot run here (exit 3), not a failed program', () => {
  it('a real TensorRT plan is recognised and not run', async () => {
    const spec = cloneSpec(trtSingle());
    const d = delegateOf(methodOf(spec, 'forward'), 'trt');
    const bytes = renderBlob(d.blob).slice();
    const engineOffset = new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true);
    bytes.set(new TextEncoder().encode('ftrt'), engineOffset);
    d.blob = { kind: 'bytes', bytes };
    const r = await run(await file('real-plan.pte', spec));
    expect(r.exitCode).toBe(3);
    expect(r.report.errors.map((e) => e.code)).toEqual(['EngineNotExecutable']);
    expect(r.report.errors[0].location).toBe('forward.delegates[0].engine');
  });

  it('a backend the runner does not have', async () => {
    const r = await run(await file('beside-cuda.pte', catalogueEntry('trt-beside-cuda.pte').build()));
    expect(r.exitCode).toBe(3);
    expect(r.report.errors[0]).toMatchObject({ code: 'BackendMissing' });
    expect(r.report.errors[0].message).toMatch(/CudaBackend/);
  });

  it('--device cuda without CUDA', async () => {
    const r = await run(paths.get('kv')!.staged, { device: 'cuda' });
    expect(r.exitCode).toBe(3);
    expect(r.report.errors[0].code).toBe('DeviceUnavailable');
  });
});

describe('refusals', () => {
  it('a missing file is an error with a report (exit 1)', async () => {
    const r = await run(join(dir, 'missing.pte'));
    expect(r.exitCode).toBe(1);
    expect(r.report.errors[0].code).toBe('AccessFailed');
    expect(r.report.program.methods).toEqual([]);
  });

  it('a usage error is a TrtxError, not a report', async () => {
    const err = await run(paths.get('kv')!.staged, { steps: 0 }).catch((e) => e);
    expect(isTrtxError(err) && err.code).toBe('RUNNER_USAGE');
  });
});

describe('the ExecuTorch corpus', () => {
  it('runs add.pte with the documented inputs', async () => {
    const r = await run(corpusPath('add'), { steps: 2 });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.report.runner.executorch).toMatch(/^1\.5\./);
    // Both inputs are float32[1] with element 0 = ((7 s) mod 29 - 14) / 16; add.out gives their sum.
    for (const s of [0, 1]) {
      const v = (((7 * s) % 29) - 14) / 16;
      const out = new Float32Array([v + v]);
      expect(r.report.methods[0].steps[s].outputs[0].digest).toBe(fnv1a64(new Uint8Array(out.buffer)));
    }
  });

  it('runs the program with a constant segment', async () => {
    const r = await run(corpusPath('add-segment'));
    expect(r.exitCode, r.stderr).toBe(0);
  });

  it('refuses, as ExecuTorch 1.5 does, a program whose constants use the deprecated inline constant_buffer', async () => {
    const r = await run(corpusPath('module-linear-inline-constants'));
    expect(r.exitCode).toBe(1);
    expect(r.report.errors[0]).toMatchObject({ code: 'InvalidProgram' });
    expect(r.report.errors[0].message).toMatch(/constant_buffer path/);
  });

  it('names the operators it has no kernel for, as an environment result (exit 3), like a missing backend', async () => {
    const r = await run(corpusPath('keyword-spotting-cortex-m'));
    expect(r.exitCode).toBe(3);
    expect(r.report.errors[0].code).toBe('OperatorMissing');
    expect(r.report.errors[0].message).toContain('no kernel for cortex_m::quantize_per_tensor.out');
    expect(r.report.errors[0].message).toContain('cortex_m::quantized_conv2d.out');
  });
});

function fnv1a64(bytes: Uint8Array): string {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}
