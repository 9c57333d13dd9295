import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as flatbuffers from 'flatbuffers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Engine as FbEngine } from '../src/generated/trtx-ref/engine.js';
import { Step as FbStep } from '../src/generated/trtx-ref/step.js';
import { Attend as FbAttend } from '../src/generated/trtx-ref/attend.js';
import { Affine as FbAffine } from '../src/generated/trtx-ref/affine.js';
import { Op } from '../src/generated/trtx-ref/op.js';
import { decodeEngine, encodeEngine, isStandinEngine, type EngineInit } from '../src/tensorrt/standin-engine.js';
import { checkEngineBindings, scratchBytes, type EngineBinding } from '../src/tensorrt/standin-engine-bindings.js';
import { TrtxError } from '../src/util/errors.js';
import { flatcDecode } from './helpers/flatc.js';
import { codeOf, refusal } from './helpers/refusal.js';

const SCHEMA = resolve(fileURLToPath(new URL('../schemas/reference_engine.fbs', import.meta.url)));

const SAMPLE: EngineInit = {
  steps: [
    { op: 'KvWrite', cache: 0, position: 3, source: 2, seqDim: 2, salt: 0.25 },
    { op: 'KvWrite', cache: 1, position: 3, source: 2, seqDim: 2 },
    { op: 'Attend', caches: [0, 1], query: 2, output: 6 },
    { op: 'Affine', input: 2, output: 7, scale: 0.5, bias: -1.25 },
    { op: 'RingShift', stateIn: 8, source: 2, stateOut: 9 },
  ],
  scratch: { baseBytes: 65536n, perUnitBytes: 32n, unitBinding: 2, unitDim: 1 },
  streamableWeightBytes: 3n << 30n,
  weightStreaming: true,
};

const BINDINGS: EngineBinding[] = [
  { name: 'b_k', is_input: true, dtype: 'float32', shape: [1, 2, 8, 4] },
  { name: 'b_v', is_input: true, dtype: 'float32', shape: [1, 2, 8, 4] },
  { name: 'x', is_input: true, dtype: 'float32', shape: [1, 1, 8] },
  { name: 'input_pos', is_input: true, dtype: 'int64', shape: [1] },
  { name: 'output0', is_input: false, dtype: 'float32', shape: [1, 2, 8, 4] },
  { name: 'output1', is_input: false, dtype: 'float32', shape: [1, 2, 8, 4] },
  { name: 'output2', is_input: false, dtype: 'float32', shape: [1, 16] },
  { name: 'output3', is_input: false, dtype: 'float32', shape: [1, 1, 8] },
  { name: 'b_conv', is_input: true, dtype: 'float32', shape: [1, 4, 3] },
  { name: 'output4', is_input: false, dtype: 'float32', shape: [1, 4, 3] },
];

describe('reference engine codec', () => {
  it('round-trips every op, the scratch need and the streaming fields', () => {
    const e = decodeEngine(encodeEngine(SAMPLE));
    expect(e).toEqual({
      version: 1,
      steps: [
        { op: 'KvWrite', cache: 0, position: 3, source: 2, seqDim: 2, salt: 0.25 },
        { op: 'KvWrite', cache: 1, position: 3, source: 2, seqDim: 2, salt: 0.5 },
        { op: 'Attend', caches: [0, 1], query: 2, output: 6 },
        { op: 'Affine', input: 2, output: 7, scale: 0.5, bias: -1.25 },
        { op: 'RingShift', stateIn: 8, source: 2, stateOut: 9 },
      ],
      scratch: { baseBytes: 65536n, perUnitBytes: 32n, unitBinding: 2, unitDim: 1 },
      streamableWeightBytes: 3n << 30n,
      weightStreaming: true,
      program: null,
    });
  });

  it('an engine without scratch or streaming reads back as none', () => {
    const e = decodeEngine(encodeEngine({ steps: [{ op: 'Affine', input: 0, output: 1 }] }));
    expect(e.scratch).toBeNull();
    expect(e.weightStreaming).toBe(false);
    expect(e.streamableWeightBytes).toBe(0n);
    expect(e.steps[0]).toEqual({ op: 'Affine', input: 0, output: 1, scale: 1, bias: 0 });
  });

  it('carries identifier TRXE and decodes with flatc against the schema', () => {
    const bytes = encodeEngine(SAMPLE);
    expect(isStandinEngine(bytes)).toBe(true);
    const j = flatcDecode(bytes, SCHEMA) as {
      version: number;
      steps: { op_type: string; op: unknown }[];
      scratch: unknown;
      weight_streaming: boolean;
    };
    expect(j.version).toBe(1);
    expect(j.steps.map((s: { op_type: string }) => s.op_type)).toEqual(['KvWrite', 'KvWrite', 'Attend', 'Affine', 'RingShift']);
    expect(j.steps[0].op).toEqual({ cache: 0, position: 3, source: 2, seq_dim: 2, salt: 0.25 });
    expect(j.scratch).toEqual({ base_bytes: 65536, per_unit_bytes: 32, unit_binding: 2, unit_dim: 1 });
    expect(j.weight_streaming).toBe(true);
  });

  it('writes defaults explicitly (version present on the wire)', () => {
    const bytes = encodeEngine({ steps: [] });
    const e = FbEngine.getRootAsEngine(new flatbuffers.ByteBuffer(bytes));
    // vtable slot 0 (version) is populated even though it equals the default.
    expect(e.bb!.__offset(e.bb_pos, 4)).not.toBe(0);
  });

  it('tells engines apart by identifier', () => {
    expect(isStandinEngine(new TextEncoder().encode('ftrt\x00\x00\x00\x00plan'))).toBe(false);
    expect(isStandinEngine(new Uint8Array(7))).toBe(false);
  });
});

