// Decimal byte counts as the TensorRT runtime reads a weight_streaming_budget
// (pytorch/TensorRT cpp/src/torch_tensorrt/executorch/WeightStreamingBudget.cpp:
// std::from_chars into int64 over the whole value, then "not negative"). The
// wire form of every size once trtx has read the user's (src/util/size.ts):
// compile specs, and the runner's byte options. The same rules, problem for
// problem, are native-runner/src/runtime/byte_count.cpp and the bridge's
// python-bridge/trtx_bridge/compile_specs.py; test/vectors/sizes.json holds
// all three to them.
//
// from_chars reads a '-' then digits (no '+', space, unit or NUL) and reports
// a value int64 cannot hold as out of range; the runtime refuses any negative
// value it did read. So "-0" is 0, "-9223372036854775808" (INT64_MIN, which
// from_chars reads) is negative, and "-9223372036854775809" is out of range.

/** Why a value is not a byte count. */
export type ByteCountProblem = 'empty' | 'no_digits' | 'not_digits' | 'range' | 'negative';

/** Exclusive upper bound: the runtime reads the value as int64. */
export const BYTE_COUNT_LIMIT = 1n << 63n;

const MINUS = 0x2d;

/** Reads raw bytes as a byte count: the value in [0, 2^63), or why not. */
export function readByteCount(value: Uint8Array): bigint | ByteCountProblem {
  if (value.length === 0) return 'empty';
  const neg = value[0] === MINUS;
  const digits = neg ? value.subarray(1) : value;
  if (digits.length === 0) return 'no_digits';
  let n = 0n;
  for (const b of digits) {
    if (b < 0x30 || b > 0x39) return 'not_digits';
    // Stop past int64's magnitude (2^63 for a negative): no unbounded bigint.
    if (n <= BYTE_COUNT_LIMIT) n = n * 10n + BigInt(b - 0x30);
  }
  if (neg) return n === 0n ? 0n : n <= BYTE_COUNT_LIMIT ? 'negative' : 'range';
  return n < BYTE_COUNT_LIMIT ? n : 'range';
}

/** The problem in words, after the value: "weight_streaming_budget "12G" is not ...". */
export const BYTE_COUNT_PROBLEMS: Record<ByteCountProblem, string> = {
  empty: 'is empty',
  no_digits: 'is not a decimal number of bytes (digits 0-9 only)',
  not_digits: 'is not a decimal number of bytes (digits 0-9 only; no sign, space or unit)',
  range: 'is out of range (must be below 2^63)',
  negative: 'is negative',
};
