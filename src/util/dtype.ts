// The tensor element types trtx moves between PyTorch, the reference outputs
// file (torch's names) and the native runner's tensor files (ExecuTorch
// ScalarType codes, schemas/scalar_type.fbs), with their sizes, and the
// little-endian decoding of their bytes to numbers for comparison.

export const DTYPES = ['float32', 'float16', 'bfloat16', 'float64', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool'] as const;
export type DType = (typeof DTYPES)[number];

/** ExecuTorch ScalarType codes (schemas/scalar_type.fbs). */
export const SCALAR_TYPE_CODE: Readonly<Record<DType, number>> = {
  uint8: 0,
  int8: 1,
  int16: 2,
  int32: 3,
  int64: 4,
  float16: 5,
  float32: 6,
  float64: 7,
  bool: 11,
  bfloat16: 15,
};

export const ITEM_SIZE: Readonly<Record<DType, number>> = {
  uint8: 1,
  int8: 1,
  int16: 2,
  int32: 4,
  int64: 8,
  float16: 2,
  float32: 4,
  float64: 8,
  bool: 1,
  bfloat16: 2,
};

export function isDType(s: string): s is DType {
  return (DTYPES as readonly string[]).includes(s);
}

/** The dtype of an ExecuTorch ScalarType code; null for one trtx does not move. */
export function dtypeOfScalarType(code: number): DType | null {
  for (const d of DTYPES) if (SCALAR_TYPE_CODE[d] === code) return d;
  return null;
}

export const isFloating = (d: DType): boolean => d === 'float32' || d === 'float64' || d === 'float16' || d === 'bfloat16';

/** Elements of `shape`; null when a dimension is negative or not an integer, or the count is not a safe integer. */
export function numelOf(shape: readonly number[]): number | null {
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) return null;
    n *= d;
    if (!Number.isSafeInteger(n)) return null;
  }
  return n;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** Element `i` of little-endian `bytes` of type `dtype`, as a number (int64 beyond 2^53 rounds). */
export function elementAt(view: DataView, dtype: DType, i: number): number {
  switch (dtype) {
    case 'float32':
      return view.getFloat32(i * 4, true);
    case 'float64':
      return view.getFloat64(i * 8, true);
    case 'float16':
      return halfToFloat(view.getUint16(i * 2, true));
    case 'bfloat16': {
      const scratch = new DataView(new ArrayBuffer(4));
      scratch.setUint32(0, view.getUint16(i * 2, true) << 16, false);
      return scratch.getFloat32(0, false);
    }
    case 'int64':
      return Number(view.getBigInt64(i * 8, true));
    case 'int32':
      return view.getInt32(i * 4, true);
    case 'int16':
      return view.getInt16(i * 2, true);
    case 'int8':
      return view.getInt8(i);
    case 'uint8':
      return view.getUint8(i);
    case 'bool':
      return view.getUint8(i) ? 1 : 0;
  }
}

export const viewOf = (bytes: Uint8Array): DataView => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
