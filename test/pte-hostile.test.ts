// Hostile and damaged files: every one gets a TrtxError with a stable code
// and a location, never another exception, a hang or a crash.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { decodePteBytes } from '../src/pte/open.js';
import { TrtxError } from '../src/util/errors.js';
import { corpusPath, corpusPrograms } from './helpers/corpus.js';

const files = corpusPrograms().map((name) => [name, new Uint8Array(readFileSync(corpusPath(name)))] as const);

function outcome(bytes: Uint8Array): 'ok' | TrtxError {
  try {
    decodePteBytes(bytes);
    return 'ok';
  } catch (e) {
    if (e instanceof TrtxError) return e;
    throw e;
  }
}

function expectRefused(bytes: Uint8Array, code?: string | RegExp): TrtxError {
  const r = outcome(bytes);
  expect(r).toBeInstanceOf(TrtxError);
  const err = r as TrtxError;
  expect(err.code).toMatch(/^[A-Z0-9_]+$/);
  expect(err.location.length).toBeGreaterThan(0);
  if (code) expect(err.code).toMatch(code);
  return err;
}

const u64 = (b: Uint8Array, at: number, v: bigint) => new DataView(b.buffer, b.byteOffset).setBigUint64(at, v, true);
const u32 = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset).setUint32(at, v, true);

describe.each(files)('hostile variants of %s', (name, original) => {
  it('refuses the file truncated at every byte offset', { timeout: 60_000 }, () => {
    for (let n = 0; n < original.length; n++) expectRefused(original.slice(0, n));
  });

  it('survives random byte flips (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(original.length - 1), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }),
        (flips) => {
          const b = original.slice();
          for (const [at, x] of flips) b[at] ^= x;
          const r = outcome(b); // throws (fails the property) on anything but TrtxError
          if (r !== 'ok') expect(r.code).toMatch(/^[A-Z0-9_]+$/);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses a wrong file identifier', () => {
    const b = original.slice();
    b.set([0x58, 0x58, 0x58, 0x58], 4);
    expect(expectRefused(b, 'PTE_NOT_A_PROGRAM').kind).toBe('usage');
    const v = original.slice();
    v.set([0x45, 0x54, 0x31, 0x31], 4);
    const err = expectRefused(v, 'PTE_IDENTIFIER');
    expect(err.message).toMatch(/unsupported program format version "ET11"/);
    expect(err.kind).toBe('check');
  });

  it('refuses a root offset past the end', () => {
    const b = original.slice();
    u32(b, 0, 0xfffffff0);
    expectRefused(b, 'PTE_ROOT_OFFSET');
  });
});

describe('extended header and segment table', () => {
  const seg = files.find(([n]) => n === 'add-segment')![1];

  it('refuses 64-bit sizes chosen to overflow', () => {
    for (const [at, code] of [
      [16, 'PTE_PROGRAM_SIZE'],
      [24, 'PTE_SEGMENT_BASE'],
      [32, 'PTE_SEGMENT_DATA_SIZE'],
    ] as const) {
      for (const v of [0xffffffffffffffffn, 0x8000000000000000n]) {
        const b = seg.slice();
        u64(b, at, v);
        expectRefused(b, code);
      }
    }
    // Just past the end: a program size the segment base contradicts is the field's fault...
    const past = seg.slice();
    u64(past, 16, BigInt(seg.length) + 1n);
    expectRefused(past, 'PTE_PROGRAM_SIZE');
    // ...and segments a byte longer than the file, by a header that agrees with itself, are a file cut short.
    for (const at of [24, 32]) {
      const b = seg.slice();
      u64(b, at, BigInt(seg.length) + 1n);
      expect(expectRefused(b, 'PTE_TRUNCATED').message).toMatch(new RegExp(`^the file is ${seg.length} bytes .* says it is \\d+ bytes`));
    }
  });

  it('refuses a segment base inside the program', () => {
    const b = seg.slice();
    u64(b, 24, 64n);
    expectRefused(b, 'PTE_SEGMENT_BASE');
  });

  it('refuses a segment past the end, and overlapping or unsorted segments', async () => {
    const { program } = decodePteBytes(seg);
    const { resolveSegments } = await import('../src/pte/segments.js');
    const { header } = decodePteBytes(seg);
    const fileSize = seg.length;
    const t = (segments: { offset: bigint; size: bigint }[]) => () => resolveSegments({ ...program, segments }, header, fileSize);
    expect(t([{ offset: 0n, size: 4n }])).not.toThrow();
    expect(t([{ offset: 1n, size: 4n }])).toThrow(expect.objectContaining({ code: 'PTE_SEGMENT_EXTENT', location: 'program.segments[0]' }));
    expect(t([{ offset: 0xfffffffffffffff0n, size: 0x20n }])).toThrow(expect.objectContaining({ code: 'PTE_SEGMENT_EXTENT' }));
    expect(t([{ offset: 0n, size: 0xffffffffffffffffn }])).toThrow(expect.objectContaining({ code: 'PTE_SEGMENT_EXTENT' }));
    expect(
      t([
        { offset: 0n, size: 3n },
        { offset: 2n, size: 2n },
      ]),
    ).toThrow(expect.objectContaining({ code: 'PTE_SEGMENT_ORDER', location: 'program.segments[1]' }));
    expect(
      t([
        { offset: 3n, size: 1n },
        { offset: 0n, size: 2n },
      ]),
    ).toThrow(expect.objectContaining({ code: 'PTE_SEGMENT_ORDER' }));
  });
});