describe('reference engine refusals', () => {
  it('refuses a wrong identifier and names a TensorRT plan', () => {
    const plan = new TextEncoder().encode('ftrt0123456789abcdef');
    expect(codeOf(() => decodeEngine(plan))).toBe('REF_ENGINE_IDENTIFIER');
    expect(() => decodeEngine(plan)).toThrow(/TensorRT plan/);
    const other = encodeEngine(SAMPLE).slice();
    other.set(new TextEncoder().encode('TRXF'), 4);
    expect(codeOf(() => decodeEngine(other))).toBe('REF_ENGINE_IDENTIFIER');
  });

  it('refuses an unknown version', () => {
    expect(codeOf(() => decodeEngine(encodeEngine({ ...SAMPLE, version: 4 })))).toBe('REF_ENGINE_VERSION');
    expect(codeOf(() => decodeEngine(encodeEngine({ ...SAMPLE, version: 0 })))).toBe('REF_ENGINE_VERSION');
  });

  it('refuses a truncated buffer and a root offset outside it', () => {
    expect(codeOf(() => decodeEngine(new Uint8Array(5)))).toBe('REF_ENGINE_TRUNCATED');
    const bad = encodeEngine(SAMPLE).slice();
    new DataView(bad.buffer).setUint32(0, bad.length + 100, true);
    expect(codeOf(() => decodeEngine(bad))).toBe('REF_ENGINE_MALFORMED');
  });

  it('refuses a step with no op', () => {
    const b = new flatbuffers.Builder(64);
    FbStep.startStep(b);
    const step = FbStep.endStep(b);
    const steps = FbEngine.createStepsVector(b, [step]);
    FbEngine.startEngine(b);
    FbEngine.addSteps(b, steps);
    FbEngine.finishEngineBuffer(b, FbEngine.endEngine(b));
    expect(codeOf(() => decodeEngine(b.asUint8Array()))).toBe('REF_ENGINE_OP');
  });

  it('refuses a vector whose length field lies past the end of the engine, naming the field where the engine is', () => {
    const bytes = encodeEngine({ steps: [{ op: 'Attend', caches: [0, 1], query: 2, output: 3 }] });
    const attend: FbAttend = FbEngine.getRootAsEngine(new flatbuffers.ByteBuffer(bytes)).steps(0)!.op(new FbAttend());
    const field = attend.bb_pos + attend.bb!.__offset(attend.bb_pos, 4);
    // The caches offset now points 2 bytes before the end: no room for the vector's length.
    const bad = bytes.slice();
    new DataView(bad.buffer).setUint32(field, bad.length - 2 - field, true);
    const err = refusal(() => decodeEngine(bad, { location: 'decode > delegate 0 (TensorRTBackend) > engine' }));
    expect(err.code).toBe('REF_ENGINE_MALFORMED');
    expect(err.location).toBe('decode > delegate 0 (TensorRTBackend) > engine > engine.steps[0].op(Attend).caches');
    expect(err.message).toMatch(/run past the end of the engine/);
  });

  it('refuses an offset of 0 and an engine whose offsets share data past the decode budget', () => {
    const bytes = encodeEngine({ steps: [{ op: 'Attend', caches: [0, 1], query: 2, output: 3 }] });
    const attend: FbAttend = FbEngine.getRootAsEngine(new flatbuffers.ByteBuffer(bytes)).steps(0)!.op(new FbAttend());
    const field = attend.bb_pos + attend.bb!.__offset(attend.bb_pos, 4);
    const zero = bytes.slice();
    new DataView(zero.buffer).setUint32(field, 0, true);
    expect(refusal(() => decodeEngine(zero)).message).toMatch(/may not point to itself/);
    // 4096 steps, each the same table: a few KiB that would decode as a hundred times more.
    const b = new flatbuffers.Builder(64);
    const one = FbStep.createStep(b, Op.Affine, FbAffine.createAffine(b, 0, 1, 1, 0));
    const steps = FbEngine.createStepsVector(
      b,
      Array.from({ length: 4096 }, () => one),
    );
    FbEngine.startEngine(b);
    FbEngine.addVersion(b, 1);
    FbEngine.addSteps(b, steps);
    FbEngine.finishEngineBuffer(b, FbEngine.endEngine(b));
    const shared = refusal(() => decodeEngine(b.asUint8Array()));
    expect([shared.code, shared.message]).toEqual([
      'REF_ENGINE_MALFORMED',
      expect.stringMatching(/^decoding would materialise more than \d+ bytes, 2x the \d+-byte engine/),
    ]);
  });

  it('a truncated engine is refused, never read past its end', () => {
    const bytes = encodeEngine(SAMPLE);
    for (let n = 8; n < bytes.length; n += 7) {
      expect(['REF_ENGINE_MALFORMED', 'REF_ENGINE_OP', 'REF_ENGINE_VERSION', 'ok']).toContain(
        codeOf(() => decodeEngine(bytes.slice(0, n))),
      );
      // A prefix can never decode to the whole engine.
      if (codeOf(() => decodeEngine(bytes.slice(0, n))) === 'ok') expect(decodeEngine(bytes.slice(0, n))).not.toEqual(decodeEngine(bytes));
    }
  });

  it('corrupted bytes give a TrtxError or a decoded engine, never a crash', () => {
    const bytes = encodeEngine(SAMPLE);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(bytes.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        (edits) => {
          const b = bytes.slice();
          for (const [at, v] of edits) b[at] = v;
          try {
            decodeEngine(b);
          } catch (e) {
            if (!(e instanceof TrtxError)) throw e;
          }
        },
      ),
      { numRuns: 400, seed: 7 },
    );
  });
});

