// `trtx rewrite --zero-copy-kv [--share-cache]` and `trtx check
// --zero-copy-kv` on files: what they print and write, the no-op second
// run, one rewrite with --budget, the refusals and their exit codes.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { withPte } from '../src/pte/open.js';
import { stagingBytes } from '../src/graph/staging.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { runCli } from './helpers/cli.js';
import { sharedLayout, staged } from './helpers/zero-copy-shapes.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('zero-copy');
let n = 0;
async function fixture(spec: ProgramSpec): Promise<string> {
  const path = join(dir, `${n++}.pte`);
  await writeFixture(path, spec);
  return path;
}
const out = () => join(dir, `${n++}.out.pte`);

// The cases go at once (runCli's runs share nothing): each reads the shared inputs or writes files of its own names.
describe.concurrent('trtx rewrite --zero-copy-kv', () => {
  it('un-stages the caches, says what it did, and writes a program that passes check --zero-copy-kv', async () => {
    const input = await fixture(catalogueEntry('mixed-conv-state-one-delegate-staged.pte').build());
    const o = out();
    const r = await runCli(['rewrite', input, '-o', o, '--zero-copy-kv']);
    // Only what a zero-copy program needs from its runtime is said (a warning), nothing else.
    for (const line of r.stderr.trimEnd().split('\n'))
      expect(line).toMatch(/trtx warn: RT_(DEVICE_STATE_UNINITIALIZED|NEEDS_ZERO_COPY_TRT): /);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      '  decode > delegate 0 (TensorRTBackend): stamped zero_copy_kv (output0, output1, output2, output3); fed its caches directly (layers.0.attn.k_cache (%0), layers.0.attn.v_cache (%1), layers.1.attn.k_cache (%2), layers.1.attn.v_cache (%3))',
    );
    expect(lines[1]).toMatch(
      /^ {2}decode: 4 caches \(1 KiB\) moved to the device; staging per execution .* -> .*; removed 12 instructions, 16 values, 0 operators$/,
    );
    expect(lines[lines.length - 1]).toMatch(new RegExp(`^wrote ${o} `));
    const check = await runCli(['check', o, '--zero-copy-kv', '--json']);
    expect(check.code).toBe(0);
    const report = JSON.parse(check.stdout);
    expect(report).toMatchObject({ ok: true, zero_copy_kv: true });
    // What a deployment must provide is named, as warnings: caches to initialise, the zero-copy runtime.
    expect(report.diagnostics.map((d: { severity: string; code: string }) => `${d.severity} ${d.code}`).sort()).toEqual([
      'warning RT_DEVICE_STATE_UNINITIALIZED',
      'warning RT_NEEDS_ZERO_COPY_TRT',
    ]);
    await withPte(o, (pte) => {
      const st = stagingBytes(pte.program.executionPlan[0]);
      expect(st.copies).toBe(5); // x, input_pos, conv_state in; logits, conv_state out
    });
  });

  it('a second run changes nothing and says the program is already zero-copy; in place it leaves the file untouched', async () => {
    const input = await fixture(staged());
    const first = out();
    expect((await runCli(['rewrite', input, '-o', first, '--zero-copy-kv'])).code).toBe(0);
    const second = out();
    const r = await runCli(['rewrite', first, '-o', second, '--zero-copy-kv']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'already zero-copy, nothing to un-stage: decode > delegate 0 (TensorRTBackend) elides output0, output1, output2, output3; prefill > delegate 0',
    );
    expect(Buffer.from(readFileSync(second)).equals(readFileSync(first))).toBe(true);
    const json = JSON.parse((await runCli(['rewrite', first, '--in-place', '--zero-copy-kv', '--json'])).stdout);
    expect(json).toMatchObject({
      mode: 'unchanged',
      changes: [],
      passes: [{ pass: 'zero-copy-kv', changed: false, details: { already_zero_copy: true } }],
    });
  });

  it('combines with --budget in one rewrite: one pass pipeline, one write', async () => {
    const input = await fixture(staged({ kvEngines: 2 }));
    const o = out();
    const r = await runCli(['rewrite', input, '-o', o, '--zero-copy-kv', '--budget', '8GiB', '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.passes.map((p: { pass: string; changed: boolean }) => [p.pass, p.changed])).toEqual([
      ['budget', true],
      ['zero-copy-kv', true],
    ]);
    expect(doc.mode).toBe('atomic');
    await withPte(o, (pte) => {
      for (const plan of pte.program.executionPlan) {
        for (const d of plan.delegates) {
          const { specs } = decodeCompileSpecs(d.compileSpecs);
          expect(specs.weightStreamingBudget).toBe(8n << 30n);
          expect(specs.zeroCopyKv).toEqual(['output0', 'output1']);
        }
      }
    });
  });

  it('rewrites in place when the smaller program fits before the segments', async () => {
    const input = await fixture(staged());
    const r = await runCli(['rewrite', input, '--in-place', '--zero-copy-kv', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).mode).toBe('in-place');
    expect((await runCli(['check', input, '--zero-copy-kv'])).code).toBe(0);
  });

  it('refuses with the code, the place and a hint (exit 1), and writes nothing', async () => {
    const input = await fixture(catalogueEntry('kv-writer-only-staged.pte').build());
    const o = out();
    const r = await runCli(['rewrite', input, '-o', o, '--zero-copy-kv']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: ZC_REWRITE_NO_OUTPUTS_LEFT: decode > delegate 0 \(TensorRTBackend\): every output of the engine/);
    expect(r.stderr).toContain('hint: ');
    expect(existsSync(o)).toBe(false);
  });

  it('leaves a program with no aliased cache as it is and says so; --strict refuses it', async () => {
    const input = await fixture(catalogueEntry('trt-single.pte').build());
    const o = out();
    const noted = await runCli(['rewrite', input, '-o', o, '--zero-copy-kv']);
    expect(noted.code).toBe(0);
    expect(noted.stdout).toMatch(
      /^ {2}no KV cache to make zero-copy: no TensorRT delegate declares a kv_cache_update alias \(1 TensorRT delegate\); the program is left as it is \(--strict refuses it\)$/m,
    );
    const json = await runCli(['rewrite', input, '-o', out(), '--zero-copy-kv', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).passes[0].details).toMatchObject({ no_kv_cache: true, already_zero_copy: false, rewritten: [] });
    const strict = await runCli(['rewrite', input, '-o', out(), '--zero-copy-kv', '--strict', '--json']);
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.stdout).error.code).toBe('ZC_REWRITE_NO_ALIASED_CACHE');
    expect((await runCli(['rewrite', input, '-o', out(), '--strict'])).code).toBe(2);
  });

  it('a cache the methods share needs --share-cache, which records the decision', async () => {
    const input = await fixture(sharedLayout(staged()));
    const refused = await runCli(['rewrite', input, '-o', out(), '--zero-copy-kv']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ZC_REWRITE_SHARED_METHODS');
    expect(refused.stderr).toContain('--share-cache');
    // ExecuTorch's Module cannot share device arenas between methods: the
    // rewrite is refused under its rules, and written for a runtime whose own
    // memory manager hands both methods the same device arena.
    const module = await runCli(['rewrite', input, '-o', out(), '--zero-copy-kv', '--share-cache']);
    expect(module.code).toBe(1);
    expect(module.stderr).toContain('RT_SHARED_DEVICE_ARENA');
    const o = out();
    const ok = await runCli(['rewrite', input, '-o', o, '--zero-copy-kv', '--share-cache', '--runtime', 'custom-memory']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(
      'shared_kv_cache (layers.0.attn.k_cache, layers.0.attn.v_cache, layers.1.attn.k_cache, layers.1.attn.v_cache)',
    );
    expect((await runCli(['check', o, '--zero-copy-kv', '--runtime', 'custom-memory'])).code).toBe(0);
    expect((await runCli(['check', o, '--zero-copy-kv'])).code).toBe(1);
  });

  it('--share-cache alone is a usage error (exit 2)', async () => {
    const r = await runCli(['rewrite', await fixture(staged()), '-o', out(), '--share-cache']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--share-cache goes with --zero-copy-kv');
  });
});

describe.concurrent('trtx check --zero-copy-kv', () => {
  it('fails a staged program (exit 1), naming each staged engine; passes it without the flag', async () => {
    const input = await fixture(staged());
    const r = await runCli(['check', input, '--zero-copy-kv', '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.diagnostics.map((d: { code: string; location: string }) => [d.code, d.location])).toEqual([
      ['ZC_NOT_ZERO_COPY', 'decode > delegate 0 (TensorRTBackend)'],
      ['ZC_NOT_ZERO_COPY', 'prefill > delegate 0 (TensorRTBackend)'],
    ]);
    expect((await runCli(['check', input])).code).toBe(0);
  });

  it("fails a broken zero-copy program with its rule's code", async () => {
    const r = await runCli(['check', await fixture(catalogueEntry('broken-swapped-caches.pte').build()), '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).diagnostics.map((d: { code: string }) => d.code)).toContain('ZC_SWAPPED_CACHE');
  });
});
