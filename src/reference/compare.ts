// Compares a program's outputs with eager PyTorch's (docs/reference-lowering.md
// §4), per method, output and step: max absolute error, max relative error
// and the worst element. An element passes when |a - r| <= atol + rtol * |r|;
// integers and bool are exact; NaN matches only NaN at the same place.

import { elementAt, isFloating, ITEM_SIZE, viewOf, type DType } from '../util/dtype.js';
import type { RecordedMethod, Value } from './read.js';

export interface Tolerance {
  atol: number;
  rtol: number;
}

/** Default tolerances of the floating types; the others compare exactly. */
export const DEFAULT_TOLERANCES: Readonly<Record<'float32' | 'float64' | 'float16' | 'bfloat16', Tolerance>> = {
  float32: { atol: 1e-4, rtol: 1e-4 },
  float64: { atol: 1e-4, rtol: 1e-4 },
  float16: { atol: 1e-2, rtol: 1e-2 },
  bfloat16: { atol: 5e-2, rtol: 5e-2 },
};

/** The tolerance of `dtype` (null: any type but a floating one, exact), with --atol/--rtol overriding the floating types'. */
export function toleranceOf(dtype: DType | 'float' | null, override: Partial<Tolerance> = {}): Tolerance {
  if (dtype === null || (dtype !== 'float' && !isFloating(dtype))) return { atol: 0, rtol: 0 };
  const base = DEFAULT_TOLERANCES[dtype === 'float' ? 'float64' : (dtype as keyof typeof DEFAULT_TOLERANCES)];
  return { atol: override.atol ?? base.atol, rtol: override.rtol ?? base.rtol };
}

export interface WorstElement {
  step: number;
  /** Flat (row-major) index in the output; 0 for a scalar. */
  index: number;
  actual: number | string;
  expected: number | string;
}

/** One output of one method, over the steps compared. */
export interface OutputComparison {
  method: string;
  output: number;
  /** The recorded dtype ("int", "float", "bool", "none" for a non-tensor). */
  dtype: string;
  shape: number[] | null;
  steps: number;
  /** Elements compared over all steps. */
  elements: number;
  atol: number;
  rtol: number;
  /** Largest |a - r|; null when it is not finite (a NaN or infinity on one side only). */
  max_abs: number | null;
  /** Largest |a - r| / |r|; null when not finite (r = 0 and a differs, or a NaN on one side). */
  max_rel: number | null;
  /** Elements over the tolerance. */
  mismatched: number;
  /** The element furthest past (or nearest to) its tolerance; null when nothing was compared. */
  worst: WorstElement | null;
  /** Why the output could not be compared element by element (a dtype, shape or kind mismatch, a missing output). */
  error: string | null;
  ok: boolean;
}

export type ActualOutputs = (method: string, step: number, index: number) => Value | undefined;

const finite = (x: number) => (Number.isFinite(x) ? x : null);
const show = (x: number) => (Number.isNaN(x) ? 'NaN' : Number.isFinite(x) ? x : x > 0 ? 'inf' : '-inf');

class Accumulator {
  elements = 0;
  maxAbs = 0;
  maxRel = 0;
  mismatched = 0;
  worst: WorstElement | null = null;
  private worstScore = -1;

  constructor(private readonly tol: Tolerance) {}

  add(step: number, index: number, a: number, r: number, exactDiffer = false): void {
    this.elements++;
    let abs: number;
    let pass: boolean;
    if (Number.isNaN(a) || Number.isNaN(r)) {
      pass = Number.isNaN(a) && Number.isNaN(r);
      abs = pass ? 0 : Infinity;
    } else if (a === r && !exactDiffer) {
      abs = 0;
      pass = true;
    } else {
      abs = Math.abs(a - r);
      if (Number.isNaN(abs)) abs = Infinity; // inf - inf of opposite signs
      pass = !exactDiffer && abs <= this.tol.atol + this.tol.rtol * Math.abs(r);
      if (exactDiffer && abs === 0) abs = Number.MIN_VALUE; // int64 past 2^53: the bytes differ
    }
    const rel = abs === 0 ? 0 : r === 0 ? Infinity : abs / Math.abs(r);
    this.maxAbs = Math.max(this.maxAbs, abs);
    this.maxRel = Math.max(this.maxRel, rel);
    if (!pass) this.mismatched++;
    const allowed = this.tol.atol + this.tol.rtol * (Number.isFinite(r) ? Math.abs(r) : 0);
    const score = pass ? (allowed > 0 ? abs / allowed : 0) : allowed > 0 && Number.isFinite(abs) ? 1 + abs / allowed : Infinity;
    if (score > this.worstScore) {
      this.worstScore = score;
      this.worst = { step, index, actual: show(a), expected: show(r) };
    }
  }
}

const label = (v: Value) => (v.kind === 'tensor' ? `${v.dtype} [${v.shape.join(', ')}]` : v.kind);

