// The runner's tensor files (TRXT, docs/reference-lowering.md §3): the inputs
// `trtx-runner run --inputs FILE` feeds instead of its pattern, and the outputs
// `--outputs FILE` writes, one record per value. Little-endian, no padding:
//
//   "TRXT"  u32 version (1)  u32 count
//   record: u32 method_len, method (UTF-8)
//           u32 step, u32 index
//           u32 kind (0 tensor, 1 int, 2 double, 3 bool, 4 none)
//           i32 dtype (ExecuTorch ScalarType code; -1 for non-tensors)
//           u32 ndim, i64 sizes[ndim]
//           u64 nbytes, bytes[nbytes]
//
// The reader takes files the runner wrote, but proves every length against
// the bytes left before it allocates or reads anything.

import { DTYPES, dtypeOfScalarType, ITEM_SIZE, numelOf, SCALAR_TYPE_CODE, type DType } from '../util/dtype.js';
import type { TensorFileCode } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';

export const TENSOR_FILE_MAGIC = 'TRXT';
export const TENSOR_FILE_VERSION = 1;
const KINDS = ['tensor', 'int', 'float', 'bool', 'none'] as const;
/** Bounds past which a record is refused rather than believed. */
const MAX_METHOD_BYTES = 4096;
const MAX_DIMS = 16;

export type TensorFileValue =
  | { kind: 'tensor'; dtype: DType; shape: number[]; data: Uint8Array }
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'none' };

export interface TensorRecord {
  method: string;
  step: number;
  /** The input or output index of the method. */
  index: number;
  value: TensorFileValue;
}

