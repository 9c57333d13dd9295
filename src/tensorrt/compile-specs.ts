// The compile specs trtx owns on a TensorRT delegate (domain brief section 4):
// `target_device`, `weight_streaming_budget`, `zero_copy_kv`. Values are raw
// bytes on the wire; this module gives them types, and refuses what the
// runtime would refuse or misread.
//
// A budget that does not parse is an invalid program, never "automatic": the
// runtime fails the load on it, so a checker that shrugged would pass a
// program that cannot run.

import { TrtxError } from '../util/errors.js';
import { isJsonObject, isWellFormedText, parseStrictJsonBytes, pyJsonCompact, utf8Bytes } from './strict-json.js';

export const SPEC_TARGET_DEVICE = 'target_device';
export const SPEC_WEIGHT_STREAMING_BUDGET = 'weight_streaming_budget';
export const SPEC_ZERO_COPY_KV = 'zero_copy_kv';

/** Exclusive upper bound of a budget: the runtime parses it as int64. */
export const BUDGET_LIMIT = 1n << 63n;
const INT32_LIMIT = 2 ** 31;

export type SpecErrorCode = 'SPEC_DUPLICATE_KEY' | 'SPEC_BUDGET_INVALID' | 'SPEC_TARGET_DEVICE_INVALID' | 'SPEC_ZERO_COPY_KV_INVALID';

/** Structurally the program model's CompileSpec. */
export interface CompileSpecEntry {
  key: string | null;
  value: Uint8Array;
}

export interface SpecDiagnostic {
  severity: 'error';
  code: SpecErrorCode;
  location: string;
  message: string;
  hint: string;
}

export interface TypedCompileSpecs {
  /** Device index N of `cuda:N`. */
  targetDevice?: number;
  /** Absent: automatic budget. */
  weightStreamingBudget?: bigint;
  /** Output binding names whose aliased outputs were elided. */
  zeroCopyKv?: string[];
}

export interface DecodedCompileSpecs {
  /** A key with an error (repeated or unparsable) is left out. */
  specs: TypedCompileSpecs;
  diagnostics: SpecDiagnostic[];
}

export interface SpecLocationOptions {
  /** Prefix for every location, e.g. `decode > delegate 0 (TensorRTBackend)`. */
  location?: string;
}

const HINTS: Record<SpecErrorCode, string> = {
  SPEC_DUPLICATE_KEY: 'keep one entry per key: rewrite the budget with `trtx rewrite --budget` or re-export',
  SPEC_BUDGET_INVALID: 'set a valid budget with `trtx rewrite --budget SIZE`, or remove it with `--clear-budget`',
  SPEC_TARGET_DEVICE_INVALID: 're-export with target_device "cuda:N"',
  SPEC_ZERO_COPY_KV_INVALID: 're-export with zero_copy_kv, or re-export without it',
};

function specError(code: SpecErrorCode, location: string, message: string): TrtxError {
  return new TrtxError(code, location, message, { hint: HINTS[code] });
}

function usageError(code: SpecErrorCode, message: string): TrtxError {
  return new TrtxError(code, '', message, { kind: 'usage', hint: HINTS[code] });
}

/** Bytes shown in a message: printable ASCII as is, the rest escaped, long values cut. */
export function showBytes(value: Uint8Array, max = 48): string {
  let s = '';
  for (const b of value.subarray(0, max)) {
    if (b >= 0x20 && b <= 0x7e && b !== 0x22 && b !== 0x5c) s += String.fromCharCode(b);
    else s += '\\x' + b.toString(16).padStart(2, '0');
  }
  return `"${s}"${value.length > max ? `... (${value.length} bytes)` : ''}`;
}

// ---------------------------------------------------------------------------
// weight_streaming_budget

/** Decodes a budget value: ASCII decimal digits only, in [0, 2^63). */
export function decodeBudget(value: Uint8Array, location = ''): bigint {
  const fail = (why: string): never => {
    throw specError('SPEC_BUDGET_INVALID', location, `weight_streaming_budget ${showBytes(value)} ${why}`);
  };
  if (value.length === 0) fail('is empty');
  for (const b of value) {
    // No sign (not even "-0", which int64 parsers accept), no space, no NUL.
    if (b < 0x30 || b > 0x39) fail('is not a decimal number of bytes (digits 0-9 only)');
  }
  // Leading zeros are digits too; strip them before the length test so a
  // zero-padded value is judged by its magnitude.
  let i = 0;
  while (i < value.length - 1 && value[i] === 0x30) i++;
  if (value.length - i > 19) fail('is out of range (must be below 2^63)');
  const n = BigInt(String.fromCharCode(...value.subarray(i)));
  if (n >= BUDGET_LIMIT) fail('is out of range (must be below 2^63)');
  return n;
}

export function encodeBudget(bytes: bigint): Uint8Array {
  if (typeof bytes !== 'bigint' || bytes < 0n || bytes >= BUDGET_LIMIT) {
    throw usageError('SPEC_BUDGET_INVALID', `weight streaming budget ${String(bytes)} is outside [0, 2^63) bytes`);
  }
  return utf8Bytes(bytes.toString(10));
}

// ---------------------------------------------------------------------------
// target_device

export function decodeTargetDevice(value: Uint8Array, location = ''): number {
  // "cuda:" plus at most 10 digits; anything longer is refused before it is
  // turned into a string.
  const text = value.length <= 15 && value.every((b) => b >= 0x20 && b <= 0x7e) ? String.fromCharCode(...value) : null;
  const m = text === null ? null : /^cuda:(0|[1-9][0-9]{0,9})$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  if (!m || index >= INT32_LIMIT) {
    throw specError('SPEC_TARGET_DEVICE_INVALID', location, `target_device ${showBytes(value)} is not "cuda:N" (N a device index)`);
  }
  return index;
}

