// Properties of the TensorRT blob codec (src/tensorrt/blob.ts): write and
// parse are inverses, and any bytes, mutated blob or metadata document is
// parsed or refused with a known code, never a crash.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BLOB_ERROR_CODES,
  encodeBlobMetadata,
  engineBytes,
  parseBlob,
  readBlobFromRange,
  writeBlob,
  type BlobMetadata,
  type ParsedBlob,
} from '../src/tensorrt/blob.js';
import { TrtxError } from '../src/util/errors.js';
import { KV_METADATA, PLAIN_METADATA, SAMPLE_ENGINE, craftBlob } from '../fixtures/blob-vectors.js';
import { enc, expectRangesAvoidEngine, outcome, outcomeAsync, recorder } from './helpers/blob-outcome.js';

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
