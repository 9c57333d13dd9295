import { describe, expect, it } from 'vitest';
import {
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
} from '../src/tensorrt/blob.js';
import { pyJsonString } from '../src/tensorrt/strict-json.js';
import { KV_METADATA, PLAIN_METADATA, SAMPLE_ENGINE, craftBlob } from '../fixtures/blob-vectors.js';
import { dec, expectRangesAvoidEngine, outcome, outcomeAsync, recorder } from './helpers/blob-outcome.js';

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
