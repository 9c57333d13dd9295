import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SIZE_FORMS, formatIEC, parseSize } from '../src/util/size.js';
import { TrtxError } from '../src/util/errors.js';
import { refusal } from './helpers/refusal.js';

const GiB = 1n << 30n;

function sizeRefusal(text: string): TrtxError {
  return refusal(() => parseSize(text, { location: '--budget' }), `${JSON.stringify(text)} was accepted`);
}

describe('parseSize', () => {
  it.each([
    ['8GiB', 8n * GiB],
    ['8 GiB', 8n * GiB],
    ['512MiB', 512n << 20n],
    ['1.5GiB', 3n * (GiB / 2n)],
    ['0.5KiB', 512n],
    ['1.25 KiB', 1280n],
    ['8GB', 8_000_000_000n],
    ['8589934592', 8589934592n],
    ['0', 0n],
    ['0GiB', 0n],
    ['123B', 123n],
    ['123 B', 123n],
    ['1.0', 1n],
    ['2KiB', 2048n],
    ['2kB', 2000n],
    ['2KB', 2000n],
    ['3MB', 3_000_000n],
    ['1TB', 10n ** 12n],
    ['1TiB', 1n << 40n],
    ['8gib', 8n * GiB],
    ['8GIB', 8n * GiB],
    ['8gb', 8_000_000_000n],
    ['1.000000001GB', 1_000_000_001n],
    ['08GiB', 8n * GiB],
    ['9223372036854775807', (1n << 63n) - 1n],
    ['8388607.9999999999990905052982270717620849609375TiB', (1n << 63n) - 1n],
  ])('%s', (text, want) => {
    expect(parseSize(text)).toBe(want);
  });

  it.each([
    ['empty', ''],
    ['space only', ' '],
    ['negative', '-1'],
    ['plus sign', '+8GiB'],
    ['two spaces', '8  GiB'],
    ['tab', '8\tGiB'],
    ['leading space', ' 8GiB'],
    ['trailing space', '8GiB '],
    ['space and no unit', '8 '],
    ['unit only', 'GiB'],
    ['bare K', '8K'],
    ['bare G', '8G'],
    ['bits', '8Gb/s'],
    ['unknown unit', '8PiB'],
    ['fractional byte', '1.5'],
    ['fractional byte with B', '0.5B'],
    ['fraction of a KiB not whole', '1.0001KiB'],
    ['no digits before the point', '.5GiB'],
    ['no digits after the point', '1.GiB'],
    ['comma', '1,5GiB'],
    ['underscore', '8_000'],
    ['exponent', '1e9'],
    ['hex', '0x10'],
    ['2^63', '9223372036854775808'],
    ['8 EiB-ish', '8388608TiB'],
    ['NUL', '8GiB\0'],
    ['full-width digit', '\uff18GiB'],
    ['very long', '1'.repeat(200)],
  ])('refuses %s', (_what, text) => {
    const e = sizeRefusal(text);
    expect(e.code).toBe('SIZE_INVALID');
    expect(e.kind).toBe('usage');
    expect(e.location).toBe('--budget');
    expect(e.message).toContain(SIZE_FORMS);
  });

  it('lists the accepted forms in the message', () => {
    for (const form of ['8GiB', '512MiB', '1.5GiB', '8GB', '8589934592', 'KiB', 'TiB', 'kB', 'TB']) expect(SIZE_FORMS).toContain(form);
  });

  it('round-trips every byte count written in B, exact units and decimals', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }), (n) => {
        expect(parseSize(n.toString())).toBe(n);
        expect(parseSize(`${n} B`)).toBe(n);
      }),
      { numRuns: 300 },
    );
  });
});

describe('formatIEC', () => {
  it.each([
    [0n, '0 B'],
    [123n, '123 B'],
    [1023n, '1023 B'],
    [1024n, '1 KiB'],
    [512n << 20n, '512 MiB'],
    [8n * GiB, '8 GiB'],
    [3n * (GiB / 2n), '1.5 GiB'],
    [GiB + GiB / 8n, '1.125 GiB'],
    [24n * GiB, '24 GiB'],
    [GiB + 1n, '1.00 GiB'],
    [GiB + GiB / 3n, '1.33 GiB'],
    [GiB - 1n, '1.00 GiB'],
    [1n << 40n, '1 TiB'],
    [(1n << 63n) - 1n, '8.00 EiB'],
    [-(2n * GiB), '-2 GiB'],
  ])('%s -> %s', (n, want) => {
    expect(formatIEC(n)).toBe(want);
  });

  it('a count of eighths of a unit is printed exactly and parses back', () => {
    fc.assert(
      fc.property(fc.integer({ min: 8, max: 1023 * 8 + 7 }), fc.integer({ min: 1, max: 4 }), (eighths, k) => {
        const n = (BigInt(eighths) << BigInt(10 * k)) / 8n;
        const s = formatIEC(n);
        expect(s).not.toMatch(/\.\d*0 /);
        expect(parseSize(s)).toBe(n);
      }),
      { numRuns: 300 },
    );
  });
});
