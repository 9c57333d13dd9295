// The reference outputs file (docs/reference-lowering.md §2): its reader's
// refusals, its JSON Schema (generated from the zod schema, and agreeing with
// it), and the comparison of a program's outputs with PyTorch's (§4).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareOutput, toleranceOf } from '../src/reference/compare.js';
import { parseReference, readReference, type RecordedMethod, type Value } from '../src/reference/read.js';
import { ReferenceFile } from '../src/reference/schema.js';
import { REFERENCE_SCHEMA_FILE, renderReferenceSchema } from '../scripts/gen-schemas.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('reference-outputs');
const f32 = (xs: number[]) => new Uint8Array(Float32Array.from(xs).buffer);
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

export function sampleFile(steps = 2): Record<string, unknown> {
  return {
    schema: 'trtx.reference/1',
    producer: { torch: '2.13.0', executorch: '1.5.1' },
    model: 'model.pt2',
    program: 'model.pte',
    steps,
    inputs: 'trtx-step-v1',
    methods: [
      {
        name: 'forward',
        steps: Array.from({ length: steps }, (_, s) => ({
          inputs: [
            { kind: 'tensor', dtype: 'float32', shape: [1, 2], data: b64(f32([s, s + 1])) },
            { kind: 'int', value: s },
          ],
          outputs: [{ kind: 'tensor', dtype: 'float32', shape: [1, 2], data: b64(f32([2 * s, 2 * s + 1])) }],
        })),
      },
    ],
  };
}

