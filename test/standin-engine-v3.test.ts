// Reference engines read by their metadata, and version 3 (issue 36 items
// 1 to 3, docs/reference-lowering.md section 1): the engine's program is read to its
// flatbuffer and no further, a version-3 engine's weights are the outer
// program's named data (their sizes, never their bytes), check proves every
// external weight is there at its size, and a budget at or above an engine's
// streamable weights is a warning (it streams nothing).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildProgram } from '../src/examples/builder.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import { runChecks } from '../src/checks/run.js';
import { delegatesOf, isTensorRT, readDelegateBlob } from '../src/tensorrt/delegates.js';
import { readStandinEngine } from '../src/tensorrt/engine-kind.js';
import { decodeEngine, encodeEngine, readEngine } from '../src/tensorrt/standin-engine.js';
import type { EngineReadCost } from '../src/tensorrt/standin-engine-read.js';
import { TrtxError } from '../src/util/errors.js';
import { externalPartition, externalWeightsSpec, pteBytes, type ExternalWeightsOptions } from '../fixtures/external-weights.js';
import { pteOf } from './helpers/memory-pte.js';
import { runCli } from './helpers/cli.js';
import { validate } from './helpers/json-schema.js';
import { tempDir } from './helpers/temp.js';
import { writeSparseExternal } from '../fixtures/external-weights.js';
import { readFileSync } from 'node:fs';
import { budgetStreaming } from '../src/verify/budget-streaming.js';
import type { BudgetResolution } from '../src/runner/report.js';
import { join } from 'node:path';
import { refusal } from './helpers/refusal.js';

const WEIGHTS: ExternalWeightsOptions['weights'] = [
  { key: 'layers.0.weight', elements: 256 },
  { key: 'layers.1.weight', elements: 1024 },
];

/** trt-single's program as a partition whose named data makes it `bytes` long (a v2 engine's weights are its segments). */
function heavyPartition(bytes: number): Uint8Array {
  const spec = trtSingle();
  spec.namedData = [{ key: 'w', bytes: new Uint8Array(bytes).fill(7) }];
  const built = buildProgram(spec);
  return pteBytes(built.program, built.segments);
}

const codes = async (opts: ExternalWeightsOptions) => (await runChecks(pteOf(externalWeightsSpec(opts)))).diagnostics;

describe('reading an engine by its metadata', () => {
  it("reads a version-2 engine's table, its program's header and flatbuffer, never the program's segments", async () => {
    const program = heavyPartition(8 << 20);
    const engine = encodeEngine({ steps: [], program });
    const cost: EngineReadCost = { bytesRead: 0, reads: 0 };
    const e = await readEngine(engine.length, (o, n) => Promise.resolve(engine.slice(o, o + n)), {}, cost);
    expect(e).toEqual(decodeEngine(engine));
    expect(e.program).toMatchObject({ programBytes: program.length, weightBytes: 0, externalWeights: [] });
    // An 8 MiB engine, read in a few pages.
    expect(engine.length).toBeGreaterThan(8 << 20);
    expect(cost.bytesRead).toBeLessThan(256 * 1024);
    expect(cost.reads).toBeLessThanOrEqual(6);
  });

  it('refuses a program whose header claims more bytes than the engine carries (REF_ENGINE_PROGRAM)', () => {
    const program = heavyPartition(4096);
    // program_size (u64 at 16) past the vector.
    const longer = program.slice();
    new DataView(longer.buffer).setBigUint64(16, BigInt(program.length + 1), true);
    const e = refusal(() => decodeEngine(encodeEngine({ steps: [], program: longer })));
    expect(e.code).toBe('REF_ENGINE_PROGRAM');
    expect(e.message).toMatch(/PTE_PROGRAM_SIZE/);
    // A segment table reaching past the vector: the program cut short.
    const cut = refusal(() => decodeEngine(encodeEngine({ steps: [], program: program.subarray(0, program.length - 1) })));
    expect(cut.code).toBe('REF_ENGINE_PROGRAM');
    expect(cut.message).toMatch(/PTE_TRUNCATED: .*the last 1 byte is missing/);
  });
});

