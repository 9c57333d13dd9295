// decimalBelowPattern states a numeric bound as a pattern (the bridge
// protocol's "bytes below 2^63" in zod and in the generated JSON Schema):
// it must accept exactly the canonical decimals below the bound.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalBelowPattern } from '../src/util/decimal-below.js';

const canonical = (s: string) => /^(0|[1-9][0-9]*)$/.test(s);

describe('decimalBelowPattern', () => {
  it('accepts every number below small bounds and nothing at or above them', () => {
    for (const limit of [1n, 2n, 9n, 10n, 11n, 99n, 100n, 101n, 256n, 1000n, 1024n, 4097n]) {
      const re = new RegExp(decimalBelowPattern(limit));
      for (let n = 0n; n < limit + 200n; n++) expect(re.test(n.toString()), `${n} < ${limit}`).toBe(n < limit);
    }
  });

  it('agrees with bigint comparison around 2^63 and on any digit string', () => {
    const limit = 1n << 63n;
    const re = new RegExp(decimalBelowPattern(limit));
    for (let d = -3n; d <= 3n; d++) expect(re.test((limit + d).toString())).toBe(d < 0n);
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,21}$/), (s) => {
        expect(re.test(s)).toBe(canonical(s) && BigInt(s) < limit);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: limit * 2n }), (n) => {
        expect(re.test(n.toString())).toBe(n < limit);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses signs, spaces and leading zeros', () => {
    const re = new RegExp(decimalBelowPattern(1n << 63n));
    for (const s of ['', '-0', '+1', ' 1', '1 ', '01', '00', '1e9', '0x10']) expect(re.test(s), s).toBe(false);
  });
});
