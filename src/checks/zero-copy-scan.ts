// One method as the zero-copy KV check sees it (MethodScan): its TensorRT
// delegates with their stamps and aliased pairs (View), its mutable buffers,
// and which buffers each delegate takes in place. scanMethod builds it and
// checks the delegate side: what each stamped delegate elides, and whether
// its elided inputs are fed buffers of their own.

import type { Program } from '../pte/model.js';
import { planName, tensorAt, tensorName, valueLabel } from '../pte/tensor.js';
import { aliasedOutputs, bindingLabel, inputs, outputs, type BlobMetadata } from '../tensorrt/blob.js';
import { specView } from '../tensorrt/delegate-view.js';
import { SPEC_SHARED_KV_CACHE } from '../tensorrt/shared-kv-cache.js';
import {
  H2D_COPY,
  aliasEdgesOf,
  atLabel,
  copyOf,
  delegateDevice,
  instructionAt,
  instructionsOf,
  isCopyOutput,
  mutableBuffers,
  planAt,
  referencesOf,
  type AliasEdge,
  type MethodBuffer,
} from '../graph/dataflow.js';
import type { ExecutionPlan } from '../pte/model.js';
import { HINTS, bufferPlaceholder, type ZeroCopyCode } from './zero-copy-rules.js';
import type { CheckContext, TrtDelegate } from './context.js';
import { diag, type Diagnostic } from './diagnostic.js';

interface View {
  t: TrtDelegate;
  d: number;
  meta: BlobMetadata;
  device: number;
  /** zero_copy_kv names; null unstamped; undefined when the spec does not parse (reported by the spec checks). */
  stamp: string[] | null | undefined;
  shared: string[] | null;
  /** The aliased pairs of every call, laid out as the stamp says. */
  edges: AliasEdge[];
}

/** `invalidShared`: told of a delegate whose shared_kv_cache spec does not parse (null: not reported). */
function views(
  ctx: Pick<CheckContext, 'trt'>,
  p: number,
  invalidShared: ((at: string, message: string, delegate: number) => void) | null,
): View[] {
  const out: View[] = [];
  for (const t of ctx.trt) {
    if (t.planIndex !== p) continue;
    const meta = t.blob.metadata;
    const view = specView(t.delegate);
    const read = view.zeroCopy;
    const stamp = read === null ? null : 'error' in read ? undefined : read.names;
    const sharedRead = view.sharedKvCache;
    const shared = sharedRead !== null && 'names' in sharedRead ? sharedRead.names : null;
    if (sharedRead !== null && 'error' in sharedRead) {
      const at = `${t.location} > compile_specs (${SPEC_SHARED_KV_CACHE})`;
      invalidShared?.(at, sharedRead.error.message, t.delegateIndex);
    }
    const elided = new Set(
      stamp
        ? outputs(meta)
            .filter((b) => stamp.includes(b.name))
            .map((b) => b.name)
        : [],
    );
    let edges = aliasEdgesOf(t.plan, t.delegateIndex, meta, elided);
    if (stamp === null && edges.length === 0 && meta.aliased_io.length > 0) {
      // An unstamped call laid out zero-copy still elides at runtime (arity alone decides).
      edges = aliasEdgesOf(t.plan, t.delegateIndex, meta, new Set(aliasedOutputs(meta).map((b) => b.name)));
    }
    out.push({ t, d: t.delegateIndex, meta, device: delegateDevice(t.delegate, meta), stamp, shared, edges });
  }
  return out;
}

/**
 * Mutable buffers of method `p` fed straight to an aliased input of a
 * TensorRT delegate call: the engine updates them in place, and the
 * zero-copy rules (their buffer side, zero-copy-buffers.ts) own every
 * finding about them. The same identification as scanMethod's `direct`.
 */
export function inPlaceBuffers(program: Program, p: number, ctx: Pick<CheckContext, 'trt'>): Set<number> {
  const vs = views(ctx, p, null);
  const buffers = mutableBuffers(
    planAt(program, p),
    vs.flatMap((v) => v.edges),
  );
  const out = new Set<number>();
  for (const v of vs) for (const e of v.edges) if (buffers.has(e.inArg)) out.add(e.inArg);
  return out;
}

export const binding = (v: View, name: string) => `${v.t.location} > binding ${bindingLabel(name)}`;

/** An aliased pair of a delegate call and the delegate's view. */
export interface Use {
  v: View;
  e: AliasEdge;
}