/** The program's own floating type's tolerance when it differs from the reference's (a bfloat16 program against float32 outputs); null otherwise. */
function widerReference(recorded: Value | undefined, produced: Value | undefined, override: Partial<Tolerance>): Tolerance | null {
  if (recorded?.kind !== 'tensor' || produced?.kind !== 'tensor' || recorded.dtype === produced.dtype) return null;
  return isFloating(recorded.dtype) && isFloating(produced.dtype) ? toleranceOf(produced.dtype, override) : null;
}

const coarser = (a: Tolerance, b: Tolerance | null): Tolerance =>
  b ? { atol: Math.max(a.atol, b.atol), rtol: Math.max(a.rtol, b.rtol) } : a;

/** Compares output `index` of `method` over `steps` steps. */
export function compareOutput(
  method: RecordedMethod,
  index: number,
  steps: number,
  actual: ActualOutputs,
  override: Partial<Tolerance> = {},
): OutputComparison {
  const first = method.steps[0]?.outputs[index];
  const dtype = first === undefined ? 'none' : first.kind === 'tensor' ? first.dtype : first.kind;
  const tol = coarser(
    toleranceOf(first?.kind === 'tensor' ? first.dtype : first?.kind === 'float' ? 'float' : null, override),
    widerReference(first, actual(method.name, 0, index), override),
  );
  const acc = new Accumulator(tol);
  const result = (error: string | null): OutputComparison => ({
    method: method.name,
    output: index,
    dtype,
    shape: first?.kind === 'tensor' ? first.shape : null,
    steps,
    elements: acc.elements,
    atol: tol.atol,
    rtol: tol.rtol,
    max_abs: error ? null : finite(acc.maxAbs),
    max_rel: error ? null : finite(acc.maxRel),
    mismatched: acc.mismatched,
    worst: acc.worst,
    error,
    ok: error === null && acc.mismatched === 0,
  });
  for (let s = 0; s < steps; s++) {
    const r = method.steps[s]?.outputs[index];
    const a = actual(method.name, s, index);
    if (r === undefined) return result(`step ${s}: no recorded output ${index}`);
    if (a === undefined) return result(`step ${s}: the program produced no output ${index}`);
    if (a.kind !== r.kind) return result(`step ${s}: the program's output is ${label(a)}, PyTorch's ${label(r)}`);
    if (a.kind === 'tensor' && r.kind === 'tensor') {
      // Two floating types may differ: a bfloat16 program against a float32 model's outputs, compared in double, with the coarser type's tolerance.
      if (a.dtype !== r.dtype && !(isFloating(a.dtype) && isFloating(r.dtype)))
        return result(`step ${s}: the program's output is ${a.dtype}, PyTorch's ${r.dtype}`);
      if (a.shape.join(',') !== r.shape.join(','))
        return result(`step ${s}: the program's output has shape [${a.shape.join(', ')}], PyTorch's [${r.shape.join(', ')}]`);
      const size = ITEM_SIZE[r.dtype];
      const n = r.data.length / size;
      if (a.data.length / ITEM_SIZE[a.dtype] !== n) return result(`step ${s}: ${a.data.length} bytes against ${r.data.length}`);
      const va = viewOf(a.data);
      const vr = viewOf(r.data);
      const exact = !isFloating(r.dtype);
      for (let i = 0; i < n; i++) {
        const differ = exact && !a.data.subarray(i * size, (i + 1) * size).every((b, k) => b === r.data[i * size + k]);
        acc.add(s, i, elementAt(va, a.dtype, i), elementAt(vr, r.dtype, i), differ);
      }
    } else if (a.kind === 'int' && r.kind === 'int') acc.add(s, 0, a.value, r.value, a.value !== r.value);
    else if (a.kind === 'float' && r.kind === 'float') acc.add(s, 0, a.value, r.value);
    else if (a.kind === 'bool' && r.kind === 'bool') acc.add(s, 0, Number(a.value), Number(r.value), a.value !== r.value);
  }
  return result(null);
}

/** Every output of every method in `methods`, over `steps` steps. */
export function compareMethods(
  methods: readonly RecordedMethod[],
  steps: number,
  actual: ActualOutputs,
  override: Partial<Tolerance> = {},
): OutputComparison[] {
  return methods.flatMap((m) => (m.steps[0]?.outputs ?? []).map((_, k) => compareOutput(m, k, steps, actual, override)));
}

/** "max abs 3.1e-6, max rel 2.0e-5 over 5 steps" (or why it could not compare). */
export function describeComparison(c: OutputComparison): string {
  if (c.error) return c.error;
  const num = (x: number | null) => (x === null ? 'inf' : x === 0 ? '0' : x.toExponential(2));
  const worst =
    c.worst && c.mismatched ? `; worst at step ${c.worst.step} element ${c.worst.index}: ${c.worst.actual} vs ${c.worst.expected}` : '';
  const over = c.mismatched ? `, ${c.mismatched} of ${c.elements} elements over atol ${c.atol} + rtol ${c.rtol}` : '';
  return `max abs ${num(c.max_abs)}, max rel ${num(c.max_rel)} over ${c.steps} steps${over}${worst}`;
}
