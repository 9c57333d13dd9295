import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BLOB_ERROR_CODES,
  aliasedOutputs,
  encodeBlobMetadata,
  engineBytes,
  inputs,
  outputs,
  parseBlob,
  parseBlobHeader,
  readBlobFromRange,
  writeBlob,
  writeBlobHead,
  type BlobMetadata,
  type MetadataInit,
  type ParsedBlob,
} from '../src/tensorrt/blob.js';
import { pyJsonString } from '../src/tensorrt/strict-json.js';
import { TrtxError } from '../src/util/errors.js';
import {
  KV_METADATA,
  PLAIN_METADATA,
  SAMPLE_ENGINE,
  VECTORS_PATH,
  buildVectors,
  craftBlob,
  renderVectors,
  type BlobVector,
} from '../fixtures/blob-vectors.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

function outcome(f: () => unknown): { code: string; location: string; message: string } {
  try {
    f();
  } catch (e) {
    if (!(e instanceof TrtxError)) throw e;
    return { code: e.code, location: e.location, message: e.message };
  }
  return { code: 'ok', location: '', message: '' };
}

async function outcomeAsync(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
  } catch (e) {
    if (!(e instanceof TrtxError)) throw e;
    return e.code;
  }
  return 'ok';
}

/** A range reader over `blob` that records every request. */
function recorder(blob: Uint8Array) {
  const calls: [number, number][] = [];
  const read = (offset: number, length: number): Promise<Uint8Array> => {
    calls.push([offset, length]);
    return Promise.resolve(blob.slice(offset, offset + length));
  };
  return { calls, read };
}

function expectRangesAvoidEngine(calls: [number, number][], h: { engineOffset: number; engineSize: bigint }): void {
  for (const [off, len] of calls) {
    const start = BigInt(off);
    const end = start + BigInt(len);
    const eStart = BigInt(h.engineOffset);
    const eEnd = eStart + h.engineSize;
    // Half-open ranges intersect when each starts before the other ends.
    expect(start < eEnd && eStart < end, `read [${start}, ${end}) touches engine [${eStart}, ${eEnd})`).toBe(false);
  }
}

const vectorFile = JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as { version: number; vectors: BlobVector[] };

