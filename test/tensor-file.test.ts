// TRXT, the runner's tensor files (docs/reference-lowering.md §3): a round
// trip of every kind and dtype, and hostile bytes refused with a code.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeTensorFile, encodeTensorFile, type TensorRecord } from '../src/runner/tensor-file.js';
import { dtypeOfScalarType, SCALAR_TYPE_CODE } from '../src/util/dtype.js';
import { ScalarType } from '../src/generated/executorch-flatbuffer/scalar-type.js';
import { codeOf } from './helpers/refusal.js';

const RECORDS: TensorRecord[] = [
  { method: 'forward', step: 0, index: 0, value: { kind: 'tensor', dtype: 'float32', shape: [1, 2], data: new Uint8Array(8).fill(3) } },
  { method: 'decode', step: 4, index: 1, value: { kind: 'tensor', dtype: 'bfloat16', shape: [3], data: new Uint8Array(6).fill(1) } },
  { method: 'décode', step: 1, index: 2, value: { kind: 'tensor', dtype: 'bool', shape: [], data: Uint8Array.of(1) } },
  { method: 'forward', step: 0, index: 3, value: { kind: 'int', value: -7 } },
  { method: 'forward', step: 0, index: 4, value: { kind: 'float', value: 0.25 } },
  { method: 'forward', step: 0, index: 5, value: { kind: 'bool', value: true } },
  { method: 'forward', step: 0, index: 6, value: { kind: 'none' } },
  { method: 'forward', step: 0, index: 7, value: { kind: 'tensor', dtype: 'int64', shape: [0, 4], data: new Uint8Array(0) } },
];

const code = (bytes: Uint8Array) => codeOf(() => decodeTensorFile(bytes));

describe('TRXT', () => {
  it('round-trips every kind', () => {
    expect(decodeTensorFile(encodeTensorFile(RECORDS))).toEqual(RECORDS);
  });

  it('writes the layout of the contract', () => {
    const b = encodeTensorFile([RECORDS[0]]);
    const v = new DataView(b.buffer);
    expect(new TextDecoder().decode(b.subarray(0, 4))).toBe('TRXT');
    expect([v.getUint32(4, true), v.getUint32(8, true), v.getUint32(12, true)]).toEqual([1, 1, 7]);
    // after "forward": step, index, kind, dtype, ndim, sizes, nbytes
    const o = 16 + 7;
    expect([
      v.getUint32(o, true),
      v.getUint32(o + 4, true),
      v.getUint32(o + 8, true),
      v.getInt32(o + 12, true),
      v.getUint32(o + 16, true),
    ]).toEqual([0, 0, 0, 6, 2]);
    expect(v.getBigInt64(o + 28, true)).toBe(2n);
    expect(v.getBigUint64(o + 36, true)).toBe(8n);
    expect(b.length).toBe(o + 44 + 8);
  });

  it("maps dtypes to ExecuTorch's ScalarType codes (the schema's enum, schemas/scalar_type.fbs)", () => {
    expect(SCALAR_TYPE_CODE).toEqual({
      uint8: ScalarType.BYTE,
      int8: ScalarType.CHAR,
      int16: ScalarType.SHORT,
      int32: ScalarType.INT,
      int64: ScalarType.LONG,
      float16: ScalarType.HALF,
      float32: ScalarType.FLOAT,
      float64: ScalarType.DOUBLE,
      bool: ScalarType.BOOL,
      bfloat16: ScalarType.BFLOAT16,
    });
    expect(dtypeOfScalarType(15)).toBe('bfloat16');
    expect(dtypeOfScalarType(23)).toBeNull();
  });

  it('refuses every truncation, a wrong magic or version, trailing bytes, and records that lie', () => {
    const good = encodeTensorFile(RECORDS);
    for (let n = 0; n < good.length; n++) expect(code(good.subarray(0, n))).not.toBe('ok');
    const magic = good.slice();
    magic[0] = 0x58;
    expect(code(magic)).toBe('TENSOR_FILE_MAGIC');
    const version = good.slice();
    version[4] = 2;
    expect(code(version)).toBe('TENSOR_FILE_MAGIC');
    expect(code(Uint8Array.of(...good, 0))).toBe('TENSOR_FILE_VALUE');
    const count = good.slice();
    new DataView(count.buffer).setUint32(8, 0xffffffff, true);
    expect(code(count)).toBe('TENSOR_FILE_TRUNCATED');
    const dtype = encodeTensorFile([RECORDS[0]]);
    new DataView(dtype.buffer).setInt32(16 + 7 + 12, 23, true);
    expect(code(dtype)).toBe('TENSOR_FILE_VALUE');
    const size = encodeTensorFile([RECORDS[0]]);
    new DataView(size.buffer).setBigInt64(16 + 7 + 28, 3n, true);
    expect(code(size)).toBe('TENSOR_FILE_VALUE');
  });

  it('never throws anything but a coded refusal on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), fc.boolean(), (tail, withHead) => {
        const bytes = withHead ? Uint8Array.of(...new TextEncoder().encode('TRXT'), 1, 0, 0, 0, ...tail) : tail;
        code(bytes);
      }),
      { numRuns: 500 },
    );
  });
});
