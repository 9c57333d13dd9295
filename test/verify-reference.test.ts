// trtx verify against eager PyTorch's recorded outputs, with a stand-in
// runner (a script that writes a valid report and the outputs file it is
// given), so the orchestration is tested without building the native runner:
// which runs get --inputs and --outputs, the comparison, the steps rule, and
// what text, --json and JUnit say.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFixture } from '../src/examples/builder.js';
import { cloneSpec, delegateOf, methodOf } from '../src/examples/broken.js';
import { kernelPartition } from '../fixtures/partition.js';
import { trtSingle } from '../src/examples/programs.js';
import { renderVerify } from '../src/cli/commands/verify.js';
import { toJunit } from '../src/report/junit.js';
import { encodeTensorFile } from '../src/runner/tensor-file.js';
import type { RunnerReport } from '../src/runner/report.js';
import { verifyProgram } from '../src/verify/verify.js';
import { encodePte } from './helpers/memory-pte.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { validate } from './helpers/json-schema.js';

const dir = tempDir('verify-reference');
const f32 = (xs: number[]) => new Uint8Array(Float32Array.from(xs).buffer);
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const W = 16;
const y = (s: number) => Array.from({ length: W }, (_, k) => 2 * (s + k) + 1);

const REPORT = {
  schema: 'trtx.runner-report/2',
  runner: { version: 'fake', cuda_built: false, executorch: '1.5.1' },
  backend: { source: 'builtin', path: null, executorch: '1.5.1' },
  program: { path: 'x', bytes: 1, methods: ['forward'] },
  device: { kind: 'cpu', name: 'fake', index: null },
  options: {
    methods: ['forward'],
    steps: 2,
    caller_stream: false,
    budget: null,
    fresh_state: false,
    cold_pool: false,
    shared_scratch: false,
    arena_fill: 'poison',
    init_device_buffers: false,
    share_arenas: false,
    trt_runtime: 'zero-copy',
  },
  memory: {
    pool: { mode: 'unavailable', unavailable_reason: 'cpu', api_calls: 0, devices: [] },
    scratch: {
      mode: 'private',
      reclaim: false,
      warmup_executes: null,
      shrink_after: null,
      peak_bytes: 0,
      peak_buffers: 0,
      devices: [],
      capacity_events: [],
      handoff_failures: 0,
    },
    device_arenas: {
      allocator: 'host',
      fill: 'poison',
      init_device_buffers: false,
      allocations: 0,
      deallocations: 0,
      peak_bytes: 0,
      filled_bytes: 0,
      zeroed_bytes: 0,
      refused_copies: 0,
      allocate_call_us: { count: 0, median: null, max: null },
    },
  },
  methods: [
    {
      name: 'forward',
      initialised_buffers: 0,
      delegates: [],
      steps: [0, 1, 2].map((s) => ({
        step: s,
        step_us: 1,
        outputs: [{ index: 0, kind: 'tensor', dtype: 'float32', sizes: [1, W], placement: 'host', digest: `00000000000000${s}0` }],
        buffers: [],
        h2d_bytes: 0,
        d2h_bytes: 0,
        d2d_bytes: 0,
        delegates: [],
      })),
    },
  ],
  errors: [],
  ok: true,
  exit_code: 0,
} satisfies RunnerReport;

/** A runner that writes REPORT, copies FAKE_OUTPUTS to --outputs and logs its argv. */
function fakeRunner(outputs: Uint8Array, report: RunnerReport = REPORT): { path: string; log: string } {
  const path = join(dir, `fake-runner-${Math.random().toString(36).slice(2)}.mjs`);
  const log = `${path}.log`;
  const out = `${path}.outputs`;
  const reportFile = `${path}.report.json`;
  writeFileSync(out, outputs);
  writeFileSync(reportFile, JSON.stringify(report));
  writeFileSync(
    path,
    `#!/usr/bin/env node
import { appendFileSync, copyFileSync } from 'node:fs';
const a = process.argv.slice(2);
const at = (f) => (a.indexOf(f) >= 0 ? a[a.indexOf(f) + 1] : undefined);
appendFileSync(${JSON.stringify(log)}, JSON.stringify(a) + '\\n');
copyFileSync(${JSON.stringify(reportFile)}, at('--report'));
if (at('--outputs')) copyFileSync(${JSON.stringify(out)}, at('--outputs'));
`,
  );
  chmodSync(path, 0o755);
  return { path, log };
}