// Where each refusal vector must point. Kept here, not in the generator, so a
// change to a location is a visible test change.
const LOCATIONS: Record<string, string> = {
  truncated_empty: 'header',
  truncated_31_bytes: 'header',
  magic_tr03: 'header.magic',
  magic_lowercase: 'header.magic',
  magic_zero: 'header.magic',
  metadata_offset_zero: 'header.metadata_offset',
  metadata_offset_31: 'header.metadata_offset',
  engine_offset_unaligned: 'header.engine_offset',
  engine_offset_odd: 'header.engine_offset',
  metadata_size_past_end_by_one: 'header.metadata_size',
  metadata_size_u32_max: 'header.metadata_size',
  metadata_offset_u32_max_wraps: 'header.metadata_size',
  metadata_offset_past_end: 'header.metadata_size',
  engine_size_past_end_by_one: 'header.engine_size',
  engine_size_u64_max: 'header.engine_size',
  engine_size_wraps_u64: 'header.engine_size',
  engine_offset_near_u32_max: 'header.engine_size',
  engine_offset_past_end_size_zero: 'header.engine_size',
  metadata_overlaps_engine: 'header.engine_offset',
  metadata_past_engine: 'header.engine_offset',
  metadata_past_empty_engine: 'header.engine_offset',
  json_empty: 'metadata',
  json_not_json: 'metadata',
  json_truncated: 'metadata',
  json_trailing_garbage: 'metadata',
  json_trailing_nul: 'metadata',
  json_bom: 'metadata',
  json_invalid_utf8: 'metadata',
  json_raw_control_in_name: 'metadata',
  json_raw_nul_in_name: 'metadata',
  json_repeated_key: 'metadata',
  json_repeated_key_in_binding: 'metadata',
  json_single_quotes: 'metadata',
  json_nan: 'metadata',
  json_lone_surrogate_escape: 'metadata',
  json_nesting_too_deep: 'metadata',
  json_root_list: 'metadata',
  json_io_bindings_missing: 'metadata.io_bindings',
  json_io_bindings_object: 'metadata.io_bindings',
  json_binding_not_object: 'metadata.io_bindings[0]',
  json_binding_name_missing: 'metadata.io_bindings[0].name',
  json_binding_name_number: 'metadata.io_bindings[0].name',
  json_binding_is_input_missing: 'metadata.io_bindings[0].is_input',
  json_binding_is_input_string: 'metadata.io_bindings[0].is_input',
  json_binding_dtype_number: 'metadata.io_bindings[0].dtype',
  json_binding_shape_fraction: 'metadata.io_bindings[0].shape[0]',
  json_binding_shape_string: 'metadata.io_bindings[0].shape',
  json_aliased_io_object: 'metadata.aliased_io',
  json_alias_entry_not_object: 'metadata.aliased_io[0]',
  json_alias_output_number: 'metadata.aliased_io[0].output',
  json_alias_kind_number: 'metadata.aliased_io[0].kind',
  json_hardware_compatible_string: 'metadata.hardware_compatible',
  json_device_id_string: 'metadata.device_id',
  json_device_id_too_large: 'metadata.device_id',
  json_serialized_metadata_null: 'metadata.serialized_metadata',
  json_target_platform_list: 'metadata.target_platform',
  binding_name_empty: 'binding #1',
  binding_name_only_nul: 'binding "\\u0000"',
  binding_names_differ_after_nul: 'binding "y\\u0000a"',
  binding_name_trailing_nul: 'binding "x\\u0000"',
  binding_duplicate_outputs: 'binding y',
  binding_duplicate_inputs: 'binding x',
  binding_duplicate_input_and_output: 'binding x',
  binding_duplicate_escaped_vs_raw: 'binding x',
  alias_output_missing: 'aliased_io[0]',
  alias_input_missing: 'aliased_io[0]',
  alias_output_empty: 'aliased_io[0]',
  alias_second_entry_input_empty: 'aliased_io[1]',
  alias_output_unknown: 'aliased_io[0]',
  alias_input_unknown: 'aliased_io[0]',
  alias_output_with_nul: 'aliased_io[0]',
  alias_no_bindings: 'aliased_io[0]',
  alias_output_names_input: 'aliased_io[0]',
  alias_input_names_output: 'aliased_io[0]',
  alias_sides_swapped: 'aliased_io[0]',
  alias_entry_repeated: 'aliased_io[1]',
  alias_output_repeated_other_input: 'aliased_io[1]',
  alias_output_repeated_other_kind: 'aliased_io[1]',
  alias_input_repeated: 'aliased_io[1]',
  alias_kind_unknown: 'aliased_io[0]',
  alias_kind_uppercase: 'aliased_io[0]',
  alias_kind_bogus_case: 'aliased_io[0]',
  alias_in_tr01: 'aliased_io',
  alias_in_tr01_written_form: 'aliased_io',
  escaped_name_non_ascii: 'binding "caché"',
  escaped_name_control: 'binding "a\\nb"',
  escaped_key: 'binding x',
  escaped_alias_side: 'aliased_io[0]',
  key_order_aliases_before_bindings: 'metadata.aliased_io',
  key_order_device_id_before_bindings: 'metadata.device_id',
  upstream_misread_alias_named_device_id: 'metadata',
  upstream_misread_key_text_as_value: 'binding x',
  json_device_id_exponent: 'metadata.device_id',
  json_binding_shape_float_literal: 'metadata.io_bindings[0].shape[0]',
};

