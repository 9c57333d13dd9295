// schemas/runner-report.schema.json (generated from the zod schemas of
// src/runner/report.ts) and those zod schemas hold the C++ writer's reports:
// every real report the runner writes (ok, refused, exit 3, caller stream,
// budgets, fresh state, the corpus) passes both, and each damaged copy fails
// both. The validator is the project's JSON Schema
// subset, which refuses any keyword it does not implement.
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderBlob, writeFixture } from '../src/examples/builder.js';
import { brokenBlob, cloneSpec, delegateOf, methodOf } from '../src/examples/broken.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import { RunnerReport } from '../src/runner/report.js';
import { runRunner } from '../src/runner/run.js';
import { corpusPath } from './helpers/corpus.js';
import { validate } from './helpers/json-schema.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const SCHEMA = JSON.parse(readFileSync(new URL('../schemas/runner-report.schema.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;
const dir = tempDir('runner-report');

const reports = new Map<string, unknown>();

beforeAll(async () => {
  const runner = await testRunner();
  const write = async (name: string, spec: Parameters<typeof writeFixture>[1]) => {
    const p = join(dir, name);
    await writeFixture(p, spec);
    return p;
  };
  const staged = await write('staged.pte', kvDecoder({ mode: 'staged' }));
  const zeroCopy = await write('zero-copy.pte', kvDecoder({ mode: 'zero-copy' }));
  const multi = await write('multi.pte', multiEngine(3));
  const blob = await write('blob.pte', brokenBlob(kvDecoder({ mode: 'staged' }), 'alias-in-tr01'));
  const plan = cloneSpec(trtSingle());
  const d = delegateOf(methodOf(plan, 'forward'), 'trt');
  const bytes = renderBlob(d.blob).slice();
  bytes.set(new TextEncoder().encode('ftrt'), new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true));
  d.blob = { kind: 'bytes', bytes };
  const real = await write('plan.pte', plan);
  const runs: [string, string, Parameters<typeof runRunner>[1]][] = [
    ['staged', staged, { runner, steps: 2 }],
    ['zero-copy caller stream', zeroCopy, { runner, steps: 3, callerStream: true, methods: ['decode'] }],
    ['fresh state', zeroCopy, { runner, steps: 2, freshState: true }],
    ['budget option', multi, { runner, budget: 4096n }],
    ['shared scratch', multi, { runner, steps: 3, sharedScratch: true }],
    ['cold pool, shared scratch, fresh state', multi, { runner, steps: 2, coldPool: true, sharedScratch: true, freshState: true }],
    ['blob refused', blob, { runner }],
    ['real plan', real, { runner }],
    ['missing file', join(dir, 'missing.pte'), { runner }],
    ['corpus add', corpusPath('add'), { runner, steps: 2 }],
    ['corpus unknown operator', corpusPath('keyword-spotting-cortex-m'), { runner }],
    [
      'initialised device buffers, no poison',
      zeroCopy,
      { runner, steps: 2, initDeviceBuffers: true, arenaFill: 'none', methods: ['decode'] },
    ],
    ['stock runtime refusal', zeroCopy, { runner, trtRuntime: 'stock', methods: ['decode'] }],
    ['shared arenas refused', staged, { runner, shareArenas: true }],
    ['cannot run here', staged, { runner, device: 'cuda' }],
  ];
  for (const [name, path, o] of runs) reports.set(name, (await runRunner(path, { device: 'cpu', ...o })).report);
}, BUILD_TIMEOUT_MS);