/** trtSingle with a version-2 engine (its own program on kernels only as the partition), and its reference file of `steps` steps. */
async function program(name: string, steps = 3): Promise<string> {
  const spec = cloneSpec(trtSingle());
  const d = delegateOf(methodOf(spec, 'forward'), 'trt');
  if (d.blob.kind !== 'tensorrt') throw new Error('not a tensorrt blob');
  const built = kernelPartition();
  d.blob.engine = { steps: [], program: encodePte(built.program, built.segments) };
  const file = join(dir, name);
  await writeFixture(file, spec);
  const x = (s: number) => Array.from({ length: W }, (_, k) => s + k);
  writeFileSync(
    `${file}.reference.json`,
    JSON.stringify({
      schema: 'trtx.reference/1',
      producer: { torch: '2.13.0', executorch: '1.5.1' },
      model: 'm.pt2',
      program: name,
      steps,
      inputs: 'trtx-step-v1',
      methods: [
        {
          name: 'forward',
          steps: Array.from({ length: steps }, (_, s) => ({
            inputs: [{ kind: 'tensor', dtype: 'float32', shape: [1, W], data: b64(f32(x(s))) }],
            outputs: [{ kind: 'tensor', dtype: 'float32', shape: [1, W], data: b64(f32(y(s))) }],
          })),
        },
      ],
    }),
  );
  return file;
}

const outputsOf = (steps: number, nudge = 0) =>
  encodeTensorFile(
    Array.from({ length: steps }, (_, s) => ({
      method: 'forward',
      step: s,
      index: 0,
      value: {
        kind: 'tensor' as const,
        dtype: 'float32' as const,
        shape: [1, W],
        data: f32(y(s).map((v, k) => (k === 5 && s === 1 ? v + nudge : v))),
      },
    })),
  );

const argvs = (log: string) =>
  readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as string[]);