const codeOf = (text: string) => {
  try {
    parseReference(text, 'r.json');
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'none';
};

describe('reading the reference outputs file', () => {
  it('decodes every tensor', () => {
    const r = parseReference(JSON.stringify(sampleFile()), 'r.json');
    expect(r.steps).toBe(2);
    const out = r.methods[0].steps[1].outputs[0];
    expect(out.kind === 'tensor' && Array.from(new Float32Array(out.data.slice().buffer))).toEqual([2, 3]);
    expect(r.methods[0].steps[1].inputs[1]).toEqual({ kind: 'int', value: 1 });
  });

  it('refuses a missing file (REFERENCE_MISSING), text that is not JSON, a schema mismatch and a data size mismatch', async () => {
    await expect(readReference(join(dir, 'absent.json'))).rejects.toMatchObject({ code: 'REFERENCE_MISSING', kind: 'usage' });
    expect(codeOf('{')).toBe('REFERENCE_JSON');
    expect(codeOf(JSON.stringify({ ...sampleFile(), schema: 'trtx.reference/2' }))).toBe('REFERENCE_SCHEMA');
    expect(codeOf(JSON.stringify({ ...sampleFile(), steps: 3 }))).toBe('REFERENCE_SCHEMA');
    const short = sampleFile() as { methods: { steps: { outputs: { data: string }[] }[] }[] };
    short.methods[0].steps[0].outputs[0].data = b64(f32([1]));
    expect(codeOf(JSON.stringify(short))).toBe('REFERENCE_DATA');
    const text = JSON.stringify(short);
    expect(() => parseReference(text, 'r.json')).toThrow(/float32 \[1, 2\] needs 8 bytes; its data holds 4/);
  });
});

describe('schemas/reference-outputs.schema.json', () => {
  const schema = JSON.parse(readFileSync(REFERENCE_SCHEMA_FILE, 'utf8')) as Record<string, unknown>;

  it('is what npm run gen writes from the zod schema', () => {
    expect(readFileSync(REFERENCE_SCHEMA_FILE, 'utf8')).toBe(renderReferenceSchema());
  });

  it('agrees with the zod schema on a valid file and on damaged ones', () => {
    const cases: unknown[] = [
      sampleFile(),
      { ...sampleFile(), schema: 'x' },
      { ...sampleFile(), extra: 1 },
      { ...sampleFile(), methods: [] },
      {
        ...sampleFile(),
        methods: [{ name: 'forward', steps: [{ inputs: [{ kind: 'tensor', dtype: 'float8', shape: [], data: '' }], outputs: [] }] }],
      },
      {
        ...sampleFile(),
        methods: [{ name: 'forward', steps: [{ inputs: [{ kind: 'none' }], outputs: [{ kind: 'float', value: 1.5 }] }] }],
      },
    ];
    const validate = new Ajv2020({ strict: false }).compile(schema);
    for (const c of cases) expect(validate(c)).toBe(ReferenceFile.safeParse(c).success);
    expect(validate(sampleFile())).toBe(true);
  });
});

const tensor = (dtype: 'float32' | 'int64', xs: number[], shape = [xs.length]): Value => ({
  kind: 'tensor',
  dtype,
  shape,
  data: dtype === 'float32' ? f32(xs) : new Uint8Array(BigInt64Array.from(xs.map(BigInt)).buffer),
});
const method = (outs: Value[][]): RecordedMethod => ({ name: 'forward', steps: outs.map((o) => ({ inputs: [], outputs: o })) });

describe('comparing with PyTorch', () => {
  it('reports max abs, max rel and the worst element, and passes within atol + rtol * |r|', () => {
    const r = method([[tensor('float32', [1, 2, 4])], [tensor('float32', [1, 2, 4])]]);
    const c = compareOutput(r, 0, 2, (_, s) => tensor('float32', s === 1 ? [1, 2, 4.0002] : [1, 2, 4]));
    expect(c).toMatchObject({ ok: true, steps: 2, elements: 6, mismatched: 0, atol: 1e-4, rtol: 1e-4 });
    expect(c.max_abs).toBeCloseTo(0.0002, 6);
    expect(c.max_rel).toBeCloseTo(0.00005, 6);
    expect(c.worst).toMatchObject({ step: 1, index: 2 });
    const over = compareOutput(r, 0, 2, (_, s) => tensor('float32', s === 1 ? [1, 2.01, 4] : [1, 2, 4]));
    expect(over).toMatchObject({ ok: false, mismatched: 1, worst: { step: 1, index: 1 } });
    expect(compareOutput(r, 0, 2, (_, s) => tensor('float32', s === 1 ? [1, 2.01, 4] : [1, 2, 4]), { atol: 0.1 }).ok).toBe(true);
  });

  it('NaN matches only NaN at the same place', () => {
    const r = method([[tensor('float32', [NaN, 1])]]);
    expect(compareOutput(r, 0, 1, () => tensor('float32', [NaN, 1])).ok).toBe(true);
    const c = compareOutput(r, 0, 1, () => tensor('float32', [0, 1]));
    expect(c).toMatchObject({ ok: false, max_abs: null, worst: { index: 0, actual: 0, expected: 'NaN' } });
    expect(compareOutput(method([[tensor('float32', [1])]]), 0, 1, () => tensor('float32', [NaN])).ok).toBe(false);
  });

  it('integers are exact, dtype and shape mismatches fail with a message', () => {
    const r = method([[tensor('int64', [5, 6])]]);
    expect(compareOutput(r, 0, 1, () => tensor('int64', [5, 6])).ok).toBe(true);
    expect(compareOutput(r, 0, 1, () => tensor('int64', [5, 7]), { atol: 10 })).toMatchObject({ ok: false, max_abs: 1 });
    expect(compareOutput(r, 0, 1, () => tensor('float32', [5, 6])).error).toMatch(/output is float32, PyTorch's int64/);
    expect(compareOutput(r, 0, 1, () => tensor('int64', [5, 6], [2, 1])).error).toMatch(/shape \[2, 1\], PyTorch's \[2\]/);
    expect(compareOutput(r, 0, 1, () => undefined).error).toMatch(/produced no output 0/);
  });

  it('decodes float16 and bfloat16, with their own tolerances', () => {
    const half = (bits: number[]) => new Uint8Array(Uint16Array.from(bits).buffer);
    const r = method([[{ kind: 'tensor', dtype: 'float16', shape: [2], data: half([0x3c00, 0xc000]) }]]); // 1, -2
    const a = compareOutput(r, 0, 1, () => ({ kind: 'tensor', dtype: 'float16', shape: [2], data: half([0x3c01, 0xc000]) }));
    expect(a).toMatchObject({ ok: true, atol: 1e-2, rtol: 1e-2 });
    expect(a.max_abs).toBeCloseTo(2 ** -10, 8);
    const bf = method([[{ kind: 'tensor', dtype: 'bfloat16', shape: [1], data: half([0x3f80]) }]]); // 1
    const b = compareOutput(bf, 0, 1, () => ({ kind: 'tensor', dtype: 'bfloat16', shape: [1], data: half([0x4000]) })); // 2
    expect(b).toMatchObject({ ok: false, max_abs: 1, atol: 5e-2, worst: { actual: 2, expected: 1 } });
    expect(toleranceOf('bool')).toEqual({ atol: 0, rtol: 0 });
  });
});

// For test/verify-reference.test.ts: a reference file on disk.
export function writeSample(path: string, steps = 2): void {
  writeFileSync(path, JSON.stringify(sampleFile(steps)));
}