describe('shared blob vectors', () => {
  it('the committed file is what fixtures/blob-vectors.ts generates', () => {
    expect(readFileSync(VECTORS_PATH, 'utf8')).toBe(renderVectors(buildVectors()));
  });

  it('has version 1, unique names, and every refusal code at least once, plus TR01 and TR02 ok blobs', () => {
    expect(vectorFile.version).toBe(1);
    const names = vectorFile.vectors.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    const expects = new Set(vectorFile.vectors.map((v) => v.expect));
    for (const code of BLOB_ERROR_CODES) expect(expects, code).toContain(code);
    const okMagics = vectorFile.vectors.filter((v) => v.expect === 'ok').map((v) => v.hex.slice(0, 8));
    expect(okMagics).toContain('54523031');
    expect(okMagics).toContain('54523032');
  });

  it.each(vectorFile.vectors.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
    const blob = new Uint8Array(Buffer.from(v.hex, 'hex'));
    const got = outcome(() => parseBlob(blob));
    expect(got.code).toBe(v.expect);
    if (v.expect !== 'ok') {
      expect(got.location).toBe(LOCATIONS[v.name]);
      expect(got.message.length).toBeGreaterThan(10);
    }

    // The range reader reaches the same verdict and never asks for the engine.
    const r = recorder(blob);
    const viaRange = await outcomeAsync(() => readBlobFromRange(r.read, blob.length));
    expect(viaRange).toBe(v.expect);
    expect(r.calls.length).toBeLessThanOrEqual(2);
    if (blob.length >= 32) {
      expect(r.calls[0]).toEqual([0, 32]);
      // The engine range as the header states it, valid or not.
      const dv = new DataView(blob.buffer, blob.byteOffset);
      const engine = { engineOffset: dv.getUint32(12, true), engineSize: dv.getBigUint64(16, true) };
      expectRangesAvoidEngine(r.calls, engine);
      if (v.expect === 'ok')
        expect(r.calls).toEqual([
          [0, 32],
          [dv.getUint32(4, true), dv.getUint32(8, true)],
        ]);
    } else {
      expect(r.calls).toEqual([]);
    }
  });

  it('every refusal vector has an expected location', () => {
    for (const v of vectorFile.vectors) if (v.expect !== 'ok') expect(LOCATIONS, v.name).toHaveProperty([v.name]);
  });
});

