// The compile specs trtx owns on a TensorRT delegate (docs/file-format.md):
// `target_device`, `weight_streaming_budget`, `zero_copy_kv`. Values are raw
// bytes on the wire; this module gives them types, refuses what the runtime
// would refuse or misread, and accepts (with a warning when the spelling is
// unusual) what it reads correctly. Each rule and its upstream source is a row
// of docs/upstream-compatibility.md.
//
// A budget that does not parse is an invalid program, never "automatic": the
// runtime fails the load on it (pytorch/TensorRT
// cpp/src/torch_tensorrt/executorch/TensorRTBackend.cpp init, "malformed
// weight_streaming_budget compile spec"), so a checker that shrugged would
// pass a program that cannot run.

import { BYTE_COUNT_LIMIT, BYTE_COUNT_PROBLEMS, readByteCount } from '../util/byte-count.js';
import { TrtxError } from '../util/errors.js';
import { isJsonObject, isWellFormedText, parseStrictJsonBytes, pyJsonCompact, utf8Bytes } from './strict-json.js';
import { MAX_DEVICE_INDEX, readTargetDevice, type TargetDevice } from './target-device.js';

export const SPEC_TARGET_DEVICE = 'target_device';
export const SPEC_WEIGHT_STREAMING_BUDGET = 'weight_streaming_budget';
export const SPEC_ZERO_COPY_KV = 'zero_copy_kv';

/** Exclusive upper bound of a budget: the runtime parses it as int64. */
export const BUDGET_LIMIT = BYTE_COUNT_LIMIT;

export type SpecErrorCode = 'SPEC_BUDGET_DUPLICATE' | 'SPEC_BUDGET_INVALID' | 'SPEC_TARGET_DEVICE_INVALID' | 'SPEC_ZERO_COPY_KV_INVALID';
export type SpecWarningCode = 'SPEC_DUPLICATE_KEY' | 'SPEC_BUDGET_FORM' | 'SPEC_TARGET_DEVICE_FORM';
export type SpecCode = SpecErrorCode | SpecWarningCode;

/** Structurally the program model's CompileSpec. */
export interface CompileSpecEntry {
  key: string | null;
  value: Uint8Array;
}

export interface SpecDiagnostic {
  severity: 'error' | 'warning';
  code: SpecCode;
  location: string;
  message: string;
  hint: string;
}

