// Compile specs of one delegate compared by key, and by decoded value where
// trtx knows the key: a budget written "08589934592" is the same 8 GiB as
// "8589934592", while a value that does not decode is compared by its bytes.

import type { CompileSpec } from '../pte/model.js';
import { decodeCompileSpecs, showBytes } from '../tensorrt/compile-specs.js';
import { canonicalTargetDevice } from '../tensorrt/target-device.js';
import { formatIEC } from '../util/size.js';
import { pairBy } from './match.js';
import type { SpecChange, SpecValue } from './report.js';

export function specValue(spec: CompileSpec): SpecValue {
  const { specs, diagnostics } = decodeCompileSpecs([spec]);
  let decoded: SpecValue['decoded'] = null;
  if (specs.target !== undefined) decoded = { target_device: canonicalTargetDevice(specs.target) };
  if (specs.weightStreamingBudget !== undefined) {
    decoded = { budget_bytes: specs.weightStreamingBudget.toString(), budget_iec: formatIEC(specs.weightStreamingBudget) };
  }
  if (specs.zeroCopyKv !== undefined) decoded = { zero_copy_kv: specs.zeroCopyKv };
  return {
    size: spec.value.length,
    raw: showBytes(spec.value),
    decoded,
    error: diagnostics.find((d) => d.severity === 'error')?.message ?? null,
  };
}

function sameBytes(x: Uint8Array, y: Uint8Array): boolean {
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function sameValue(x: CompileSpec, y: CompileSpec, vx: SpecValue, vy: SpecValue): boolean {
  if (vx.decoded && vy.decoded) return JSON.stringify(vx.decoded) === JSON.stringify(vy.decoded);
  return sameBytes(x.value, y.value);
}

/** Specs added, removed or changed; the order of the list is not compared (readers look specs up by key). */
export function diffSpecs(a: readonly CompileSpec[], b: readonly CompileSpec[]): SpecChange[] {
  // A null key is its own identity, apart from every string key.
  const { both, onlyA, onlyB } = pairBy(a, b, (s) => (s.key === null ? '\u0000null' : `k:${s.key}`));
  const out: SpecChange[] = [];
  for (const [x, y] of both) {
    const vx = specValue(x);
    const vy = specValue(y);
    if (!sameValue(x, y, vx, vy)) out.push({ key: x.key, change: 'changed', before: vx, after: vy });
  }
  for (const x of onlyA) out.push({ key: x.key, change: 'removed', before: specValue(x), after: null });
  for (const y of onlyB) out.push({ key: y.key, change: 'added', before: null, after: specValue(y) });
  return out;
}