describe('engine against its bindings', () => {
  const engine = decodeEngine(encodeEngine(SAMPLE));

  it('accepts an engine whose indices match the blob', () => {
    expect(() => checkEngineBindings(engine, BINDINGS)).not.toThrow();
  });

  const refusals: [string, Partial<EngineInit>, RegExp][] = [
    ['an index past the bindings', { steps: [{ op: 'Affine', input: 0, output: 10 }] }, /binding 10 does not exist/],
    ['a KvWrite into an output', { steps: [{ op: 'KvWrite', cache: 4, position: 3, source: 2, seqDim: 2 }] }, /cache .* must be an input/],
    [
      'a position that is not an integer',
      { steps: [{ op: 'KvWrite', cache: 0, position: 2, source: 2, seqDim: 2 }] },
      /a position is int64 or int32/,
    ],
    ['a seq_dim past the cache rank', { steps: [{ op: 'KvWrite', cache: 0, position: 3, source: 2, seqDim: 4 }] }, /seq_dim 4/],
    ['an Attend writing an input', { steps: [{ op: 'Attend', caches: [0], query: 2, output: 1 }] }, /must be an output/],
    ['an Attend over an output', { steps: [{ op: 'Attend', caches: [4], query: 2, output: 6 }] }, /must be an input/],
    ['an Affine with unequal counts', { steps: [{ op: 'Affine', input: 2, output: 6 }] }, /equal counts/],
    ['a RingShift with unequal states', { steps: [{ op: 'RingShift', stateIn: 8, source: 2, stateOut: 7 }] }, /state_in is/],
    [
      'a scratch unit_dim past the binding',
      { steps: [], scratch: { baseBytes: 1, perUnitBytes: 4, unitBinding: 3, unitDim: 1 } },
      /unit_dim 1/,
    ],
  ];
  it.each(refusals)('refuses %s', (_, init, message) => {
    const e = decodeEngine(encodeEngine({ steps: [], ...init }));
    expect(codeOf(() => checkEngineBindings(e, BINDINGS))).toBe('REF_ENGINE_BINDING');
    expect(() => checkEngineBindings(e, BINDINGS)).toThrow(message);
  });

  it('the scratch need follows the bound shape of its unit binding', () => {
    const shapes = BINDINGS.map((b) => b.shape);
    expect(scratchBytes(engine, shapes)).toBe(65536n + 32n * 1n);
    shapes[2] = [1, 5, 8];
    expect(scratchBytes(engine, shapes)).toBe(65536n + 32n * 5n);
    expect(scratchBytes(decodeEngine(encodeEngine({ steps: [], scratch: { baseBytes: 99 } })), shapes)).toBe(99n);
    expect(scratchBytes(decodeEngine(encodeEngine({ steps: [] })), shapes)).toBe(0n);
  });
});
