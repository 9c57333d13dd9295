// Sizes as people write them (`8GiB`, `512MiB`, `1.5GiB`, `8GB`, `8589934592`)
// and back. One parser for every flag that takes bytes, so `--budget 8GiB`
// means the same thing everywhere. Exact: arithmetic is in bigint and a value
// that is not a whole number of bytes is refused rather than rounded.

import { TrtxError } from './errors.js';

/** Exclusive upper bound: sizes end up in int64 fields and specs. */
export const SIZE_LIMIT = 1n << 63n;

export const SIZE_FORMS =
  'a whole number of bytes (8589934592, 0), or a number and a unit with an optional space before it: ' +
  'binary B, KiB, MiB, GiB, TiB (8GiB, 512MiB, 1.5GiB) or decimal kB, MB, GB, TB (8GB)';

const KI = 1024n;
const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['b', 1n],
  ['kib', KI],
  ['mib', KI ** 2n],
  ['gib', KI ** 3n],
  ['tib', KI ** 4n],
  ['kb', 1000n],
  ['mb', 1000n ** 2n],
  ['gb', 1000n ** 3n],
  ['tb', 1000n ** 4n],
]);

const SIZE_RE = /^([0-9]+)(?:\.([0-9]+))?(?: ?([A-Za-z]+))?$/;
const MAX_TEXT = 64;

export interface SizeOptions {
  /** Where the size came from, e.g. `--budget`. */
  location?: string;
}

/** Why a text is not a size (test/vectors/sizes.json names these). */
export type SizeProblem = 'empty' | 'too_long' | 'syntax' | 'unit' | 'fraction' | 'range';

const SIZE_PROBLEMS: Record<SizeProblem, string> = {
  empty: 'empty',
  too_long: 'too long',
  syntax: 'not a size',
  unit: 'unknown unit',
  fraction: 'not a whole number of bytes',
  range: 'too large (must be below 2^63 bytes)',
};

/** Reads a size: its bytes in [0, 2^63), or why it is not one. */
export function readSize(text: string): bigint | SizeProblem {
  if (text.length === 0) return 'empty';
  if (text.length > MAX_TEXT) return 'too_long';
  const m = SIZE_RE.exec(text);
  if (!m) return 'syntax';
  const [, whole = '', frac = '', unitText] = m;
  let mult = 1n;
  if (unitText !== undefined) {
    const u = UNITS.get(unitText.toLowerCase());
    if (u === undefined) return 'unit';
    mult = u;
  }
  // Exact: the product is a bigint (no overflow), and a fraction must leave whole bytes.
  const scale = 10n ** BigInt(frac.length);
  const scaled = (BigInt(whole) * scale + BigInt(frac || '0')) * mult;
  if (scaled % scale !== 0n) return 'fraction';
  const bytes = scaled / scale;
  return bytes < SIZE_LIMIT ? bytes : 'range';
}

/** Parses a size into bytes in [0, 2^63); anything else is SIZE_INVALID (usage). */
export function parseSize(text: string, opts: SizeOptions = {}): bigint {
  const read = typeof text === 'string' ? readSize(text) : 'empty';
  if (typeof read === 'bigint') return read;
  const shown = typeof text === 'string' ? JSON.stringify(text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) + '...' : text) : String(text);
  const why = read === 'unit' ? `unknown unit ${JSON.stringify(SIZE_RE.exec(text)?.[3])}` : SIZE_PROBLEMS[read];
  throw new TrtxError('SIZE_INVALID', opts.location ?? '', `invalid size ${shown}: ${why}; accepted: ${SIZE_FORMS}`, {
    hint: 'write the size like 8GiB, 512MiB, 1.5GiB, 8GB or 8589934592',
  });
}

/**
 * A size written in a decimal unit (8GB: 8,000,000,000 bytes), and the same
 * number in the binary unit people often meant (8GiB), when that is whole
 * bytes; null for bytes and binary units.
 */
export function decimalUnitOf(text: string): { unit: string; binary: string | null } | null {
  const m = SIZE_RE.exec(text);
  const unit = m?.[3];
  if (!m || unit === undefined || !/^[kmgt]b$/i.test(unit)) return null;
  const binary = `${text.slice(0, text.length - unit.length).trimEnd()}${unit[0]?.toUpperCase() ?? ''}iB`;
  return { unit, binary: typeof readSize(binary) === 'bigint' ? binary : null };
}

const IEC = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/**
 * Bytes in the largest binary unit they reach: exact when that takes at most
 * three decimals ("8 GiB", "1.5 GiB", "1.125 GiB"), else rounded to two
 * ("1.00 GiB" for one byte over).
 */
export function formatIEC(bytes: bigint): string {
  const sign = bytes < 0n ? '-' : '';
  const abs = bytes < 0n ? -bytes : bytes;
  let k = 0;
  while (k < IEC.length - 1 && abs >= KI ** BigInt(k + 1)) k++;
  if (k === 0) return `${sign}${abs} B`;
  for (;;) {
    const unit = KI ** BigInt(k);
    if ((abs * 1000n) % unit === 0n) {
      const milli = (abs * 1000n) / unit;
      const whole = milli / 1000n;
      const rest = (milli % 1000n).toString().padStart(3, '0').replace(/0+$/, '');
      return `${sign}${whole}${rest ? '.' + rest : ''} ${IEC[k]}`;
    }
    const centi = (abs * 100n + unit / 2n) / unit;
    // Rounding can carry into the next unit (1023.999 MiB -> "1024.00 MiB");
    // say it in the next unit instead.
    if (centi >= 1024n * 100n && k < IEC.length - 1) {
      k++;
      continue;
    }
    return `${sign}${centi / 100n}.${(centi % 100n).toString().padStart(2, '0')} ${IEC[k]}`;
  }
}