export type Emit = (
  code: ZeroCopyCode,
  location: string,
  message: string,
  delegate?: number | null,
  severity?: 'error' | 'warning',
) => void;

/** What the checks of one method share. */
export interface MethodScan {
  program: Program;
  p: number;
  plan: ExecutionPlan;
  method: string;
  emit: Emit;
  vs: View[];
  buffers: ReturnType<typeof mutableBuffers>;
  refs: ReturnType<typeof referencesOf>;
  /** `method > value` */
  at: (v: number) => string;
  /** zero-copy buffer -> the elided aliased inputs it is fed to (stamped delegates) */
  zc: Map<number, Use[]>;
  /** buffer fed straight to an aliased input -> those inputs (any delegate) */
  direct: Map<number, Use[]>;
  /** Buffers methods share (sharedAcrossMethods), "plan:value" -> the others. */
  sharedMap: Map<string, MethodBuffer[]>;
  push: <K, T>(m: Map<K, T[]>, k: K, x: T) => void;
}

/** Scans method `p` and checks its delegate side (the stamps). */
export function scanMethod(
  program: Program,
  p: number,
  ctx: Pick<CheckContext, 'pte' | 'trt'>,
  sharedMap: Map<string, MethodBuffer[]>,
  out: Diagnostic[],
): MethodScan {
  const plan = planAt(program, p);
  const method = planName(plan, p);
  const emit: Emit = (
    code: ZeroCopyCode,
    location: string,
    message: string,
    delegate: number | null = null,
    severity: 'error' | 'warning' = 'error',
  ) => out.push(diag(ctx.pte.reportBudget, severity, code, location, message, HINTS[code], { method, delegate }));
  const vs = views(ctx, p, (at, message, delegate) =>
    out.push(
      diag(ctx.pte.reportBudget, 'error', 'SPEC_SHARED_KV_CACHE_INVALID', at, message, HINTS.SPEC_SHARED_KV_CACHE_INVALID, {
        method,
        delegate,
      }),
    ),
  );
  // Named buffers, write-back destinations, and (unnamed programs) values only engines update in place.
  const buffers = mutableBuffers(
    plan,
    vs.flatMap((v) => v.edges),
  );
  const refs = referencesOf(plan);
  const at = (v: number) => `${method} > ${valueLabel(plan, v)}`;
  const zc = new Map<number, Use[]>();
  const direct = new Map<number, Use[]>();
  // Appended, not copied (a copy per element is quadratic in a list's length).
  const push = <K, T>(m: Map<K, T[]>, k: K, x: T) => {
    const list = m.get(k);
    if (list) list.push(x);
    else m.set(k, [x]);
  };
  const s: MethodScan = { program, p, plan, method, emit, vs, buffers, refs, at, zc, direct, sharedMap, push };
  checkDelegateSide(s);
  return s;
}

/**
 * The delegate side, delegate by delegate: records every buffer fed straight
 * to an aliased input, and checks each stamp against its blob, its calls and
 * the values its elided outputs' inputs are fed.
 */
function checkDelegateSide(s: MethodScan): void {
  const { vs, buffers, direct, push } = s;
  for (const v of vs) {
    for (const e of v.edges) if (buffers.has(e.inArg)) push(direct, e.inArg, { v, e });
    if (!v.stamp) continue;
    checkStampAgainstBlob(s, v, v.stamp);
    checkCallArity(s, v, v.stamp);
    checkElidedInputs(s, v);
  }
}

/** The stamp names only kv_cache_update aliased outputs, all of them, and leaves the engine an output. */
function checkStampAgainstBlob(s: MethodScan, v: View, stamp: string[]): void {
  const { emit } = s;
  const aliased = aliasedOutputs(v.meta).map((b) => b.name);
  for (const a of v.meta.aliased_io) {
    if (a.kind !== 'kv_cache_update')
      emit(
        'ZC_USER_ALIAS',
        binding(v, a.output),
        `the stamped engine aliases output ${JSON.stringify(a.output)} onto input ${JSON.stringify(a.input)} as a "${a.kind}" alias; only caches can be elided, and elision is all-or-nothing`,
        v.d,
      );
  }
  for (const name of stamp) {
    if (!aliased.includes(name)) {
      const isOut = outputs(v.meta).some((b) => b.name === name);
      emit(
        'ZC_NOT_ALIASED',
        binding(v, name),
        `zero_copy_kv elides ${JSON.stringify(name)}, which ${isOut ? "is not an aliased output in the blob's aliased_io (a copy-back output keeps its write-back)" : 'is not an output binding of the engine'}`,
        v.d,
      );
    }
  }
  const missing = aliased.filter((n) => !stamp.includes(n));
  if (missing.length > 0) {
    emit(
      'ZC_PARTIAL_ELISION',
      v.t.location,
      `zero_copy_kv elides ${stamp.length} of the engine's ${aliased.length} aliased outputs and leaves ${missing.map((n) => JSON.stringify(n)).join(', ')} staged; the runtime elides all of them or none`,
      v.d,
    );
  }
  const nOut = outputs(v.meta).length;
  const elidedOut = outputs(v.meta).filter((b) => stamp.includes(b.name)).length;
  if (nOut - elidedOut === 0)
    emit(
      'ZC_NO_OUTPUTS_LEFT',
      v.t.location,
      `zero_copy_kv elides every output of the engine (${nOut}); a delegate with no outputs is a node nothing reads`,
      v.d,
    );
}