describe('writeBlob', () => {
  it('writes the documented layout: header fields, reserved 0x01, compact JSON in key order, zero padding, 16-aligned engine', () => {
    const blob = writeBlob({ metadata: PLAIN_METADATA, engine: SAMPLE_ENGINE });
    const dv = new DataView(blob.buffer);
    // Names only, as the real export writes them (backend.py preprocess).
    const json =
      '{"io_bindings":[{"name":"x","dtype":"","shape":[],"is_input":true},' +
      '{"name":"y","dtype":"","shape":[],"is_input":false}],"aliased_io":[],' +
      '"hardware_compatible":false,"device_id":0,"serialized_metadata":"","target_platform":"linux_x86_64"}';
    expect(dec.decode(blob.subarray(0, 4))).toBe('TR01');
    expect(dv.getUint32(4, true)).toBe(32);
    expect(dv.getUint32(8, true)).toBe(json.length);
    const engineOffset = dv.getUint32(12, true);
    expect(engineOffset).toBe(Math.ceil((32 + json.length) / 16) * 16);
    expect(dv.getBigUint64(16, true)).toBe(BigInt(SAMPLE_ENGINE.length));
    expect([...blob.subarray(24, 32)]).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(dec.decode(blob.subarray(32, 32 + json.length))).toBe(json);
    expect(blob.subarray(32 + json.length, engineOffset).every((b) => b === 0)).toBe(true);
    expect(blob.subarray(engineOffset)).toEqual(SAMPLE_ENGINE);
    expect(blob.length).toBe(engineOffset + SAMPLE_ENGINE.length);
  });

  it('picks TR02 when aliased_io is non-empty and writes the alias list as {output,input,kind}', () => {
    const blob = writeBlob({ metadata: KV_METADATA, engine: SAMPLE_ENGINE });
    expect(dec.decode(blob.subarray(0, 4))).toBe('TR02');
    expect(dec.decode(blob)).toContain(
      '"aliased_io":[{"output":"k_out","input":"k_cache","kind":"kv_cache_update"},{"output":"v_out","input":"v_cache","kind":"kv_cache_update"}],"hardware_compatible"',
    );
  });

  it('fills defaults for omitted metadata fields', () => {
    const json = dec.decode(encodeBlobMetadata({ io_bindings: [] }));
    expect(json).toBe(
      '{"io_bindings":[],"aliased_io":[],"hardware_compatible":false,"device_id":0,"serialized_metadata":"","target_platform":""}',
    );
  });

  it('escapes strings as Python json.dumps(ensure_ascii=True) does', () => {
    expect(pyJsonString('a"b\\c/d')).toBe('"a\\"b\\\\c/d"');
    expect(pyJsonString('\n\r\t\b\f\u0001\u001f\u007f')).toBe('"\\n\\r\\t\\b\\f\\u0001\\u001f\\u007f"');
    expect(pyJsonString('é出\u{1F600}')).toBe('"\\u00e9\\u51fa\\ud83d\\ude00"');
    expect(pyJsonString('\0')).toBe('"\\u0000"');
  });

  it('writeBlobHead is the blob before the engine, so a writer can stream a large engine after it', () => {
    const head = writeBlobHead({ metadata: KV_METADATA, engineSize: 5n * 2n ** 30n });
    const parsed = parseBlob(head, BigInt(head.length) + 5n * 2n ** 30n);
    expect(parsed.engineOffset).toBe(head.length);
    expect(parsed.engineSize).toBe(5n * 2n ** 30n);
    expect(parsed.metadata.aliased_io).toHaveLength(2);
  });

  it('refuses metadata the parser would refuse, with the same code', () => {
    const dup: MetadataInit = { io_bindings: [...PLAIN_METADATA.io_bindings, { name: 'x', dtype: '', shape: [], is_input: false }] };
    expect(outcome(() => writeBlob({ metadata: dup, engine: SAMPLE_ENGINE })).code).toBe('TRT_BINDING_DUPLICATE');
    expect(outcome(() => writeBlob({ magic: 'TR01', metadata: KV_METADATA, engine: SAMPLE_ENGINE })).code).toBe('TRT_ALIAS_IN_TR01');
    const nul: MetadataInit = { io_bindings: [{ name: 'a\0b', dtype: '', shape: [], is_input: true }] };
    expect(outcome(() => writeBlob({ metadata: nul, engine: SAMPLE_ENGINE })).code).toBe('TRT_BINDING_NAME_NUL');
    const badKind = { ...KV_METADATA, aliased_io: [{ output: 'k_out', input: 'k_cache', kind: 'cache' }] } as unknown as MetadataInit;
    expect(outcome(() => writeBlob({ metadata: badKind, engine: SAMPLE_ENGINE })).code).toBe('TRT_ALIAS_KIND');
    const lone: MetadataInit = { io_bindings: [{ name: 'a\ud800', dtype: '', shape: [], is_input: true }] };
    expect(outcome(() => writeBlob({ metadata: lone, engine: SAMPLE_ENGINE }))).toMatchObject({
      code: 'TRT_BLOB_METADATA_JSON',
      location: 'metadata.io_bindings[0].name',
    });
    const fraction: MetadataInit = { io_bindings: [{ name: 'a', dtype: '', shape: [1.5], is_input: true }] };
    expect(outcome(() => writeBlob({ metadata: fraction, engine: SAMPLE_ENGINE })).code).toBe('TRT_BLOB_METADATA_JSON');
    expect(outcome(() => writeBlobHead({ metadata: PLAIN_METADATA, engineSize: 1n << 64n })).code).toBe('TRT_BLOB_ENGINE_EXTENT');
  });
});