export function encodeTargetDevice(index: number): Uint8Array {
  if (!Number.isSafeInteger(index) || index < 0 || index >= INT32_LIMIT) {
    throw usageError('SPEC_TARGET_DEVICE_INVALID', `device index ${index} is not a non-negative 32-bit integer`);
  }
  return utf8Bytes(`cuda:${index}`);
}

// ---------------------------------------------------------------------------
// zero_copy_kv

function checkZeroCopyNames(names: readonly unknown[], fail: (why: string) => never): string[] {
  if (names.length === 0) fail('lists no binding (it is stamped only on a delegate that elided aliased outputs)');
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (typeof n !== 'string') fail(`entry ${i} is not a string`);
    if (n.length === 0) fail(`entry ${i} is an empty name`);
    if (n.includes('\0')) fail(`entry ${i} contains a NUL character`);
    if (!isWellFormedText(n)) fail(`entry ${i} has an unpaired surrogate`);
    if (seen.has(n)) fail(`names ${JSON.stringify(n)} twice`);
    seen.add(n);
  });
  return names as string[];
}

/** Decodes the JSON list of elided output binding names. */
export function decodeZeroCopyKv(value: Uint8Array, location = ''): string[] {
  const fail = (why: string): never => {
    throw specError('SPEC_ZERO_COPY_KV_INVALID', location, `zero_copy_kv ${why}`);
  };
  const doc = parseStrictJsonBytes(value, 'SPEC_ZERO_COPY_KV_INVALID', location);
  if (!Array.isArray(doc)) fail(`must be a JSON list of binding names, got ${isJsonObject(doc) ? 'an object' : showBytes(value)}`);
  return checkZeroCopyNames(doc as unknown[], fail);
}

export function encodeZeroCopyKv(names: readonly string[]): Uint8Array {
  checkZeroCopyNames(names, (why) => {
    throw usageError('SPEC_ZERO_COPY_KV_INVALID', `zero_copy_kv ${why}`);
  });
  return utf8Bytes(pyJsonCompact([...names]));
}

// ---------------------------------------------------------------------------
// The list on one delegate

function specLoc(opts: SpecLocationOptions | undefined, index: number, key: string): string {
  const rel = `compile_specs[${index}] (${key})`;
  return opts?.location ? `${opts.location} > ${rel}` : rel;
}

/**
 * Types the specs trtx owns and reports every problem as a diagnostic (never
 * throws). Keys trtx does not own are left alone, except that any key
 * repeated on one delegate is an error: readers disagree on which copy wins.
 */
export function decodeCompileSpecs(specs: readonly CompileSpecEntry[], opts: SpecLocationOptions = {}): DecodedCompileSpecs {
  const diagnostics: SpecDiagnostic[] = [];
  const out: TypedCompileSpecs = {};
  const firstIndex = new Map<string, number>();
  const repeated = new Set<string>();

  specs.forEach((s, i) => {
    if (s.key === null) return;
    const first = firstIndex.get(s.key);
    if (first === undefined) {
      firstIndex.set(s.key, i);
      return;
    }
    repeated.add(s.key);
    diagnostics.push({
      severity: 'error',
      code: 'SPEC_DUPLICATE_KEY',
      location: specLoc(opts, i, s.key),
      message: `compile spec ${JSON.stringify(s.key)} repeats compile_specs[${first}]; a delegate carries each key at most once`,
      hint: HINTS.SPEC_DUPLICATE_KEY,
    });
  });

  const decoders: [string, (v: Uint8Array, where: string) => void][] = [
    [SPEC_TARGET_DEVICE, (v, w) => (out.targetDevice = decodeTargetDevice(v, w))],
    [SPEC_WEIGHT_STREAMING_BUDGET, (v, w) => (out.weightStreamingBudget = decodeBudget(v, w))],
    [SPEC_ZERO_COPY_KV, (v, w) => (out.zeroCopyKv = decodeZeroCopyKv(v, w))],
  ];
  for (const [key, decode] of decoders) {
    const index = firstIndex.get(key);
    if (index === undefined || repeated.has(key)) continue;
    try {
      decode(specs[index].value, specLoc(opts, index, key));
    } catch (e) {
      if (!(e instanceof TrtxError)) throw e;
      diagnostics.push({ severity: 'error', code: e.code as SpecErrorCode, location: e.location, message: e.message, hint: e.hint ?? '' });
    }
  }
  return { specs: out, diagnostics };
}

/**
 * Sets `key` to `value`: the first entry with that key keeps its position and
 * gets the new value, later repeats are dropped, and absent keys are appended.
 * Every other entry is kept as is, in order. Returns a new list.
 */
export function setSpec<T extends CompileSpecEntry>(specs: readonly T[], key: string, value: Uint8Array): T[] {
  const out: T[] = [];
  let placed = false;
  for (const s of specs) {
    if (s.key !== key) out.push(s);
    else if (!placed) {
      out.push({ ...s, value });
      placed = true;
    }
  }
  // T may carry optional bookkeeping (the model's `$absent`); a fresh entry
  // has none, which is what a new table means.
  if (!placed) out.push({ key, value } as T);
  return out;
}

/** Removes every entry with `key`; every other entry is kept as is, in order. */
export function removeSpec<T extends CompileSpecEntry>(specs: readonly T[], key: string): T[] {
  return specs.filter((s) => s.key !== key);
}

/** The value of the first entry with `key`, or undefined. */
export function getSpec(specs: readonly CompileSpecEntry[], key: string): Uint8Array | undefined {
  return specs.find((s) => s.key === key)?.value;
}