/** Each call of a stamped delegate passes its inputs and the outputs the stamp keeps. */
function checkCallArity(s: MethodScan, v: View, stamp: string[]): void {
  const { plan, emit } = s;
  const nIn = inputs(v.meta).length;
  const nOut = outputs(v.meta).length;
  const elidedOut = outputs(v.meta).filter((b) => stamp.includes(b.name)).length;
  for (const { at: a, ins } of instructionsOf(plan)) {
    if (ins.type !== 'DelegateCall' || ins.delegateIndex !== v.d) continue;
    const want = nIn + nOut - elidedOut;
    if (ins.args.length !== want) {
      emit(
        'ZC_PARTIAL_ELISION',
        `${v.t.location} > ${atLabel(a)}`,
        `the call has ${ins.args.length} arguments, but zero_copy_kv elides ${elidedOut} outputs, so it takes ${want}; the call and the stamp disagree on what is elided`,
        v.d,
      );
    }
  }
}

/**
 * Each elided output's aliased input is fed a mutable buffer (recorded in
 * `zc`), its own placeholder's and not a staging copy; each call updates as
 * many distinct buffers as it elides outputs.
 */
function checkElidedInputs(s: MethodScan, v: View): void {
  const { plan, emit, buffers, refs, zc, push } = s;
  const seen = new Map<string, Set<number>>();
  for (const e of v.edges) {
    if (e.outArg !== null) continue;
    const key = atLabel(e.at);
    if (buffers.has(e.inArg)) {
      push(zc, e.inArg, { v, e });
      const fed = seen.get(key) ?? new Set<number>();
      fed.add(e.inArg);
      seen.set(key, fed);
      const fqn = tensorName(tensorAt(plan, e.inArg)!);
      if (fqn !== null && e.input.startsWith('b_') && e.input !== bufferPlaceholder(fqn)) {
        emit(
          'ZC_SWAPPED_CACHE',
          binding(v, e.input),
          `aliased input ${JSON.stringify(e.input)} (for ${JSON.stringify(e.output)}) is the placeholder of another buffer than ${valueLabel(plan, e.inArg)}, which it is fed; the engine would update the wrong cache`,
          v.d,
        );
      }
      continue;
    }
    const staged = refs[e.inArg]?.find((r) => isCopyOutput(r, H2D_COPY));
    if (staged && staged.kind === 'kernel') {
      const src = copyOf(plan, instructionAt(plan, staged.at), H2D_COPY)!.src;
      emit(
        'ZC_STAGED_CACHE',
        binding(v, e.input),
        `elided output ${JSON.stringify(e.output)}'s aliased input is fed ${valueLabel(plan, e.inArg)}, a staging copy of ${valueLabel(plan, src)}; the engine updates the copy and the update is lost`,
        v.d,
      );
    } else {
      emit(
        'ZC_NOT_A_BUFFER',
        binding(v, e.input),
        `elided output ${JSON.stringify(e.output)}'s aliased input is fed ${valueLabel(plan, e.inArg)}, which is not a mutable buffer of the method`,
        v.d,
      );
    }
  }
  for (const [where, bs] of seen) {
    const elidedHere = v.edges.filter((e) => e.outArg === null && atLabel(e.at) === where && buffers.has(e.inArg)).length;
    if (bs.size !== elidedHere)
      emit(
        'ZC_SPEC_COUNT',
        `${v.t.location} > ${where}`,
        `the call updates ${bs.size} distinct buffer${bs.size === 1 ? '' : 's'} in place through ${elidedHere} elided outputs; each elided output needs a buffer of its own`,
        v.d,
      );
  }
}
