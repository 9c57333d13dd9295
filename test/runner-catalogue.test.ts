// Every program of the fixture catalogue through the native runner on the
// CPU (seed-scale twins left out: same shapes, more bytes). Sound programs
// run; every malformed blob is refused with the same code the TypeScript
// codec gives; no program crashes the runner (in CI the binary is an
// AddressSanitizer build); and the broken programs a runtime cannot refuse
// show their fault in the digests, as `trtx verify` reads them.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { CATALOGUE, type CatalogueEntry } from '../src/examples/catalogue.js';
import { runRunner, type RunnerResult } from '../src/runner/run.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('runner-catalogue');

const entries = CATALOGUE.filter((e) => !e.file.includes('-seed-'));
const results = new Map<string, RunnerResult>();

/** Sound programs this runner cannot execute: a delegate of another backend. */
const OTHER_BACKEND = new Set(['trt-beside-cuda.pte']);

beforeAll(async () => {
  const runner = await testRunner();
  for (const e of entries) {
    const path = join(dir, e.file);
    await writeFixture(path, e.build());
    results.set(e.file, await runRunner(path, { runner, device: 'cpu', steps: 3 }));
  }
}, BUILD_TIMEOUT_MS);

const result = (e: CatalogueEntry) => results.get(e.file)!;

type Digests = { method: string; outputs: string[]; buffers: Record<string, string> }[];
function digests(r: RunnerResult): Digests {
  return r.report.methods.flatMap((m) =>
    m.steps.map((s) => ({
      method: m.name,
      outputs: s.outputs.map((o) => o.digest),
      buffers: Object.fromEntries(s.buffers.map((b) => [b.name, b.digest])),
    })),
  );
}
/** Buffers whose digest did not change from one step to the next. */
function unchanged(r: RunnerResult): string[] {
  const d = digests(r);
  const out: string[] = [];
  for (let i = 1; i < d.length; i++) {
    if (d[i].method !== d[i - 1].method) continue;
    for (const [name, digest] of Object.entries(d[i].buffers)) if (d[i - 1].buffers[name] === digest) out.push(name);
  }
  return [...new Set(out)];
}