describe('parseBlob', () => {
  it('returns header fields, metadata and the engine extent', () => {
    const blob = writeBlob({ metadata: KV_METADATA, engine: SAMPLE_ENGINE });
    const p = parseBlob(blob);
    expect(p.magic).toBe('TR02');
    expect(p.metadataOffset).toBe(32);
    expect(p.engineOffset % 16).toBe(0);
    expect(p.engineSize).toBe(32n);
    expect(p.reserved[0]).toBe(1);
    expect(p.metadata).toEqual(KV_METADATA);
    expect(engineBytes(blob, p)).toEqual(SAMPLE_ENGINE);
  });

  it('needs only the bytes up to the end of the metadata; the engine may be absent', () => {
    const head = writeBlobHead({ metadata: KV_METADATA, engineSize: 4n * 2n ** 30n });
    const p = parseBlob(head.subarray(0, 32 + p0MetadataSize(head)), BigInt(head.length) + 4n * 2n ** 30n);
    expect(p.metadata.io_bindings.map((b) => b.name)).toEqual(['x', 'k_cache', 'v_cache', 'y', 'k_out', 'v_out']);
    // Fewer bytes than the metadata needs is a truncation, named as such.
    expect(outcome(() => parseBlob(head.subarray(0, 40), BigInt(head.length) + 4n * 2n ** 30n))).toMatchObject({
      code: 'TRT_BLOB_TRUNCATED',
      location: 'metadata',
    });
  });

  it('checks extents against blobSize, not against the bytes given', () => {
    const blob = writeBlob({ metadata: PLAIN_METADATA, engine: SAMPLE_ENGINE });
    expect(outcome(() => parseBlob(blob, blob.length - 1)).code).toBe('TRT_BLOB_ENGINE_EXTENT');
    expect(outcome(() => parseBlob(blob, 2n ** 64n)).code).toBe('ok');
  });

  it('prefixes every location with the caller location', () => {
    const blob = craftBlob({ metadata: '{"io_bindings":[{"name":"k","is_input":true},{"name":"k","is_input":false}]}' });
    expect(outcome(() => parseBlob(blob, undefined, { location: 'decode > delegate 0 (TensorRTBackend)' }))).toMatchObject({
      code: 'TRT_BINDING_DUPLICATE',
      location: 'decode > delegate 0 (TensorRTBackend) > binding k',
    });
    expect(outcome(() => parseBlob(new Uint8Array(3), undefined, { location: 'm > delegate 2 (TensorRTBackend)' })).location).toBe(
      'm > delegate 2 (TensorRTBackend) > header',
    );
  });

  it('names the field, binding or entry in the message', () => {
    const dupOut = craftBlob({
      magic: 'TR02',
      metadata: encodeBlobMetadataText({
        ...KV_METADATA,
        aliased_io: [KV_METADATA.aliased_io![0], { output: 'k_out', input: 'v_cache', kind: 'user' }],
      }),
    });
    const o = outcome(() => parseBlob(dupOut));
    expect(o.code).toBe('TRT_ALIAS_DUPLICATE_OUTPUT');
    expect(o.message).toContain('"k_out"');
    expect(o.message).toContain('aliased_io[0]');
    const ext = outcome(() => parseBlob(craftBlob({ metadata: '{"io_bindings":[]}', engineSize: (1n << 64n) - 1n })));
    expect(ext.message).toContain('18446744073709551615');
  });

  it('parseBlobHeader reads 32 bytes and checks extents only when told the blob size', () => {
    const blob = craftBlob({ metadata: '{"io_bindings":[]}', engineSize: (1n << 64n) - 1n });
    const h = parseBlobHeader(blob.subarray(0, 32));
    expect(h.engineSize).toBe((1n << 64n) - 1n);
    expect(outcome(() => parseBlobHeader(blob.subarray(0, 32), { blobSize: blob.length })).code).toBe('TRT_BLOB_ENGINE_EXTENT');
    expect(outcome(() => parseBlobHeader(blob.subarray(0, 31))).code).toBe('TRT_BLOB_TRUNCATED');
  });
});

function p0MetadataSize(head: Uint8Array): number {
  return new DataView(head.buffer, head.byteOffset).getUint32(8, true);
}

function encodeBlobMetadataText(m: MetadataInit): string {
  return dec.decode(encodeBlobMetadata(m));
}