describe('the bounded read decides as the whole read does', () => {
  // Pages fetched on demand must change nothing but the cost: on corrupted
  // engines (a version-2 engine over 3 pages, its program included) every
  // outcome is the in-memory decode's, the same engine or the same refusal.
  const outcome = async (f: () => unknown) => {
    try {
      return { engine: await f() };
    } catch (e) {
      if (e instanceof TrtxError) return { code: e.code, location: e.location, message: e.message };
      throw e;
    }
  };
  it('on corrupted bytes, the same engine or the same refusal', async () => {
    const bytes = encodeEngine({ steps: [], program: heavyPartition(150_000), scratch: { baseBytes: 64 } });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.oneof(fc.nat(255), fc.nat(bytes.length - 1)), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 6,
        }),
        async (edits) => {
          const b = bytes.slice();
          for (const [at, v] of edits) b[at] = v;
          const bounded = await outcome(() => readEngine(b.length, (o, n) => Promise.resolve(b.slice(o, o + n))));
          expect(bounded).toEqual(await outcome(() => decodeEngine(b)));
        },
      ),
      { numRuns: 300, seed: 11 },
    );
  });
});

describe('version 3: weights in the outer program', () => {
  it('decodes: the external weights by key, the tensors sizing them until the outer program does', () => {
    const e = decodeEngine(encodeEngine({ steps: [], program: externalPartition({ weights: WEIGHTS }), version: 3 }));
    expect(e.version).toBe(3);
    expect(e.program!.externalWeights.map((w) => [w.key, w.nbytes])).toEqual([
      ['layers.0.weight', 1024n],
      ['layers.1.weight', 4096n],
    ]);
    expect(e.program!.weightBytes).toBe(5120);
  });

  it("a version-2 engine's program with EXTERNAL constants is refused: only version 3 finds its weights outside", () => {
    const e = refusal(() => decodeEngine(encodeEngine({ steps: [], program: externalPartition({ weights: WEIGHTS }), version: 2 })));
    expect(e.code).toBe('REF_ENGINE_PROGRAM');
    expect(e.message).toMatch(/EXTERNAL/);
  });

  it("weighs a version-3 engine by its keys' named-data segments", async () => {
    const pte = pteOf(externalWeightsSpec({ weights: WEIGHTS, resized: { 'layers.1.weight': 5000 } }));
    const ref = delegatesOf(pte, isTensorRT)[0];
    const engine = await readStandinEngine(pte, ref, await readDelegateBlob(pte, ref));
    expect(engine.program!.weightBytes).toBe(1024 + 5000);
  });

  it('a sound version-3 program passes check', async () => {
    const found = (await codes({ weights: WEIGHTS })).filter((d) => d.severity === 'error');
    expect(found).toEqual([]);
  });

  it('TRT_REFERENCE_PROGRAM_DELEGATED: a partition that is itself delegated, as the runner refuses it (EngineFormat)', async () => {
    // The fixture as it was before issue 43: trt-single's program, TensorRT delegate and all, as the partition.
    const found = (await codes({ weights: WEIGHTS, delegated: true })).filter((d) => d.severity === 'error');
    expect(found.map((d) => d.code)).toEqual(['TRT_REFERENCE_PROGRAM_DELEGATED']);
    expect(found[0].location).toMatch(/engine > program$/);
    expect(found[0].message).toMatch(/is itself delegated \(2 delegate\(s\) and delegate calls in method forward\)/);
  });

  it.each<[string, Partial<ExternalWeightsOptions>, RegExp]>([
    ['a key missing from the named data', { missing: ['layers.1.weight'] }, /"layers\.1\.weight" .* is not in the program's named data/],
    [
      'named data of another size',
      { resized: { 'layers.0.weight': 1000 } },
      /"layers\.0\.weight" .* is 1024 bytes but its named data is 1000 bytes/,
    ],
    ['an EXTERNAL constant without a name', { name: () => null }, /has no fully_qualified_name/],
    ['an EXTERNAL constant with an empty name', { name: () => '' }, /has no fully_qualified_name/],
  ])('TRT_REFERENCE_EXTERNAL_WEIGHT: %s', async (_, broken, message) => {
    const found = (await codes({ weights: WEIGHTS, ...broken })).filter((d) => d.code === 'TRT_REFERENCE_EXTERNAL_WEIGHT');
    expect(found.length).toBeGreaterThan(0);
    expect(found[0].severity).toBe('error');
    expect(found[0].message).toMatch(message);
    expect(found[0].location).toMatch(/engine > program > forward > value %\d+$/);
  });
});

describe('TRT_BUDGET_STREAMS_NOTHING', () => {
  const weights = 4 * (256 + 1024);
  it('warns when the baked budget is at least the streamable weights', async () => {
    for (const budget of [BigInt(weights), BigInt(weights) + 1n, 1n << 40n]) {
      const found = (await codes({ weights: WEIGHTS, budget })).filter((d) => d.code === 'TRT_BUDGET_STREAMS_NOTHING');
      expect(found.map((d) => d.severity)).toEqual(['warning']);
      expect(found[0].message).toMatch(/^streams nothing; the budget is larger than the weights/);
    }
  });

  it("says nothing of a synthetic engine's made-up weights (multi-engine: 256 MiB over 128 MiB)", async () => {
    const { diagnostics } = await runChecks(pteOf(multiEngine(3)));
    expect(diagnostics.map((d) => d.code)).not.toContain('TRT_BUDGET_STREAMS_NOTHING');
  });

  it('says nothing of a budget that streams, or of no budget', async () => {
    for (const budget of [BigInt(weights) - 1n, 0n, undefined]) {
      const found = (await codes({ weights: WEIGHTS, budget })).filter((d) => d.code === 'TRT_BUDGET_STREAMS_NOTHING');
      expect(found).toEqual([]);
    }
  });
});

describe('inspect: what stays resident and what streams, per engine', () => {
  const dir = tempDir('v3-inspect');
  // 512 MiB of weights as holes, under a 384 MiB budget.
  const big: ExternalWeightsOptions['weights'] = [
    { key: 'layers.0.weight', elements: 64 << 20 },
    { key: 'layers.1.weight', elements: 64 << 20 },
  ];

  it('says the streamable weights, the budget, the bytes resident and the bytes streamed per execute (text and --json)', async () => {
    const file = join(dir, 'streams.pte');
    writeSparseExternal(file, { weights: big, budget: 384n << 20n });
    const text = await runCli(['inspect', file]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('weights 512 MiB streamable; budget 384 MiB: 384 MiB resident, 128 MiB streamed per execute');
    expect(text.stdout).toContain('536870912 weight bytes');
    const json = await runCli(['inspect', '--json', file]);
    const doc = JSON.parse(json.stdout) as { methods: { delegates: { tensorrt: { reference: Record<string, unknown> } }[] }[] };
    const schema = JSON.parse(readFileSync(join(__dirname, '..', 'schemas', 'inspect.schema.json'), 'utf8')) as Record<string, unknown>;
    expect(validate(schema, doc)).toEqual([]);
    expect(doc.methods[0].delegates[0].tensorrt.reference).toMatchObject({
      version: 3,
      program: { weight_bytes: 512 << 20 },
      streaming: {
        weight_streaming: true,
        streamable_weight_bytes: 512 << 20,
        budget_bytes: 384 << 20,
        resident_bytes: 384 << 20,
        streamed_bytes_per_execute: 128 << 20,
      },
    });
  });

  it('a budget over the weights: inspect says nothing streams, check warns and passes', async () => {
    const file = join(dir, 'resident.pte');
    writeSparseExternal(file, { weights: big, budget: 1n << 30n });
    expect((await runCli(['inspect', file])).stdout).toContain(
      'weights 512 MiB streamable; budget 1 GiB: 512 MiB resident, nothing streamed (the budget holds every weight)',
    );
    const check = await runCli(['check', file]);
    expect(check.code).toBe(0);
    expect(check.stdout + check.stderr).toMatch(
      /warning TRT_BUDGET_STREAMS_NOTHING[\s\S]*streams nothing; the budget is larger than the weights/,
    );
  });
});

describe('verify: what each run keeps resident and streams, from the budget the runner resolved', () => {
  const resolved = (effective: string | null, more: Partial<BudgetResolution> = {}): BudgetResolution => ({
    source: 'spec',
    requested: effective,
    effective,
    clamped: false,
    ignored: null,
    streaming: true,
    streamable_bytes: '5000',
    ...more,
  });

  it('min(effective, weights) resident, the rest streamed; all resident when the engine does not stream', () => {
    const of = (b: BudgetResolution) => budgetStreaming(b, 'reference-program');
    expect(of(resolved('1000'))).toEqual({ streamable_weight_bytes: '5000', resident_bytes: '1000', streamed_bytes_per_execute: '4000' });
    expect(of(resolved('5000', { clamped: true }))).toEqual({
      streamable_weight_bytes: '5000',
      resident_bytes: '5000',
      streamed_bytes_per_execute: '0',
    });
    expect(of(resolved(null))).toMatchObject({ resident_bytes: '5000', streamed_bytes_per_execute: '0' });
    expect(of(resolved(null, { streaming: false, ignored: 'engine was not built with weight streaming' }))).toMatchObject({
      resident_bytes: '5000',
      streamed_bytes_per_execute: '0',
    });
  });

  it("says nothing of a synthetic engine's made-up weights", () => {
    expect(budgetStreaming(resolved('1000'), 'synthetic-cpu')).toEqual({
      streamable_weight_bytes: null,
      resident_bytes: null,
      streamed_bytes_per_execute: null,
    });
  });
});