type Doc = Record<string, any>;
const damages: [string, (r: Doc) => void][] = [
  ['schema id missing', (r) => delete r.schema],
  ['other schema version', (r) => (r.schema = 'trtx.runner-report/1')],
  ['unknown top-level field', (r) => (r.extra = 1)],
  ['exit code out of range', (r) => (r.exit_code = 4)],
  ['unknown device kind', (r) => (r.device.kind = 'tpu')],
  ['negative device index', (r) => (r.device.index = -1)],
  ['zero steps', (r) => (r.options.steps = 0)],
  ['budget option as a number', (r) => (r.options.budget = 4096)],
  ['unknown elision mode', (r) => (r.methods[0].delegates[0].elision = 'partial')],
  ['budget requested as a number', (r) => (r.methods[0].delegates[0].budget.requested = 1024)],
  ['unknown budget source', (r) => (r.methods[0].delegates[0].budget.source = 'baked')],
  ['streamable bytes with a leading zero', (r) => (r.methods[0].delegates[0].budget.streamable_bytes = '012')],
  ['drains missing', (r) => delete r.methods[0].delegates[0].drains],
  ['fractional sync count', (r) => (r.methods[0].delegates[0].syncs_skipped = 1.5)],
  ['target device not cuda:N', (r) => (r.methods[0].delegates[0].target_device = 'gpu:0')],
  ['unknown engine kind', (r) => (r.methods[0].delegates[0].engine = 'tensorrt')],
  ['digest not 16 hex digits', (r) => (r.methods[0].steps[0].outputs[0].digest = 'XYZ')],
  ['unknown buffer placement', (r) => (r.methods[0].steps[0].buffers[0].placement = 'gpu')],
  ['negative byte count', (r) => (r.methods[0].steps[0].h2d_bytes = -1)],
  ['extra field in a step', (r) => (r.methods[0].steps[0].note = 'x')],
  ['error code not an identifier', (r) => r.errors.push({ code: '1 bad', location: '', message: '' })],
  ['error without a location', (r) => r.errors.push({ code: 'InvalidProgram', message: 'x' })],
  ['memory section missing', (r) => delete r.memory],
  ['device arenas missing', (r) => delete r.memory.device_arenas],
  ['unknown arena fill', (r) => (r.memory.device_arenas.fill = 'zero')],
  ['unknown device allocator', (r) => (r.memory.device_arenas.allocator = 'managed')],
  ['allocation time as a string', (r) => (r.memory.device_arenas.allocate_call_us.median = '1.0')],
  ['arena_fill option missing', (r) => delete r.options.arena_fill],
  ['unknown trt runtime', (r) => (r.options.trt_runtime = 'pr-4667')],
  ['executorch version missing', (r) => delete r.runner.executorch],
  ['initialised buffer count missing', (r) => delete r.methods[0].initialised_buffers],
  ['a value index on an output (version 1)', (r) => (r.methods[0].steps[0].outputs[0].value = 3)],
  ['unknown output kind', (r) => (r.methods[0].steps[0].outputs[0].kind = 'tensorlist')],
  ['cold_pool option missing', (r) => delete r.options.cold_pool],
  ['step time missing', (r) => delete r.methods[0].steps[0].step_us],
  ['negative step time', (r) => (r.methods[0].steps[0].step_us = -1)],
  ['unknown pool mode', (r) => (r.memory.pool.mode = 'lukewarm')],
  ['pool api calls missing', (r) => delete r.memory.pool.api_calls],
  ['unknown scratch mode', (r) => (r.memory.scratch.mode = 'pooled')],
  ['peak scratch as a string', (r) => (r.memory.scratch.peak_bytes = '3145728')],
  [
    'pool threshold as a number',
    (r) =>
      r.memory.pool.devices.push({
        device: 0,
        state_at_load: 'raised',
        state: 'restored',
        previous_release_threshold: 0,
        raised_to: '18446744073709551615',
        restored: true,
        trimmed: true,
        configure_error: null,
        release_error: null,
      }),
  ],
  [
    'unknown pool state',
    (r) =>
      r.memory.pool.devices.push({
        device: 0,
        state_at_load: 'warm',
        state: 'restored',
        previous_release_threshold: '0',
        raised_to: null,
        restored: true,
        trimmed: true,
        configure_error: null,
        release_error: null,
      }),
  ],
  [
    'configure error without a message',
    (r) =>
      r.memory.pool.devices.push({
        device: 0,
        state_at_load: 'failed',
        state: 'failed',
        previous_release_threshold: null,
        raised_to: null,
        restored: false,
        trimmed: false,
        configure_error: { code: 'device_error' },
        release_error: null,
      }),
  ],
  [
    'capacity event with an unknown reason',
    (r) => r.memory.scratch.capacity_events.push({ device: 0, execute_index: 0, from: 0, to: 1, reason: 'resize', detail: null }),
  ],
  [
    'capacity event without execute_index',
    (r) => r.memory.scratch.capacity_events.push({ device: 0, from: 0, to: 1, reason: 'grow', detail: null }),
  ],
  [
    'scratch device with a fractional capacity',
    (r) => r.memory.scratch.devices.push({ device: 0, capacity: 1.5, peak_capacity: 2, floor: null, executes: 1 }),
  ],
];

describe('runner-report.schema.json and the zod schema', () => {
  it('both accept every real report', () => {
    expect(reports.size).toBe(15);
    const exitCodes = new Set<number>();
    for (const [name, report] of reports) {
      expect(validate(SCHEMA, report), name).toEqual([]);
      expect(RunnerReport.safeParse(report).success, name).toBe(true);
      exitCodes.add((report as Doc).exit_code);
    }
    expect([...exitCodes].sort()).toEqual([0, 1, 3]);
  });

  it('both accept the memory entries a CUDA run writes', () => {
    const doc = structuredClone(reports.get('shared scratch')) as Doc;
    doc.memory.pool = {
      mode: 'warm',
      unavailable_reason: null,
      api_calls: 9,
      devices: [
        {
          device: 0,
          state_at_load: 'raised',
          state: 'restored',
          previous_release_threshold: '0',
          raised_to: '18446744073709551615',
          restored: true,
          trimmed: true,
          configure_error: null,
          release_error: { code: 'device_error', message: 'cudaMemPoolTrimTo: invalid argument' },
        },
      ],
    };
    doc.memory.scratch.capacity_events.push({
      device: 0,
      execute_index: 7,
      from: 3,
      to: 3,
      reason: 'grow_failed',
      detail: 'allocation: out of memory',
    });
    expect(validate(SCHEMA, doc)).toEqual([]);
    expect(RunnerReport.safeParse(doc).success).toBe(true);
  });

  it('both refuse each damaged report', () => {
    const base = reports.get('zero-copy caller stream') as Doc;
    expect(base.methods[0].delegates.length).toBeGreaterThan(0);
    for (const [name, damage] of damages) {
      const doc = structuredClone(base);
      damage(doc);
      expect(validate(SCHEMA, doc).length, `schema accepted: ${name}`).toBeGreaterThan(0);
      expect(RunnerReport.safeParse(doc).success, `zod accepted: ${name}`).toBe(false);
    }
  });
});