describe('readBlobFromRange', () => {
  it('makes exactly two reads, header then metadata, on a blob whose engine is 4 GiB', async () => {
    const engineSize = 4n * 2n ** 30n;
    const head = writeBlobHead({ metadata: KV_METADATA, engineSize });
    const calls: [number, number][] = [];
    const read = (offset: number, length: number) => {
      calls.push([offset, length]);
      if (offset + length > head.length) return Promise.reject(new Error(`read past the head: ${offset}+${length}`));
      return Promise.resolve(head.slice(offset, offset + length));
    };
    const p = await readBlobFromRange(read, BigInt(head.length) + engineSize);
    expect(calls).toEqual([
      [0, 32],
      [32, p.metadataSize],
    ]);
    expectRangesAvoidEngine(calls, p);
    expect(p.engineSize).toBe(engineSize);
    expect(p.metadata).toEqual(KV_METADATA);
  });

  it('refuses a header from the first read without reading metadata', async () => {
    const blob = craftBlob({ metadata: '{"io_bindings":[]}', engineSize: (1n << 64n) - 1n });
    const r = recorder(blob);
    expect(await outcomeAsync(() => readBlobFromRange(r.read, blob.length))).toBe('TRT_BLOB_ENGINE_EXTENT');
    expect(r.calls).toEqual([[0, 32]]);
  });

  it('refuses metadata over the size limit before reading it', async () => {
    const blob = writeBlob({ metadata: KV_METADATA, engine: SAMPLE_ENGINE });
    const r = recorder(blob);
    expect(await outcomeAsync(() => readBlobFromRange(r.read, blob.length, { maxMetadataBytes: 64 }))).toBe('TRT_BLOB_METADATA_EXTENT');
    expect(r.calls).toEqual([[0, 32]]);
  });

  it('a short read is a truncation', async () => {
    const blob = writeBlob({ metadata: KV_METADATA, engine: SAMPLE_ENGINE });
    const short = (offset: number, length: number) => Promise.resolve(blob.slice(offset, offset + Math.min(length, 40)));
    expect(await outcomeAsync(() => readBlobFromRange(short, blob.length))).toBe('TRT_BLOB_TRUNCATED');
  });
});

describe('helpers', () => {
  it('inputs, outputs and aliasedOutputs keep io_bindings order', () => {
    const meta: BlobMetadata = {
      ...(KV_METADATA as BlobMetadata),
      io_bindings: [
        { name: 'a', dtype: '', shape: [], is_input: true },
        { name: 'o1', dtype: '', shape: [], is_input: false },
        { name: 'b', dtype: '', shape: [], is_input: true },
        { name: 'o2', dtype: '', shape: [], is_input: false },
        { name: 'o3', dtype: '', shape: [], is_input: false },
      ],
      aliased_io: [
        { output: 'o3', input: 'a', kind: 'kv_cache_update' },
        { output: 'o1', input: 'b', kind: 'kv_cache_update' },
      ],
    };
    expect(inputs(meta).map((b) => b.name)).toEqual(['a', 'b']);
    expect(outputs(meta).map((b) => b.name)).toEqual(['o1', 'o2', 'o3']);
    expect(aliasedOutputs(meta).map((b) => b.name)).toEqual(['o1', 'o3']);
  });
});

// ---------------------------------------------------------------------------
// Properties

const KNOWN_CODES = new Set<string>(BLOB_ERROR_CODES);

/** Parses and asserts the only outcomes are a sound ParsedBlob or a known TrtxError. */
function parseSafely(blob: Uint8Array, size?: number | bigint): ParsedBlob | string {
  let p: ParsedBlob;
  try {
    p = parseBlob(blob, size);
  } catch (e) {
    expect(e).toBeInstanceOf(TrtxError);
    expect(KNOWN_CODES).toContain((e as TrtxError).code);
    return (e as TrtxError).code;
  }
  const total = BigInt(size ?? blob.length);
  expect(p.metadataOffset).toBeGreaterThanOrEqual(32);
  expect(BigInt(p.metadataOffset + p.metadataSize)).toBeLessThanOrEqual(BigInt(p.engineOffset));
  expect(BigInt(p.engineOffset) + p.engineSize).toBeLessThanOrEqual(total);
  expect(p.engineOffset % 16).toBe(0);
  const names = p.metadata.io_bindings.map((b) => b.name);
  expect(new Set(names).size).toBe(names.length);
  expect(names.every((n) => n.length > 0 && !n.includes('\0'))).toBe(true);
  if (p.magic === 'TR01') expect(p.metadata.aliased_io).toEqual([]);
  return p;
}

const name = fc
  .oneof(
    fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 12 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
  )
  .filter((s) => !s.includes('\0'));
const binding = (n: string, is_input: boolean) =>
  fc.record({
    name: fc.constant(n),
    dtype: fc.constantFrom('float32', 'float16', 'int64', ''),
    shape: fc.array(fc.integer({ min: -1, max: 4096 }), { maxLength: 5 }),
    is_input: fc.constant(is_input),
  });