describe('trtx verify against eager PyTorch', () => {
  it('feeds every run the recorded inputs, compares each persistent run, and reports the numbers', async () => {
    const file = await program('close.pte');
    const fake = fakeRunner(outputsOf(3, 1e-5));
    const r = await verifyProgram(file, { runner: fake.path });
    expect(r.schema).toBe('trtx.verify/3');
    expect(r.steps).toBe(3); // the file's
    const runs = argvs(fake.log);
    expect(runs).toHaveLength(3); // stream off, stream on, fresh state
    for (const a of runs) expect(a).toContain('--inputs');
    expect(runs.filter((a) => a.includes('--outputs'))).toHaveLength(2);
    expect(runs.find((a) => a.includes('--fresh-state'))).not.toContain('--outputs');
    expect(r.reference).toMatchObject({ status: 'compared', file: `${file}.reference.json`, ok: true, worst: null });
    expect(r.reference.comparisons).toHaveLength(2);
    expect(r.reference.comparisons[0]).toMatchObject({
      method: 'forward',
      output: 0,
      steps: 3,
      elements: 3 * W,
      mismatched: 0,
      run: 'as-is, stream off',
    });
    expect(r.reference.comparisons[0].max_abs).toBeGreaterThan(0);
    const names = r.assertions.map((a) => a.name);
    expect(names).toContainEqual(
      expect.stringMatching(
        /^outputs match eager PyTorch \(close\.pte\.reference\.json\): forward output 0: max abs \S+, max rel \S+ over 3 steps \(as-is, stream on\)$/,
      ),
    );
    expect(r.ok).toBe(true);
    const text = renderVerify(r, { color: false }).join('\n');
    expect(text).toMatch(/outputs compared with eager PyTorch/);
    expect(text).toMatch(/run\s+output\s+dtype\s+max abs\s+max rel\s+result/);
    expect(text).toMatch(/as-is, stream off\s+forward\[0\]\s+float32\[1,16\]/);
    const schema = JSON.parse(readFileSync(new URL('../schemas/verify.schema.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    expect(validate(schema, JSON.parse(JSON.stringify(r)))).toEqual([]);
    const xml = toJunit(r, { started: new Date(0), seconds: 1, hostname: 'h' });
    expect(xml.match(/<testcase name="outputs match eager PyTorch/g)).toHaveLength(2);
  });

  it('says per engine what the budget the runner resolved keeps resident and streams per execute (text and --json)', async () => {
    const file = await program('streams.pte');
    const delegate = {
      index: 0,
      backend: 'TensorRTBackend',
      engine: 'reference-program' as const,
      target_device: 'cuda:0',
      elision: 'none' as const,
      inputs: ['x'],
      outputs: ['output0'],
      aliased_outputs: [],
      zero_copy_kv: null,
      budget: {
        source: 'spec' as const,
        requested: String(1 << 30),
        effective: String(1 << 30),
        clamped: false,
        ignored: null,
        streaming: true,
        streamable_bytes: String(5 * 2 ** 30),
      },
      scratch_bytes: 0,
      scratch_capacity: 0,
      executes: 3,
      syncs_performed: 3,
      syncs_skipped: 0,
      waits: 0,
      drains: 0,
      h2d_bytes: 0,
      d2h_bytes: 0,
      d2d_bytes: 0,
    };
    const report = { ...REPORT, methods: REPORT.methods.map((m) => ({ ...m, delegates: [delegate] })) } satisfies RunnerReport;
    const r = await verifyProgram(file, { runner: fakeRunner(outputsOf(3), report).path });
    expect(r.budgets).toEqual([
      expect.objectContaining({
        method: 'forward',
        delegate: 0,
        streamable_weight_bytes: String(5 * 2 ** 30),
        resident_bytes: String(1 << 30),
        streamed_bytes_per_execute: String(4 * 2 ** 30),
      }),
    ]);
    expect(renderVerify(r, { color: false }).join('\n')).toContain(
      '  budget forward delegate 0: 1 GiB (spec)\n    weights 5 GiB: 1 GiB resident, 4 GiB streamed per execute',
    );
    const schema = JSON.parse(readFileSync(new URL('../schemas/verify.schema.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    expect(validate(schema, JSON.parse(JSON.stringify(r)))).toEqual([]);
  });

  it('fails naming the worst output when the program is over the tolerance, and --atol lets it pass', async () => {
    const file = await program('far.pte');
    const fake = fakeRunner(outputsOf(3, 0.5));
    const r = await verifyProgram(file, { runner: fake.path });
    expect(r.ok).toBe(false);
    expect(r.reference.ok).toBe(false);
    expect(r.reference.worst).toMatch(/^forward output 0 \(as-is, stream (off|on)\): max abs 5\.00e-1.*worst at step 1 element 5/);
    expect(renderVerify(r, { color: false }).join('\n')).toMatch(/checks failed; furthest from PyTorch: forward output 0/);
    const xml = toJunit(r, { started: new Date(0), seconds: 1, hostname: 'h' });
    expect(xml).toMatch(/<failure message="max abs 5\.00e-1/);
    expect((await verifyProgram(file, { runner: fakeRunner(outputsOf(3, 0.5)).path, atol: 1 })).ok).toBe(true);
  });

  it('trtx rewrite -o carries the reference along: verify of the rewritten program compares with eager PyTorch again', async () => {
    const file = await program('chain.pte');
    const out = join(dir, 'chain-rewritten.pte');
    const rewritten = await runCli(['rewrite', file, '-o', out]);
    expect(rewritten.code, rewritten.stderr).toBe(0);
    const r = await verifyProgram(out, { runner: fakeRunner(outputsOf(3)).path });
    expect(r.reference).toMatchObject({ status: 'compared', file: `${out}.reference.json`, ok: true });
    expect(r.reference.comparisons).toHaveLength(2);
    expect(r.ok).toBe(true);
  });

  it('--steps at most the file\u2019s; --no-reference and a missing file compare the program with itself', async () => {
    const file = await program('steps.pte', 3);
    await expect(verifyProgram(file, { steps: 4, runner: fakeRunner(outputsOf(3)).path })).rejects.toMatchObject({
      code: 'VERIFY_REFERENCE_STEPS',
      kind: 'usage',
    });
    const two = await verifyProgram(file, { steps: 2, runner: fakeRunner(outputsOf(3)).path });
    expect(two.reference.comparisons[0].steps).toBe(2);
    const fake = fakeRunner(outputsOf(3));
    const none = await verifyProgram(file, { reference: false, runner: fake.path });
    expect(none.reference).toMatchObject({ status: 'skipped', comparisons: [] });
    expect(argvs(fake.log).every((a) => !a.includes('--inputs'))).toBe(true);
    expect(none.steps).toBe(4);
    await expect(verifyProgram(file, { reference: join(dir, 'absent.json'), runner: fake.path })).rejects.toMatchObject({
      code: 'REFERENCE_MISSING',
    });
  });

  it('says so in one line when there is no reference file, and "synthetic" for synthetic engines', async () => {
    const file = join(dir, 'synthetic.pte');
    await writeFixture(file, trtSingle());
    const r = await verifyProgram(file, { runner: fakeRunner(outputsOf(4)).path });
    expect(r.reference.status).toBe('synthetic');
    const text = renderVerify(r, { color: false }).join('\n');
    expect(text).toMatch(/every engine is a synthetic reference engine/);
    expect(text).toMatch(/synthetic reference engine, not a TensorRT plan/);
    const bare = await program('bare.pte');
    writeFileSync(`${bare}.reference.json`, '');
    await expect(verifyProgram(bare, { runner: fakeRunner(outputsOf(4)).path })).rejects.toMatchObject({ code: 'REFERENCE_JSON' });
    const lone = join(dir, 'lone.pte');
    writeFileSync(lone, readFileSync(bare));
    const l = await verifyProgram(lone, { runner: fakeRunner(outputsOf(4)).path });
    expect(l.reference.status).toBe('none');
    expect(renderVerify(l, { color: false })).toContain('  no reference outputs: the program is compared with itself only');
  });
});
