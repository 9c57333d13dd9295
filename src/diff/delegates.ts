// Delegates of one method, matched by index and backend id: which arguments
// each call passes (by binding name), which compile specs changed, and what
// the TensorRT blob's header and metadata say. Engine bytes are not read;
// a changed engine shows as a changed size or metadata, or not at all.

import { anonymousTensor, describeValue } from './describe.js';
import { listChanges } from './match.js';
import type { DelegateArgChange, DelegateDiff, FieldChange, Scalar } from './report.js';
import { diffSpecs, specValue } from './specs.js';
import { argumentNames, delegateCalls, positionalNames, type BlobFacts, type DelegateView, type MethodView } from './view.js';
import type { IoBinding } from '../tensorrt/blob.js';
import { tensorAt, tensorName } from '../pte/tensor.js';
import { shortName } from '../util/display.js';
import { itemAt, present } from '../util/present.js';

/**
 * An argument as the delegate receives it. Not by its delegate role (that
 * is the binding itself), and a named buffer also says where it is, so that
 * a staging copy replaced by the buffer reads as such.
 */
function argumentText(view: MethodView, index: number): string {
  const t = tensorAt(view.plan, index);
  const name = t && tensorName(t);
  return name ? `${shortName(name)} ${anonymousTensor(view, t)}` : describeValue(view, index);
}

function diffArgs(
  a: MethodView,
  da: DelegateView,
  b: MethodView,
  db: DelegateView,
): { calls: DelegateDiff['calls']; args: DelegateArgChange[] } {
  const callsA = delegateCalls(a.plan).filter((c) => c.delegateIndex === da.index);
  const callsB = delegateCalls(b.plan).filter((c) => c.delegateIndex === db.index);
  const args: DelegateArgChange[] = [];
  // Calls are paired in order; the calls past the shorter side are the count change below.
  for (const [call, ca] of callsA.entries()) {
    const cb = callsB[call];
    if (cb === undefined) break;
    const na = argumentNames(da, ca.args.length);
    const nb = argumentNames(db, cb.args.length);
    // Binding names on one side and positions on the other share no name:
    // compare both by position rather than report every argument replaced.
    const byPosition = na.byBinding !== nb.byBinding;
    const namesA = byPosition ? positionalNames(ca.args.length) : na.names;
    const namesB = byPosition ? positionalNames(cb.args.length) : nb.names;
    // argumentNames gives one name per argument (the arity it was asked for).
    const valueB = new Map(namesB.map((n, i) => [n, argumentText(b, itemAt(cb.args, i, `${b.name} > delegate call ${call} argument`))]));
    const valueA = new Map(namesA.map((n, i) => [n, argumentText(a, itemAt(ca.args, i, `${a.name} > delegate call ${call} argument`))]));
    namesA.forEach((name) => {
      const before = present(valueA.get(name), `${a.name} > delegate call ${call} argument ${name}`);
      const after = valueB.get(name);
      if (after === undefined) args.push({ call, change: 'removed', name, before, after: null });
      else if (after !== before) args.push({ call, change: 'rebound', name, before, after });
    });
    for (const name of namesB)
      if (!valueA.has(name))
        args.push({
          call,
          change: 'added',
          name,
          before: null,
          after: present(valueB.get(name), `${b.name} > delegate call ${call} argument ${name}`),
        });
  }
  const calls = callsA.length === callsB.length ? null : { before: callsA.length, after: callsB.length };
  return { calls, args };
}

// A binding's type is shown only when the blob records it (the real export records names only).
const bindingText = (b: IoBinding) =>
  `${b.is_input ? 'input' : 'output'} ${shortName(b.name)}${b.dtype === '' && b.shape.length === 0 ? '' : `: ${b.dtype || '?'}[${b.shape.join(',')}]`}`;
const LONG_TEXT = 64;
const shortText = (s: string) => (s.length > LONG_TEXT ? `<${s.length} chars>` : s);