/** Valid metadata: unique names, aliases pairing distinct outputs with distinct inputs. */
const validMetadata: fc.Arbitrary<BlobMetadata> = fc
  .uniqueArray(name, { minLength: 0, maxLength: 8 })
  .chain((names) => fc.tuple(fc.constant(names), fc.array(fc.boolean(), { minLength: names.length, maxLength: names.length })))
  .chain(([names, dirs]) => {
    const ins = names.filter((_, i) => dirs[i]);
    const outs = names.filter((_, i) => !dirs[i]);
    const pairs = Math.min(ins.length, outs.length);
    return fc.record({
      io_bindings: fc.tuple(...names.map((n, i) => binding(n, dirs[i]))),
      aliased_io: fc
        .tuple(
          fc.shuffledSubarray(ins, { minLength: 0, maxLength: pairs }),
          fc.shuffledSubarray(outs, { minLength: pairs, maxLength: pairs }),
        )
        .chain(([i, o]) =>
          fc.tuple(
            ...i.map((input, k) =>
              fc.record({
                output: fc.constant(o[k]),
                input: fc.constant(input),
                kind: fc.constantFrom('kv_cache_update' as const, 'user' as const),
              }),
            ),
          ),
        ),
      hardware_compatible: fc.boolean(),
      device_id: fc.integer({ min: 0, max: 16 }),
      serialized_metadata: fc.string({ unit: 'binary', maxLength: 20 }),
      target_platform: fc.constantFrom('', 'linux_x86_64', 'linux_aarch64'),
    });
  });

