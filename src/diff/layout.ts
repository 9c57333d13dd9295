// Where a method's memory is: arena sizes and devices, the named tensors
// (mutable buffers, by fully qualified name) that changed place or type, the
// method's signature, and the staging traffic one execution moves.

import type { Tensor } from '../pte/model.js';
import { arenaDevice, deviceLabel, placement, taggedDevice, tensorName } from '../pte/tensor.js';
import { stagingBytes } from '../graph/staging.js';
import { anonymousTensor, describeValue, dtypeName, shapeOf } from './describe.js';
import { pairBy } from './match.js';
import type { ArenaChange, ArenaState, IoChange, MethodDiff, TensorChange, TensorPlace } from './report.js';
import type { MethodView } from './view.js';
import { shortName } from '../util/display.js';

function arenaState(view: MethodView, index: number): ArenaState | null {
  const size = view.plan.nonConstBufferSizes[index];
  if (size === undefined) return null;
  return { size: Number(size), device: index === 0 ? 'reserved' : deviceLabel(arenaDevice(view.plan, index)) };
}

export function diffArenas(a: MethodView, b: MethodView): ArenaChange[] {
  const out: ArenaChange[] = [];
  const n = Math.max(a.plan.nonConstBufferSizes.length, b.plan.nonConstBufferSizes.length);
  for (let index = 0; index < n; index++) {
    const before = arenaState(a, index);
    const after = arenaState(b, index);
    if (before?.size !== after?.size || before?.device !== after?.device) out.push({ index, before, after });
  }
  return out;
}

function tensorPlace(view: MethodView, t: Tensor): TensorPlace {
  view.budget.chargeReport(2 * t.sizes.length + 64, `${view.name} > tensor ${shortName(tensorName(t) ?? '')}`);
  const p = placement(view.plan, t);
  return {
    dtype: dtypeName(t),
    shape: [...t.sizes],
    arena: p ? p.arena : null,
    offset: p ? Number(p.offset) : null,
    device: deviceLabel(p ? p.device : { type: 'cpu', index: 0 }),
    tagged_device: deviceLabel(taggedDevice(t)),
  };
}

function namedTensors(view: MethodView): { name: string; tensor: Tensor }[] {
  const out: { name: string; tensor: Tensor }[] = [];
  for (const v of view.plan.values) {
    if (v.type !== 'Tensor') continue;
    const name = tensorName(v.tensor);
    if (name) out.push({ name, tensor: v.tensor });
  }
  return out;
}

/** Named tensors added, removed, moved (arena, offset or device) or retyped. */
export function diffTensors(a: MethodView, b: MethodView): TensorChange[] {
  const { both, onlyA, onlyB } = pairBy(namedTensors(a), namedTensors(b), (t) => t.name);
  const out: TensorChange[] = [];
  for (const [x, y] of both) {
    const before = tensorPlace(a, x.tensor);
    const after = tensorPlace(b, y.tensor);
    const moved =
      before.arena !== after.arena ||
      before.offset !== after.offset ||
      before.device !== after.device ||
      before.tagged_device !== after.tagged_device;
    const retyped = before.dtype !== after.dtype || before.shape.join() !== after.shape.join();
    if (moved || retyped) out.push({ name: x.name, change: 'changed', moved, retyped, before, after });
  }
  for (const x of onlyA)
    out.push({ name: x.name, change: 'removed', moved: false, retyped: false, before: tensorPlace(a, x.tensor), after: null });
  for (const y of onlyB)
    out.push({ name: y.name, change: 'added', moved: false, retyped: false, before: null, after: tensorPlace(b, y.tensor) });
  return out;
}

/** A signature entry: name (if any), dtype, shape and place; never its own in#/out# role. */
function signatureText(view: MethodView, index: number): string {
  const v = view.plan.values[index];
  // Every entry is charged as inspect charges it (src/inspect/summary.ts),
  // equal or not: a method may list millions of inputs, each one compared.
  if (v?.type !== 'Tensor') {
    view.budget.chargeReport(96, `${view.name} > value %${index}`);
    return describeValue(view, index);
  }
  // Charged before the shape is written out: one tensor may be every input.
  view.budget.chargeReport(2 * v.tensor.sizes.length + 96, `${view.name} > value %${index}`);
  const name = tensorName(v.tensor);
  return name ? `${shortName(name)} ${shapeOf(v.tensor)}` : anonymousTensor(view, v.tensor);
}

export function diffSignature(a: MethodView, b: MethodView): IoChange[] {
  const out: IoChange[] = [];
  for (const role of ['input', 'output'] as const) {
    const la = role === 'input' ? a.plan.inputs : a.plan.outputs;
    const lb = role === 'input' ? b.plan.inputs : b.plan.outputs;
    for (let index = 0; index < Math.max(la.length, lb.length); index++) {
      const va = la[index];
      const vb = lb[index];
      const before = va === undefined ? null : signatureText(a, va);
      const after = vb === undefined ? null : signatureText(b, vb);
      if (before !== after) out.push({ role, index, before, after });
    }
  }
  return out;
}

export function diffStaging(a: MethodView, b: MethodView): MethodDiff['staging'] {
  const before = stagingBytes(a.plan);
  const after = stagingBytes(b.plan);
  const same =
    before.host_to_device_bytes === after.host_to_device_bytes &&
    before.device_to_host_bytes === after.device_to_host_bytes &&
    before.copies === after.copies;
  return same ? null : { before, after };
}