export function encodeTensorFile(records: readonly TensorRecord[]): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  const head = new DataView(new ArrayBuffer(12));
  enc.encodeInto(TENSOR_FILE_MAGIC, new Uint8Array(head.buffer));
  head.setUint32(4, TENSOR_FILE_VERSION, true);
  head.setUint32(8, records.length, true);
  parts.push(new Uint8Array(head.buffer));
  for (const r of records) {
    const name = enc.encode(r.method);
    const v = r.value;
    const shape = v.kind === 'tensor' ? v.shape : [];
    let payload: Uint8Array;
    if (v.kind === 'tensor') payload = v.data;
    else if (v.kind === 'int' || v.kind === 'float') {
      const d = new DataView(new ArrayBuffer(8));
      if (v.kind === 'int') d.setBigInt64(0, BigInt(v.value), true);
      else d.setFloat64(0, v.value, true);
      payload = new Uint8Array(d.buffer);
    } else if (v.kind === 'bool') payload = Uint8Array.of(v.value ? 1 : 0);
    else payload = new Uint8Array(0);
    const fixed = new DataView(new ArrayBuffer(4 + name.length + 20 + 8 * shape.length + 8));
    let o = 0;
    fixed.setUint32(o, name.length, true);
    new Uint8Array(fixed.buffer).set(name, 4);
    o = 4 + name.length;
    fixed.setUint32(o, r.step, true);
    fixed.setUint32(o + 4, r.index, true);
    fixed.setUint32(o + 8, KINDS.indexOf(v.kind), true);
    fixed.setInt32(o + 12, v.kind === 'tensor' ? SCALAR_TYPE_CODE[v.dtype] : -1, true);
    fixed.setUint32(o + 16, shape.length, true);
    o += 20;
    for (const d of shape) {
      fixed.setBigInt64(o, BigInt(d), true);
      o += 8;
    }
    fixed.setBigUint64(o, BigInt(payload.length), true);
    parts.push(new Uint8Array(fixed.buffer), payload);
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

class Reader {
  at = 0;
  private readonly view: DataView;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly file: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  fail(code: TensorFileCode, message: string): never {
    throw new TrtxError(code, `${this.file} @${this.at}`, message, {
      hint: 'the tensor file is not one the runner wrote for this program; run the runner again',
    });
  }
  need(n: number, what: string): void {
    if (n > this.bytes.length - this.at)
      this.fail('TENSOR_FILE_TRUNCATED', `${what} needs ${n} bytes; ${this.bytes.length - this.at} are left`);
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.view.getUint32(this.at, true);
    this.at += 4;
    return v;
  }
  i32(what: string): number {
    this.need(4, what);
    const v = this.view.getInt32(this.at, true);
    this.at += 4;
    return v;
  }
  i64(what: string): bigint {
    this.need(8, what);
    const v = this.view.getBigInt64(this.at, true);
    this.at += 8;
    return v;
  }
  take(n: number, what: string): Uint8Array {
    this.need(n, what);
    const v = this.bytes.slice(this.at, this.at + n);
    this.at += n;
    return v;
  }
  get left(): number {
    return this.bytes.length - this.at;
  }
}

/** Minimum bytes of one record (empty method name, no dims, no data). */
const MIN_RECORD = 4 + 20 + 8;

export function decodeTensorFile(bytes: Uint8Array, file = 'tensor file'): TensorRecord[] {
  const r: Reader = new Reader(bytes, file);
  r.need(12, 'the header');
  const magic = String.fromCharCode(...bytes.subarray(0, 4));
  if (magic !== TENSOR_FILE_MAGIC) r.fail('TENSOR_FILE_MAGIC', `starts with ${JSON.stringify(magic)}, not "${TENSOR_FILE_MAGIC}"`);
  r.at = 4;
  const version = r.u32('the version');
  if (version !== TENSOR_FILE_VERSION) r.fail('TENSOR_FILE_MAGIC', `version ${version} is not one trtx reads (${TENSOR_FILE_VERSION})`);
  const count = r.u32('the record count');
  if (count > r.left / MIN_RECORD) r.fail('TENSOR_FILE_TRUNCATED', `${count} records cannot fit in the ${r.left} bytes left`);
  const dec = new TextDecoder('utf-8', { fatal: true });
  const records: TensorRecord[] = [];
  for (let i = 0; i < count; i++) {
    const what = `record ${i}`;
    const nameLen = r.u32(`${what}: method length`);
    if (nameLen > MAX_METHOD_BYTES) r.fail('TENSOR_FILE_VALUE', `${what}: a method name of ${nameLen} bytes`);
    let method: string;
    try {
      method = dec.decode(r.take(nameLen, `${what}: method`));
    } catch (e) {
      if (e instanceof TrtxError) throw e;
      r.fail('TENSOR_FILE_VALUE', `${what}: the method name is not UTF-8`);
    }
    const step = r.u32(`${what}: step`);
    const index = r.u32(`${what}: index`);
    const kindCode = r.u32(`${what}: kind`);
    const dtypeCode = r.i32(`${what}: dtype`);
    const ndim = r.u32(`${what}: ndim`);
    if (kindCode >= KINDS.length) r.fail('TENSOR_FILE_VALUE', `${what}: kind ${kindCode} is not 0..${KINDS.length - 1}`);
    if (ndim > MAX_DIMS) r.fail('TENSOR_FILE_VALUE', `${what}: ${ndim} dimensions (at most ${MAX_DIMS})`);
    const shape: number[] = [];
    for (let d = 0; d < ndim; d++) {
      const size = r.i64(`${what}: sizes[${d}]`);
      if (size < 0n || size > BigInt(Number.MAX_SAFE_INTEGER)) r.fail('TENSOR_FILE_VALUE', `${what}: size ${size} of dimension ${d}`);
      shape.push(Number(size));
    }
    const nbytes = r.i64(`${what}: nbytes`);
    if (nbytes < 0n || nbytes > BigInt(r.left))
      r.fail('TENSOR_FILE_TRUNCATED', `${what}: ${BigInt.asUintN(64, nbytes)} data bytes; ${r.left} are left`);
    const kind = KINDS[kindCode] ?? r.fail('TENSOR_FILE_VALUE', `${what}: kind ${kindCode} is not 0..${KINDS.length - 1}`);
    const n = Number(nbytes);
    let value: TensorFileValue;
    if (kind === 'tensor') {
      const dtype = dtypeOfScalarType(dtypeCode);
      if (dtype === null) r.fail('TENSOR_FILE_VALUE', `${what}: dtype ${dtypeCode} is not one of ${DTYPES.join(', ')}`);
      const numel = numelOf(shape);
      if (numel === null || numel * ITEM_SIZE[dtype] !== n)
        r.fail(
          'TENSOR_FILE_VALUE',
          `${what}: ${dtype} [${shape.join(', ')}] needs ${numel === null ? '?' : numel * ITEM_SIZE[dtype]} bytes, not ${n}`,
        );
      value = { kind, dtype, shape, data: r.take(n, `${what}: data`) };
    } else {
      if (dtypeCode !== -1 || ndim !== 0) r.fail('TENSOR_FILE_VALUE', `${what}: a ${kind} with dtype ${dtypeCode} and ${ndim} dimensions`);
      const want = kind === 'none' ? 0 : kind === 'bool' ? 1 : 8;
      if (n !== want) r.fail('TENSOR_FILE_VALUE', `${what}: a ${kind} of ${n} bytes, not ${want}`);
      const d = r.take(n, `${what}: value`);
      const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
      value =
        kind === 'int'
          ? { kind, value: Number(v.getBigInt64(0, true)) }
          : kind === 'float'
            ? { kind, value: v.getFloat64(0, true) }
            : kind === 'bool'
              ? { kind, value: d[0] !== 0 }
              : { kind };
    }
    records.push({ method, step, index, value });
  }
  if (r.left !== 0) r.fail('TENSOR_FILE_VALUE', `${r.left} bytes after the last of ${count} records`);
  return records;
}