describe('properties', () => {
  it('write -> parse returns the metadata, and write(parse(blob)) gives the same bytes; escaped names are refused by both', () => {
    fc.assert(
      fc.property(validMetadata, fc.uint8Array({ maxLength: 40 }), (meta, engine) => {
        // Python's json.dumps escapes every name character outside printable
        // ASCII, and Torch-TensorRT's C++ parser does not decode escapes.
        const escaped = meta.io_bindings.some((b) => !/^[\x20-\x7e]*$/.test(b.name));
        const magic = meta.aliased_io.length > 0 ? 'TR02' : 'TR01';
        const written = outcome(() => writeBlob({ metadata: meta, engine })).code;
        // The writer and the reader refuse the same bytes with the same code.
        expect(outcome(() => parseBlob(craftBlob({ magic, metadata: encodeBlobMetadata(meta), engine }))).code).toBe(written);
        if (escaped) expect(written).toBe('TRT_NAME_ESCAPED');
        // An ASCII name can still collide with a key upstream searches for (a binding named device_id in aliased_io).
        if (written !== 'ok') {
          expect(escaped || written === 'TRT_BLOB_UPSTREAM_MISREAD').toBe(true);
          return;
        }
        const blob = writeBlob({ metadata: meta, engine });
        const p = parseBlob(blob);
        expect(p.metadata).toEqual(meta);
        expect(p.magic).toBe(meta.aliased_io.length > 0 ? 'TR02' : 'TR01');
        expect(engineBytes(blob, p)).toEqual(engine);
        expect(writeBlob({ magic: p.magic, metadata: p.metadata, engine: engineBytes(blob, p) })).toEqual(blob);
      }),
      { numRuns: 300 },
    );
  });

  it('random bytes: parse returns or throws a known TrtxError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, tr) => {
        // Half the runs get a real magic so the fuzz reaches past the first check.
        if (tr && bytes.length >= 4) bytes.set(enc.encode(bytes[0] & 1 ? 'TR02' : 'TR01'), 0);
        parseSafely(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  const interesting = fc.constantFrom(0, 1, 15, 16, 31, 32, 33, 48, 64, 0x7fff_ffff, 0x8000_0000, 0xffff_fff0, 0xffff_ffff);
  const interesting64 = fc.constantFrom(0n, 1n, 16n, 0x1_0000_0000n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 16n, (1n << 64n) - 1n);

  it('mutated valid blobs: byte flips, header fields, truncation, extension', async () => {
    const seeds = [
      writeBlob({ metadata: KV_METADATA, engine: SAMPLE_ENGINE }),
      writeBlob({ metadata: PLAIN_METADATA, engine: SAMPLE_ENGINE }),
      writeBlob({ metadata: { io_bindings: [] }, engine: new Uint8Array(0) }),
    ];
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('byte' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('u32' as const), field: fc.constantFrom(4, 8, 12), value: interesting }),
      fc.record({ kind: fc.constant('u64' as const), value: interesting64 }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('grow' as const), by: fc.integer({ min: 1, max: 64 }) }),
      fc.record({
        kind: fc.constant('json' as const),
        at: fc.nat(),
        text: fc.constantFrom('"', '\\', '{', '}', '[', ']', ',', ':', '\\u0000', 'null', '1e999', '\u0000', '\u00ff'),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 4 }), async (seed, muts) => {
        let blob = seed.slice();
        for (const m of muts) {
          const dv = new DataView(blob.buffer);
          if (m.kind === 'byte' && blob.length) blob[m.at % blob.length] = m.value;
          else if (m.kind === 'u32' && blob.length >= 32) dv.setUint32(m.field, m.value, true);
          else if (m.kind === 'u64' && blob.length >= 32) dv.setBigUint64(16, m.value, true);
          else if (m.kind === 'cut') blob = blob.slice(0, m.at % (blob.length + 1));
          else if (m.kind === 'grow') blob = Uint8Array.from([...blob, ...new Uint8Array(m.by)]);
          else if (m.kind === 'json' && blob.length > 33) {
            const at = 32 + (m.at % (blob.length - 32));
            const t = enc.encode(m.text).subarray(0, blob.length - at);
            blob.set(t, at);
          }
        }
        const direct = parseSafely(blob);
        // The range reader agrees and stays out of the engine.
        const r = recorder(blob);
        const viaRange = await outcomeAsync(() => readBlobFromRange(r.read, blob.length));
        expect(viaRange).toBe(typeof direct === 'string' ? direct : 'ok');
        if (blob.length >= 32 && typeof direct !== 'string') expectRangesAvoidEngine(r.calls, direct);
      }),
      { numRuns: 1500 },
    );
  });

  it('structurally random metadata documents: parse returns or throws a known TrtxError', () => {
    // Mostly well-typed documents over a small name pool, so runs reach the
    // binding and alias checks rather than stopping at the type checks.
    const anyJson = fc.jsonValue({ maxDepth: 2 });
    const good = <T>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 15, arbitrary: a }, { weight: 1, arbitrary: anyJson });
    const str = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('x', 'y', 'k_out', 'k_cache', 'v_out') },
      { weight: 1, arbitrary: fc.constantFrom('', '\0', 'x\0', 'k_out\0y') },
      { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
    );
    const bindingDoc = fc.record(
      {
        name: good(str),
        dtype: good(fc.constantFrom('float32', '')),
        shape: good(fc.array(fc.integer({ min: -1, max: 8 }), { maxLength: 3 })),
        is_input: good(fc.boolean()),
      },
      { requiredKeys: ['name', 'is_input'] },
    );
    const aliasDoc = fc.record(
      { output: good(str), input: good(str), kind: good(fc.constantFrom('kv_cache_update', 'user', 'kv', '')) },
      { requiredKeys: ['output', 'input'] },
    );
    const metaDoc = fc.record(
      {
        io_bindings: good(fc.array(bindingDoc, { maxLength: 6 })),
        aliased_io: good(fc.array(aliasDoc, { maxLength: 3 })),
        hardware_compatible: good(fc.boolean()),
        device_id: good(fc.integer({ min: -2, max: 2 ** 31 })),
        serialized_metadata: good(fc.string({ maxLength: 4 })),
        target_platform: good(fc.string({ maxLength: 4 })),
      },
      { requiredKeys: ['io_bindings'] },
    );
    fc.assert(
      fc.property(metaDoc, fc.constantFrom('TR01', 'TR02'), (docObj, magic) => {
        parseSafely(craftBlob({ magic, metadata: JSON.stringify(docObj) }));
      }),
      { numRuns: 1500 },
    );
  });
});
