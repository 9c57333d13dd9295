// One method as the diff sees it: its delegates with what their blobs say
// (binding names, aliasing), the name each delegate argument binds, and a
// role for every value an instruction touches. Built once per side, before
// any comparison, because naming a value needs the whole method (a staging
// copy is named by the delegate binding it feeds, which comes later).

import type { BackendDelegate, ExecutionPlan, Instruction } from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { decodeCompileSpecs } from '../tensorrt/compile-specs.js';
import { delegatesOf, readDelegate, type DelegateRef } from '../tensorrt/delegates.js';
import type { AliasedIo, IoBinding } from '../tensorrt/blob.js';
import type { ReportBudget } from '../util/report-budget.js';

export interface BlobFacts {
  magic: string;
  engineSize: number;
  inputs: IoBinding[];
  outputs: IoBinding[];
  aliased: AliasedIo[];
  hardwareCompatible: boolean;
  deviceId: number;
  targetPlatform: string;
  serializedMetadata: string;
}

export interface DelegateView {
  index: number;
  id: string | null;
  delegate: BackendDelegate;
  ref: DelegateRef;
  /** Where the processed data lives, or why it cannot be found. */
  data: { location: 'inline' | 'segment'; size: number } | { error: string };
  /** TensorRT blob facts; null for another backend. */
  blob: BlobFacts | { error: string } | null;
}

export interface MethodView {
  planIndex: number;
  plan: ExecutionPlan;
  name: string;
  delegates: DelegateView[];
  /** Value index -> `delegateN.binding`, from the first delegate call that passes it. */
  roles: Map<number, string>;
  /** Value index -> `in#N` (its first place among the inputs), else `out#N`: looked up once per value described. */
  io: Map<number, string>;
  /** What describing this method charges: its program's report budget. */
  budget: ReportBudget;
}

async function delegateView(pte: PteFile, ref: DelegateRef): Promise<DelegateView> {
  const { place, blob } = await readDelegate(pte, ref);
  const view: DelegateView = {
    index: ref.delegateIndex,
    id: ref.delegate.id,
    delegate: ref.delegate,
    ref,
    data: 'error' in place ? place : { location: place.location, size: place.size },
    blob: null,
  };
  if (blob && 'error' in blob) view.blob = blob;
  else if (blob) {
    const m = blob.metadata;
    view.blob = {
      magic: blob.magic,
      engineSize: Number(blob.engineSize),
      inputs: m.io_bindings.filter((b) => b.is_input),
      outputs: m.io_bindings.filter((b) => !b.is_input),
      aliased: m.aliased_io,
      hardwareCompatible: m.hardware_compatible,
      deviceId: m.device_id,
      targetPlatform: m.target_platform,
      serializedMetadata: m.serialized_metadata,
    };
  }
  return view;
}

export interface ArgumentNames {
  names: string[];
  /** False when the names are positions (`argN`). */
  byBinding: boolean;
}

/**
 * The binding name of each argument of a call with `arity` arguments: the
 * blob's inputs, then its outputs, less the elided ones when the arity says
 * the call is zero-copy (arity alone tells: docs/runtime-contracts.md). Any
 * other arity, or a delegate trtx cannot read, names arguments by position.
 */
export function argumentNames(d: DelegateView, arity: number): ArgumentNames {
  const positional = { names: positionalNames(arity), byBinding: false };
  if (!d.blob || 'error' in d.blob) return positional;
  const ins = d.blob.inputs.map((b) => b.name);
  const outs = d.blob.outputs.map((b) => b.name);
  if (arity === ins.length + outs.length) return { names: [...ins, ...outs], byBinding: true };
  // What was elided is what the delegate says it elided; failing that, the
  // aliased outputs (the only ones a zero-copy rewrite may drop).
  const stamped = decodeCompileSpecs(d.delegate.compileSpecs).specs.zeroCopyKv;
  const elided = new Set(stamped ?? d.blob.aliased.map((a) => a.output));
  const kept = outs.filter((o) => !elided.has(o));
  if (arity === ins.length + kept.length) return { names: [...ins, ...kept], byBinding: true };
  return positional;
}

export const positionalNames = (arity: number) => Array.from({ length: arity }, (_, i) => `arg${i}`);

export const delegateCalls = (plan: ExecutionPlan): Extract<Instruction, { type: 'DelegateCall' }>[] =>
  plan.chains.flatMap((c) => c.instructions.filter((i): i is Extract<Instruction, { type: 'DelegateCall' }> => i.type === 'DelegateCall'));

// Only a value inside the method's values is ever described by its role (a
// missing one reads `<missing %N>`), so an index past them takes no entry:
// a 12 MB program listing 3 million out-of-range inputs made these maps hold
// hundreds of megabytes before the report budget saw a single entry.
const described = (plan: ExecutionPlan, v: number) => Number.isInteger(v) && v >= 0 && v < plan.values.length;

function rolesOf(plan: ExecutionPlan, delegates: readonly DelegateView[]): Map<number, string> {
  const roles = new Map<number, string>();
  for (const call of delegateCalls(plan)) {
    const d = delegates[call.delegateIndex];
    if (!d) continue;
    const { names } = argumentNames(d, call.args.length);
    call.args.forEach((v, i) => {
      if (described(plan, v) && !roles.has(v)) roles.set(v, `delegate${d.index}.${names[i]}`);
    });
  }
  return roles;
}

/** The first place wins, and an input's over an output's: written last, walking each list backwards. */
function ioOf(plan: ExecutionPlan): Map<number, string> {
  const io = new Map<number, string>();
  // Index loops, not reversed copies: a hostile plan lists millions (test/report-amplification.test.ts).
  for (let i = plan.outputs.length - 1; i >= 0; i--) {
    const v = plan.outputs[i];
    if (v !== undefined && described(plan, v)) io.set(v, `out#${i}`);
  }
  for (let i = plan.inputs.length - 1; i >= 0; i--) {
    const v = plan.inputs[i];
    if (v !== undefined && described(plan, v)) io.set(v, `in#${i}`);
  }
  return io;
}

export async function methodViews(pte: PteFile): Promise<MethodView[]> {
  const refs = delegatesOf(pte);
  const views: MethodView[] = [];
  let next = 0;
  for (const [planIndex, plan] of pte.program.executionPlan.entries()) {
    const delegates: DelegateView[] = [];
    // delegatesOf lists them plan by plan, in order.
    for (let ref = refs[next]; ref !== undefined && ref.planIndex === planIndex; ref = refs[++next])
      delegates.push(await delegateView(pte, ref));
    const name = plan.name ?? `execution_plan[${planIndex}]`;
    views.push({ planIndex, plan, name, delegates, roles: rolesOf(plan, delegates), io: ioOf(plan), budget: pte.reportBudget });
  }
  return views;
}