describe('the fixture catalogue on the CPU', () => {
  it('covers the catalogue', () => {
    expect(entries.length).toBeGreaterThan(30);
    expect(results.size).toBe(entries.length);
  });

  it('runs every sound program (exit 0), except one that needs another backend', () => {
    for (const e of entries.filter((x) => x.expect?.sound !== false)) {
      const r = result(e);
      if (OTHER_BACKEND.has(e.file)) {
        // Not a failed program: it cannot run here.
        expect(r.exitCode, e.file).toBe(3);
        expect(r.report.errors[0].code, e.file).toBe('BackendMissing');
      } else {
        expect(r.exitCode, `${e.file}: ${r.stderr}`).toBe(0);
        expect(
          r.report.methods.every((m) => m.steps.length === 3),
          e.file,
        ).toBe(true);
      }
    }
  });

  it('refuses every malformed blob with the code the TypeScript codec gives', () => {
    const blobs = entries.filter((e) => e.expect?.code?.startsWith('TRT_'));
    expect(blobs.length).toBeGreaterThanOrEqual(18);
    for (const e of blobs) {
      const r = result(e);
      expect(r.exitCode, e.file).toBe(1);
      expect(
        r.report.errors.map((x) => x.code),
        e.file,
      ).toEqual([e.expect!.code]);
      expect(r.report.errors[0].location, e.file).toMatch(/\.delegates\[\d+\]\.blob\./);
    }
  });

  it('refuses the broken shapes a runtime can see, with a code and a location', () => {
    const refused: Record<string, string> = {
      'broken-arity.pte': 'DelegateArity',
      'broken-partial-elision.pte': 'DelegateArity',
      'broken-budget-spec.pte': 'CompileSpecInvalid',
      'broken-duplicate-spec-key.pte': 'CompileSpecInvalid',
      // The registered allocator refuses a device copy into host memory.
      'broken-host-planned-arena.pte': 'InvalidArgument',
      // ExecuTorch's _h2d_copy kernel refuses a device source.
      'broken-leftover-staging-copy.pte': 'InvalidArgument',
      'broken-copy-back-elided.pte': 'CompileSpecInvalid',
      // Torch-TensorRT would run the engine on the blob's device_id, away from its tensors.
      'broken-two-gpu-device-id-swapped.pte': 'DeviceMismatch',
    };
    for (const [file, code] of Object.entries(refused)) {
      const r = results.get(file);
      expect(r, file).toBeDefined();
      expect(r!.exitCode, file).toBe(1);
      expect(r!.report.errors[0].code, file).toBe(code);
      expect(r!.report.errors[0].location, file).not.toBe('');
    }
  });

  it('never crashes: every exit is 0, 1 or 3 (cannot run here) with a report', () => {
    for (const e of entries) expect([0, 1, 3], e.file).toContain(result(e).exitCode);
    expect(entries.filter((e) => result(e).exitCode === 3).map((e) => e.file)).toEqual([...OTHER_BACKEND]);
  });

  it("explains a kernel refusal with the runtime's own check", () => {
    const r = results.get('broken-leftover-staging-copy.pte')!;
    expect(r.report.errors[0].message).toMatch(/_h2d_copy: source tensor must be on CPU/);
  });

  it('shows a lost update and a write-back into a zero-copy cache as a buffer that stops changing', () => {
    expect(unchanged(results.get('broken-lost-update.pte')!)).toEqual(['conv_state']);
    expect(unchanged(results.get('broken-writeback-into-zero-copy-cache.pte')!)).toEqual(['layers.0.attn.k_cache']);
    expect(unchanged(results.get('mixed-conv-state-one-delegate-zero-copy.pte')!)).toEqual([]);
    expect(unchanged(results.get('kv-decode-zero-copy.pte')!)).toEqual([]);
  });

  it('runs the two-GPU program bit for bit as its one-GPU twin, staged and zero-copy, in both caller-stream modes', async () => {
    // As a correct application runs it: device-resident caches zeroed after load.
    const runner = await testRunner();
    const run = (file: string, o: { callerStream: boolean; sharedScratch?: boolean }) =>
      runRunner(join(dir, file), { runner, device: 'cpu', steps: 3, initDeviceBuffers: true, ...o });
    const twin = await run('kv-decode-two-engine-staged.pte', { callerStream: false });
    expect(twin.exitCode).toBe(0);
    const step = (r: RunnerResult) => r.report.methods.find((m) => m.name === 'decode')!.steps[0];
    for (const callerStream of [false, true]) {
      const oneGpu = await run('kv-decode-two-engine-zero-copy.pte', { callerStream });
      for (const file of ['kv-decode-two-gpu-staged.pte', 'kv-decode-two-gpu-zero-copy.pte']) {
        const r = await run(file, { callerStream });
        expect(r.exitCode, `${file}: ${r.stderr}`).toBe(0);
        expect(digests(r), file).toEqual(digests(twin));
        expect(unchanged(r), file).toEqual([]);
        const devices = r.report.methods.flatMap((m) => m.delegates.map((d) => d.target_device));
        expect(new Set(devices), file).toEqual(new Set(['cuda:0', 'cuda:1']));
      }
      expect(digests(oneGpu)).toEqual(digests(twin));
      // The hand-off goes through the host: one hidden state (8 float32) more each way per step than on one GPU.
      const two = step(await run('kv-decode-two-gpu-zero-copy.pte', { callerStream }));
      expect(two.h2d_bytes - step(oneGpu).h2d_bytes).toBe(32);
      expect(two.d2h_bytes - step(oneGpu).d2h_bytes).toBe(32);
    }
    // Shared scratch: one buffer per device, each its engines' largest need.
    const shared = await run('kv-decode-two-gpu-zero-copy.pte', { callerStream: true, sharedScratch: true });
    expect(digests(shared)).toEqual(digests(twin));
    const s = shared.report.memory.scratch;
    expect(s.peak_buffers).toBe(2);
    expect(s.devices.map((d) => d.device)).toEqual([0, 1]);
  });

  it('shows swapped caches as caches that differ from the sound twin', () => {
    const broken = digests(results.get('broken-swapped-caches.pte')!);
    const twin = digests(results.get('kv-decode-two-engine-zero-copy.pte')!);
    expect(broken.length).toBe(twin.length);
    expect(broken.map((d) => d.buffers)).not.toEqual(twin.map((d) => d.buffers));
  });
});