function field(out: FieldChange[], name: string, before: Scalar | null, after: Scalar | null): void {
  if (before !== after) out.push({ field: name, before, after });
}

/** Blob facts that differ, including where the processed data lives. */
function diffBlob(da: DelegateView, db: DelegateView): FieldChange[] {
  const out: FieldChange[] = [];
  const place = (d: DelegateView) => ('error' in d.data ? `error: ${d.data.error}` : d.data.location);
  field(out, 'data.location', place(da), place(db));
  field(out, 'data.size', 'error' in da.data ? null : da.data.size, 'error' in db.data ? null : db.data.size);
  const ba = da.blob;
  const bb = db.blob;
  if (!ba || !bb || 'error' in ba || 'error' in bb) {
    const text = (x: DelegateView['blob']) => (x === null ? null : 'error' in x ? `error: ${x.error}` : `${x.magic} blob`);
    field(out, 'blob', text(ba), text(bb));
    return out;
  }
  field(out, 'magic', ba.magic, bb.magic);
  field(out, 'engine_size', ba.engineSize, bb.engineSize);
  const bindings = (x: BlobFacts) => [...x.inputs, ...x.outputs].map(bindingText);
  const io = listChanges(bindings(ba), bindings(bb));
  for (const r of io.removed) out.push({ field: 'io_binding', before: r, after: null });
  for (const ad of io.added) out.push({ field: 'io_binding', before: null, after: ad });
  const aliases = (x: BlobFacts) => x.aliased.map((al) => `${al.output} -> ${al.input} (${al.kind})`);
  const al = listChanges(aliases(ba), aliases(bb));
  for (const r of al.removed) out.push({ field: 'aliased_io', before: r, after: null });
  for (const ad of al.added) out.push({ field: 'aliased_io', before: null, after: ad });
  field(out, 'hardware_compatible', ba.hardwareCompatible, bb.hardwareCompatible);
  field(out, 'device_id', ba.deviceId, bb.deviceId);
  field(out, 'target_platform', ba.targetPlatform, bb.targetPlatform);
  if (ba.serializedMetadata !== bb.serializedMetadata) {
    out.push({ field: 'serialized_metadata', before: shortText(ba.serializedMetadata), after: shortText(bb.serializedMetadata) });
  }
  return out;
}

function wholeDelegate(view: MethodView, d: DelegateView, change: 'added' | 'removed'): DelegateDiff {
  const calls = delegateCalls(view.plan).filter((c) => c.delegateIndex === d.index).length;
  const specs = d.delegate.compileSpecs.map((s) => ({
    key: s.key,
    change,
    before: change === 'removed' ? specValue(s) : null,
    after: change === 'added' ? specValue(s) : null,
  }));
  return {
    index: d.index,
    backend_id: d.id,
    change,
    calls: change === 'added' ? { before: 0, after: calls } : { before: calls, after: 0 },
    args: [],
    compile_specs: specs,
    blob: [],
  };
}

export function diffDelegates(a: MethodView, b: MethodView): DelegateDiff[] {
  const out: DelegateDiff[] = [];
  for (let i = 0; i < Math.max(a.delegates.length, b.delegates.length); i++) {
    const da = a.delegates[i];
    const db = b.delegates[i];
    if (da && db && da.id === db.id) {
      const { calls, args } = diffArgs(a, da, b, db);
      const d: DelegateDiff = {
        index: i,
        backend_id: da.id,
        change: 'changed',
        calls,
        args,
        compile_specs: diffSpecs(da.delegate.compileSpecs, db.delegate.compileSpecs),
        blob: diffBlob(da, db),
      };
      if (d.calls || d.args.length || d.compile_specs.length || d.blob.length) out.push(d);
      continue;
    }
    // Another backend at the same index is another delegate.
    if (da) out.push(wholeDelegate(a, da, 'removed'));
    if (db) out.push(wholeDelegate(b, db, 'added'));
  }
  return out;
}