export interface TypedCompileSpecs {
  /** The target_device as read (any spelling ExecuTorch reads as cuda:N, cpu included). */
  target?: TargetDevice;
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

const HINTS: Record<SpecCode, string> = {
  SPEC_BUDGET_DUPLICATE: 'keep one budget per delegate: `trtx rewrite --budget SIZE` collapses the repeats',
  SPEC_DUPLICATE_KEY: 'nothing to do: the first entry is the one ExecuTorch used; re-export to drop the repeat',
  SPEC_BUDGET_INVALID: 'set a valid budget with `trtx rewrite --budget SIZE`, or remove it with `--clear-budget`',
  SPEC_BUDGET_FORM: 'nothing to do; `trtx rewrite --budget SIZE` writes it as plain decimal',
  SPEC_TARGET_DEVICE_INVALID: 're-export with target_device "cuda:N"',
  SPEC_TARGET_DEVICE_FORM: 'nothing to do; Torch-TensorRT writes "cuda:N"',
  SPEC_ZERO_COPY_KV_INVALID: 're-export with zero_copy_kv, or re-export without it',
};

function specError(code: SpecErrorCode, location: string, message: string): TrtxError {
  return new TrtxError(code, location, message, { hint: HINTS[code] });
}

function usageError(code: SpecErrorCode, message: string): TrtxError {
  return new TrtxError(code, '', message, { hint: HINTS[code] });
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

/**
 * Decodes a budget value as Torch-TensorRT does (WeightStreamingBudget.cpp:
 * std::from_chars into int64, the whole value consumed, not negative): ASCII
 * decimal digits in [0, 2^63), with no '+', space or NUL, and a leading '-'
 * only on zero (`-0` is 0, which from_chars reads and the range check keeps).
 * The digit rules are src/util/byte-count.ts, shared with the runner and the bridge.
 */
export function decodeBudget(value: Uint8Array, location = ''): bigint {
  const read = readByteCount(value);
  if (typeof read === 'bigint') return read;
  throw specError('SPEC_BUDGET_INVALID', location, `weight_streaming_budget ${showBytes(value)} ${BYTE_COUNT_PROBLEMS[read]}`);
}

/** True when the budget is written as trtx writes it: plain decimal, no sign, no leading zero. */
export function isCanonicalBudget(value: Uint8Array): boolean {
  return value.length > 0 && value.every((b) => b >= 0x30 && b <= 0x39) && (value.length === 1 || value[0] !== 0x30);
}

export function encodeBudget(bytes: bigint): Uint8Array {
  if (typeof bytes !== 'bigint' || bytes < 0n || bytes >= BUDGET_LIMIT) {
    throw usageError('SPEC_BUDGET_INVALID', `weight streaming budget ${String(bytes)} is outside [0, 2^63) bytes`);
  }
  return utf8Bytes(bytes.toString(10));
}

// ---------------------------------------------------------------------------
// target_device

/** Reads a target_device value as ExecuTorch does (see target-device.ts); throws when it is refused. */
export function decodeTargetDevice(value: Uint8Array, location = ''): TargetDevice {
  const read = readTargetDevice(value);
  if (typeof read === 'string') throw specError('SPEC_TARGET_DEVICE_INVALID', location, `target_device ${showBytes(value)} ${read}`);
  return read;
}

export function encodeTargetDevice(index: number): Uint8Array {
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_DEVICE_INDEX) {
    throw usageError('SPEC_TARGET_DEVICE_INVALID', `device index ${index} is not in [0, ${MAX_DEVICE_INDEX}]`);
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
 * throws). A repeated key is read as its readers read it: the first entry
 * wins (ExecuTorch's _get_target_device_from_compile_specs stops at the first
 * match, and Torch-TensorRT's runtime reads no key but the budget), a warning;
 * except a repeated budget, which Torch-TensorRT refuses at init ("duplicate
 * weight_streaming_budget compile spec"), and zero_copy_kv repeated with
 * different values, which no reader can settle: errors, and the key gets no
 * typed value.
 */
export function decodeCompileSpecs(specs: readonly CompileSpecEntry[], opts: SpecLocationOptions = {}): DecodedCompileSpecs {
  const diagnostics: SpecDiagnostic[] = [];
  const push: PushSpecFinding = (severity, code, location, message) => {
    diagnostics.push({ severity, code, location, message, hint: HINTS[code] });
  };
  const byKey = entriesByKey(specs);
  const unusable = repeatedKeys(byKey, opts, push);
  const out: TypedCompileSpecs = {};
  for (const [key, decode] of ownedDecoders(out, push)) {
    const first = byKey.get(key)?.[0];
    if (first === undefined || unusable.has(key)) continue;
    try {
      decode(first.value, specLoc(opts, first.i, key));
    } catch (e) {
      if (!(e instanceof TrtxError)) throw e;
      push('error', e.code as SpecErrorCode, e.location, e.message);
    }
  }
  return { specs: out, diagnostics };
}

type PushSpecFinding = (severity: 'error' | 'warning', code: SpecCode, location: string, message: string) => void;
type KeyedEntries = Map<string, { i: number; value: Uint8Array }[]>;

/** The entries of each key, in list order (an entry with no key is nobody's). */
function entriesByKey(specs: readonly CompileSpecEntry[]): KeyedEntries {
  const byKey: KeyedEntries = new Map();
  specs.forEach((s, i) => {
    if (s.key === null) return;
    const list = byKey.get(s.key) ?? [];
    list.push({ i, value: s.value });
    byKey.set(s.key, list);
  });
  return byKey;
}

/** Reports every repeated key; returns the keys no reader can settle (they get no typed value). */
function repeatedKeys(byKey: KeyedEntries, opts: SpecLocationOptions, push: PushSpecFinding): Set<string> {
  const unusable = new Set<string>();
  for (const [key, [first, ...repeated]] of byKey) {
    if (first === undefined) continue;
    for (const { i, value } of repeated) {
      const where = specLoc(opts, i, key);
      const repeats = `compile spec ${JSON.stringify(key)} repeats compile_specs[${first.i}]`;
      if (key === SPEC_WEIGHT_STREAMING_BUDGET) {
        unusable.add(key);
        push(
          'error',
          'SPEC_BUDGET_DUPLICATE',
          where,
          `${repeats}; Torch-TensorRT refuses a delegate with two budgets when it loads (TensorRTBackend::init)`,
        );
      } else if (key === SPEC_ZERO_COPY_KV && !sameBytes(value, first.value)) {
        unusable.add(key);
        push(
          'error',
          'SPEC_ZERO_COPY_KV_INVALID',
          where,
          `${repeats} with another value; a runtime reading either would elide different outputs`,
        );
      } else {
        push(
          'warning',
          'SPEC_DUPLICATE_KEY',
          where,
          `${repeats}; the first is the one ExecuTorch reads, and Torch-TensorRT's runtime reads neither`,
        );
      }
    }
  }
  return unusable;
}

/** The keys trtx owns, each with the decoder that types its first entry into `out` (warning on an unusual spelling). */
function ownedDecoders(out: TypedCompileSpecs, push: PushSpecFinding): [string, (v: Uint8Array, where: string) => void][] {
  return [
    [
      SPEC_TARGET_DEVICE,
      (v, w) => {
        const d = decodeTargetDevice(v, w);
        out.target = d;
        if (d.type === 'cpu') {
          push(
            'warning',
            'SPEC_TARGET_DEVICE_FORM',
            w,
            `target_device ${showBytes(v)} names the host: ExecuTorch leaves the delegate's tensors on the CPU and Torch-TensorRT stages them to the GPU itself`,
          );
        } else if (!d.canonical) {
          push(
            'warning',
            'SPEC_TARGET_DEVICE_FORM',
            w,
            `target_device ${showBytes(v)} is read as cuda:${d.index} by ExecuTorch (it strips, lower-cases and reads the index with int())`,
          );
        }
      },
    ],
    [
      SPEC_WEIGHT_STREAMING_BUDGET,
      (v, w) => {
        out.weightStreamingBudget = decodeBudget(v, w);
        if (!isCanonicalBudget(v)) {
          push(
            'warning',
            'SPEC_BUDGET_FORM',
            w,
            `weight_streaming_budget ${showBytes(v)} is read as ${out.weightStreamingBudget} bytes by Torch-TensorRT (std::from_chars)`,
          );
        }
      },
    ],
    [SPEC_ZERO_COPY_KV, (v, w) => (out.zeroCopyKv = decodeZeroCopyKv(v, w))],
  ];
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
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

/** A delegate's zero_copy_kv stamp: the elided output names, a stamp that does not parse, or null (unstamped). */
export type ZeroCopyStamp = { names: string[] } | { error: TrtxError } | null;

/**
 * The zero_copy_kv stamp as the runtime reads it (the first entry with the
 * key, like getSpec); `location` prefixes a parse error's location. Every
 * reader of the stamp goes through here.
 */
export function zeroCopyStampOf(specs: readonly CompileSpecEntry[], location = ''): ZeroCopyStamp {
  const raw = getSpec(specs, SPEC_ZERO_COPY_KV);
  if (raw === undefined) return null;
  try {
    return { names: decodeZeroCopyKv(raw, location) };
  } catch (e) {
    if (!(e instanceof TrtxError)) throw e;
    return { error: e };
  }
}
