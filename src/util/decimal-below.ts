// A regular expression for the decimal numbers below a bound, so that one
// pattern states "a byte count below 2^63" exactly in zod, in the JSON Schema
// generated from it (scripts/gen-schemas.ts) and in every language that reads
// that schema, without a range check a schema cannot express.

/**
 * The anchored pattern of the canonical decimals (no sign, no leading zero)
 * in [0, limit). Built digit by digit: every shorter number, then for each
 * position of the largest value the numbers that share its prefix and are
 * smaller there.
 */
export function decimalBelowPattern(limit: bigint): string {
  if (limit < 1n) throw new RangeError('limit must be at least 1');
  const max = (limit - 1n).toString();
  const n = max.length;
  const alternatives: string[] = ['0'];
  if (n > 1) alternatives.push(n === 2 ? '[1-9]' : `[1-9][0-9]{0,${n - 2}}`);
  for (let i = 0; i < n; i++) {
    const digit = Number(max[i]);
    const low = i === 0 ? 1 : 0;
    if (digit > low) {
      const range = digit - 1 === low ? `${low}` : `[${low}-${digit - 1}]`;
      const rest = n - i - 1;
      alternatives.push(max.slice(0, i) + range + (rest === 0 ? '' : `[0-9]{${rest}}`));
    }
  }
  if (max !== '0') alternatives.push(max);
  return `^(${[...new Set(alternatives)].join('|')})$`;
}
