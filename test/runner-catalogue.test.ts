// Every program of the fixture catalogue through the native runner on the
// CPU (seed-scale twins left out: same shapes, more bytes). Sound programs
// run; every malformed blob is refused with the same code the TypeScript
// codec gives; no program crashes the runner (in CI the binary is an
// AddressSanitizer build); and the broken programs a runtime cannot refuse
// show their fault in the digests, as `trtx verify` reads them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { CATALOGUE, type CatalogueEntry } from '../src/examples/catalogue.js';
import { runRunner, type RunnerResult } from '../src/runner/run.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';

const dir = mkdtempSync(join(tmpdir(), 'trtx-runner-catalogue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
    m.steps.map((s) => ({ method: m.name, outputs: s.outputs.map((o) => o.digest), buffers: Object.fromEntries(s.buffers.map((b) => [b.name, b.digest])) })),
  );
}
/** Buffers whose digest did not change from one step to the next. */
function unchanged(r: RunnerResult): string[] {
  const d = digests(r);
  const out: string[] = [];
  for (let i = 1; i < d.length; i++) {
    if (d[i]!.method !== d[i - 1]!.method) continue;
    for (const [name, digest] of Object.entries(d[i]!.buffers)) if (d[i - 1]!.buffers[name] === digest) out.push(name);
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
        expect(r.report.errors[0]!.code, e.file).toBe('BackendMissing');
      } else {
        expect(r.exitCode, `${e.file}: ${r.stderr}`).toBe(0);
        expect(r.report.methods.every((m) => m.steps.length === 3), e.file).toBe(true);
      }
    }
  });

  it('refuses every malformed blob with the code the TypeScript codec gives', () => {
    const blobs = entries.filter((e) => e.expect?.code?.startsWith('TRT_'));
    expect(blobs.length).toBeGreaterThanOrEqual(18);
    for (const e of blobs) {
      const r = result(e);
      expect(r.exitCode, e.file).toBe(1);
      expect(r.report.errors.map((x) => x.code), e.file).toEqual([e.expect!.code]);
      expect(r.report.errors[0]!.location, e.file).toMatch(/\.delegates\[\d+\]\.blob\./);
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
    };
    for (const [file, code] of Object.entries(refused)) {
      const r = results.get(file);
      expect(r, file).toBeDefined();
      expect(r!.exitCode, file).toBe(1);
      expect(r!.report.errors[0]!.code, file).toBe(code);
      expect(r!.report.errors[0]!.location, file).not.toBe('');
    }
  });

  it('never crashes: every exit is 0, 1 or 3 (cannot run here) with a report', () => {
    for (const e of entries) expect([0, 1, 3], e.file).toContain(result(e).exitCode);
    expect(entries.filter((e) => result(e).exitCode === 3).map((e) => e.file)).toEqual([...OTHER_BACKEND]);
  });

  it('explains a kernel refusal with the runtime\'s own check', () => {
    const r = results.get('broken-leftover-staging-copy.pte')!;
    expect(r.report.errors[0]!.message).toMatch(/_h2d_copy: source tensor must be on CPU/);
  });

  it('shows a lost update and a write-back into a zero-copy cache as a buffer that stops changing', () => {
    expect(unchanged(results.get('broken-lost-update.pte')!)).toEqual(['conv_state']);
    expect(unchanged(results.get('broken-writeback-into-zero-copy-cache.pte')!)).toEqual(['layers.0.attn.k_cache']);
    expect(unchanged(results.get('mixed-conv-state-one-delegate-zero-copy.pte')!)).toEqual([]);
    expect(unchanged(results.get('kv-decode-zero-copy.pte')!)).toEqual([]);
  });

  it('shows swapped caches as caches that differ from the sound twin', () => {
    const broken = digests(results.get('broken-swapped-caches.pte')!);
    const twin = digests(results.get('kv-decode-two-engine-zero-copy.pte')!);
    expect(broken.length).toBe(twin.length);
    expect(broken.map((d) => d.buffers)).not.toEqual(twin.map((d) => d.buffers));
  });
});
