// The zero-copy KV rules (domain brief section 5, seed 001), in every
// method, driven from both records a zero-copy cache leaves:
//   - the delegate side: TensorRT delegates stamped `zero_copy_kv`;
//   - the buffer side: mutable buffers fed straight to a TensorRT delegate's
//     aliased input, and mutable buffers placed on a CUDA device;
// so a program where the two disagree (a stamp with no buffer behind it, a
// buffer handed over with no stamp) is caught from whichever side survived.
// Plus the file-level copy-back rule: every mutable buffer updated exactly
// once per execution, and each staged aliased output written back into the
// buffer its input was staged from.
//
// Each rule has its own code (ZERO_COPY_RULES says which rule and which
// fixture breaks it). `--zero-copy-kv` (options.requireZeroCopyKv) also
// requires every kv_cache_update alias in the program to be zero-copy.

import type { ZcCheckCode } from '../codes/index.js';
import type { Program } from '../pte/model.js';
import { arenaDevice, deviceLabel, planName, taggedDevice, tensorAt, tensorName, valueLabel } from '../pte/tensor.js';
import { aliasedOutputs, bindingLabel, inputs, outputs, type BlobMetadata } from '../tensorrt/blob.js';
import { SPEC_ZERO_COPY_KV, decodeZeroCopyKv, getSpec } from '../tensorrt/compile-specs.js';
import { SPEC_SHARED_KV_CACHE, sharedKvCacheOf } from '../tensorrt/shared-kv-cache.js';
import { isTrtxError } from '../util/errors.js';
import { bufferUpdates, crossedWriteBacks } from '../graph/writeback-order.js';
import {
  H2D_COPY,
  aliasEdgesOf,
  atLabel,
  copyOf,
  delegateDevice,
  describeRef,
  hasDeviceArena,
  instructionsOf,
  isCopyOutput,
  isWriteBackDest,
  mutableBuffers,
  overlaps,
  referencesOf,
  regionOf,
  sharedAcrossMethods,
  writeBacks,
  type AliasEdge,
  type MethodBuffer,
  type Ref,
} from '../graph/dataflow.js';
import type { CheckContext, TrtDelegate } from './context.js';
import { diag, type Diagnostic } from './diagnostic.js';

/** Every code, the rule it enforces (domain brief section 5) and the fixture that breaks it. */
export const ZERO_COPY_RULES = {
  ZC_PARTIAL_ELISION: { rule: 'elision is all-or-nothing per delegate', fixture: 'broken-partial-elision.pte' },
  ZC_USER_ALIAS: {
    rule: 'elision is all-or-nothing per delegate (a user alias cannot be elided)',
    fixture: 'user alias beside the caches (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_NOT_ALIASED: { rule: '1: aliasing comes from aliased_io', fixture: 'broken-copy-back-elided.pte' },
  ZC_STAGED_CACHE: {
    rule: "2: an elided output's input is fed the buffer, not a staging copy",
    fixture: 'stamped program left staged (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_NOT_A_BUFFER: {
    rule: "2: an elided output's input is fed a mutable buffer",
    fixture: 'method input fed to an elided alias (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_LEFTOVER_STAGING: { rule: '2: no other staging copy of a zero-copy buffer', fixture: 'broken-leftover-staging-copy.pte' },
  ZC_OTHER_READER: {
    rule: '2: nothing else reads a zero-copy buffer',
    fixture: 'another backend reads a cache (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_CACHE_OFF_DEVICE: {
    rule: "3: a zero-copy buffer is planned in a CUDA arena on the delegate's device",
    fixture: 'cache in the host arena (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_CACHE_OVERLAP: { rule: '3: a zero-copy buffer has a region of its own', fixture: 'broken-cache-overlaps-activation.pte' },
  ZC_HOST_PLANNED: { rule: '4: a method planned in host arenas only is host-planned', fixture: 'broken-host-planned-arena.pte' },
  ZC_ALIASED_INPUT_HOST: { rule: '4: an aliased input is device memory, staged or not', fixture: 'broken-staged-host-planned.pte' },
  ZC_WRITEBACK_INTO_CACHE: { rule: '5: no write-back targets a zero-copy buffer', fixture: 'broken-writeback-into-zero-copy-cache.pte' },
  ZC_NO_OUTPUTS_LEFT: { rule: '6: a stamped delegate keeps an output', fixture: 'broken-zero-copy-no-outputs-left.pte' },
  ZC_SPEC_COUNT: {
    rule: '6: a stamped delegate accounts for exactly the buffers its spec names',
    fixture: 'one cache at two aliased inputs (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_SWAPPED_CACHE: { rule: '7: delegates do not swap caches', fixture: 'broken-swapped-caches.pte' },
  ZC_SHARED_CACHE_UNDECLARED: {
    rule: '7: a shared cache is a recorded decision',
    fixture: 'shared caches without shared_kv_cache (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_SHARED_CACHE_STALE: {
    rule: '7: shared_kv_cache names only caches that are shared',
    fixture: 'shared_kv_cache on an unshared cache (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_SHARED_CACHE_SPLIT: {
    rule: '7: methods sharing a cache hold it on one device',
    fixture: 'shared cache zero-copy in one method only (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_UNSTAMPED_DIRECT: {
    rule: 'the buffer side agrees with the delegate side',
    fixture: 'zero-copy program without its stamp (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_UPDATE_MISSING: { rule: 'every mutable buffer updated exactly once: never neither', fixture: 'broken-lost-update.pte' },
  ZC_UPDATE_TWICE: {
    rule: 'every mutable buffer updated exactly once: never twice',
    fixture: 'two write-backs of conv_state (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_WRITEBACK_CROSSED: {
    rule: 'a staged aliased output is written back into its own buffer',
    fixture: 'crossed write-backs (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_NOT_ZERO_COPY: { rule: '--zero-copy-kv: every kv_cache_update alias is zero-copy', fixture: 'kv-decode-staged.pte' },
  ZC_NO_KV_CACHE: { rule: '--zero-copy-kv: there is a cache to require it of', fixture: 'trt-single.pte' },
  SPEC_SHARED_KV_CACHE_INVALID: {
    rule: 'shared_kv_cache is a JSON list of buffer names',
    fixture: 'malformed shared_kv_cache (test/zero-copy-check.test.ts)',
  },
} as const satisfies Record<ZcCheckCode | 'SPEC_SHARED_KV_CACHE_INVALID', { rule: string; fixture: string }>;

export type ZeroCopyCode = keyof typeof ZERO_COPY_RULES;
export const ZERO_COPY_CODES = Object.keys(ZERO_COPY_RULES) as ZeroCopyCode[];

const HINTS: Record<ZeroCopyCode, string> = {
  ZC_PARTIAL_ELISION:
    'the runtime elides all aliased outputs of an engine or none; re-run `trtx rewrite --zero-copy-kv` on the staged program',
  ZC_USER_ALIAS: 'a user alias cannot be elided, so the engine cannot be zero-copy; keep it staged or re-export without the alias',
  ZC_NOT_ALIASED: "only outputs the blob's aliased_io aliases may be elided; a copy-back buffer keeps its output and write-back",
  ZC_STAGED_CACHE:
    'the engine updates a staging copy that is thrown away; feed the buffer itself (re-run `trtx rewrite --zero-copy-kv` on the staged program)',
  ZC_NOT_A_BUFFER: 'only a mutable buffer can be updated in place; keep the engine staged',
  ZC_LEFTOVER_STAGING: '_h2d_copy needs a host source and a zero-copy buffer lives on the device; re-run the rewrite on the staged program',
  ZC_OTHER_READER: 'a zero-copy buffer is device memory its engine updates in place; nothing else may read it',
  ZC_CACHE_OFF_DEVICE: "plan the cache in a CUDA arena on the delegate's target_device (re-run `trtx rewrite --zero-copy-kv`)",
  ZC_CACHE_OVERLAP: 'a cache lives across executions; give it a region no other tensor uses (re-run the rewrite on the staged program)',
  ZC_HOST_PLANNED: 'the program was planned with enable_non_cpu_memory_planning off; re-export with it on, or keep the caches staged',
  ZC_ALIASED_INPUT_HOST:
    "re-export with device memory planning on (ExecuTorch's default enable_non_cpu_memory_planning), which stages the cache to the device; ExecuTorch 1.5 shares mutable buffers between methods only with it off, so share no caches",
  ZC_WRITEBACK_INTO_CACHE: "the engine's in-place write is the update; remove the write-back (re-run the rewrite on the staged program)",
  ZC_NO_OUTPUTS_LEFT: 'a delegate nothing reads may be erased; keep this engine staged',
  ZC_SPEC_COUNT: 'each elided output updates its own buffer; re-export the program',
  ZC_SWAPPED_CACHE: 'each engine must be fed the caches its bindings name; re-run the rewrite on the staged program',
  ZC_SHARED_CACHE_UNDECLARED:
    'if the sharing is meant, re-run `trtx rewrite --zero-copy-kv --share-cache` on the staged program; otherwise plan the caches apart',
  ZC_SHARED_CACHE_STALE:
    'remove the cache from shared_kv_cache, or re-run `trtx rewrite --zero-copy-kv --share-cache` on the staged program',
  ZC_SHARED_CACHE_SPLIT: 'make every method that shares the cache zero-copy, or none',
  ZC_UNSTAMPED_DIRECT:
    'the delegate must elide the aliased output and carry zero_copy_kv, or the buffer must be staged; re-run the rewrite on the staged program',
  ZC_UPDATE_MISSING: 'the new value is computed and thrown away; restore the write-back or make the buffer zero-copy',
  ZC_UPDATE_TWICE: 'update each buffer once per execution: by its write-back or by its zero-copy engine',
  ZC_WRITEBACK_CROSSED: 'the mutation map is crossed; re-export the program (the export puts the copied mutations first)',
  ZC_NOT_ZERO_COPY: 'run `trtx rewrite IN -o OUT --zero-copy-kv` to un-stage the caches',
  ZC_NO_KV_CACHE: 'nothing to require: no TensorRT engine declares a kv_cache_update alias',
  SPEC_SHARED_KV_CACHE_INVALID: 're-run `trtx rewrite --zero-copy-kv --share-cache` on the staged program, or remove the spec',
};

/** The placeholder name torch.export gives a lifted buffer, after ExecuTorch's sanitising: `b_` + fqn with non-word characters as `_`. */
export const bufferPlaceholder = (fqn: string) => `b_${fqn.replace(/[^A-Za-z0-9_]/g, '_')}`;

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

function views(ctx: Pick<CheckContext, 'trt'>, p: number, report: (d: Diagnostic) => void): View[] {
  const out: View[] = [];
  for (const t of ctx.trt) {
    if (t.planIndex !== p) continue;
    const meta = t.blob.metadata;
    const where = { method: planName(t.plan, p), delegate: t.delegateIndex };
    let stamp: string[] | null | undefined = null;
    const raw = getSpec(t.delegate.compileSpecs, SPEC_ZERO_COPY_KV);
    if (raw !== undefined) {
      try {
        stamp = decodeZeroCopyKv(raw);
      } catch {
        stamp = undefined;
      }
    }
    let shared: string[] | null = null;
    try {
      shared = sharedKvCacheOf(t.delegate.compileSpecs, `${t.location} > compile_specs (${SPEC_SHARED_KV_CACHE})`);
    } catch (e) {
      if (!isTrtxError(e)) throw e;
      report(diag('error', 'SPEC_SHARED_KV_CACHE_INVALID', e.location, e.message, HINTS.SPEC_SHARED_KV_CACHE_INVALID, where));
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

const binding = (v: View, name: string) => `${v.t.location} > binding ${bindingLabel(name)}`;

function checkMethod(
  program: Program,
  p: number,
  ctx: Pick<CheckContext, 'trt'>,
  sharedMap: Map<string, MethodBuffer[]>,
  out: Diagnostic[],
): void {
  const plan = program.executionPlan[p];
  const method = planName(plan, p);
  const emit = (
    code: ZeroCopyCode,
    location: string,
    message: string,
    delegate: number | null = null,
    severity: 'error' | 'warning' = 'error',
  ) => out.push(diag(severity, code, location, message, HINTS[code], { method, delegate }));
  const vs = views(ctx, p, (d) => out.push(d));
  const buffers = mutableBuffers(plan);
  const refs = referencesOf(plan);
  const at = (v: number) => `${method} > ${valueLabel(plan, v)}`;

  // zero-copy buffer -> the elided aliased inputs it is fed to (stamped delegates)
  const zc = new Map<number, { v: View; e: AliasEdge }[]>();
  // buffer fed straight to an aliased input -> those inputs (any delegate)
  const direct = new Map<number, { v: View; e: AliasEdge }[]>();
  const push = <K, T>(m: Map<K, T[]>, k: K, x: T) => m.set(k, [...(m.get(k) ?? []), x]);

  // ---- the delegate side
  for (const v of vs) {
    for (const e of v.edges) if (buffers.has(e.inArg)) push(direct, e.inArg, { v, e });
    if (!v.stamp) continue;
    const stamp = v.stamp;
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
    const nIn = inputs(v.meta).length;
    const nOut = outputs(v.meta).length;
    const elidedOut = outputs(v.meta).filter((b) => stamp.includes(b.name)).length;
    if (nOut - elidedOut === 0)
      emit(
        'ZC_NO_OUTPUTS_LEFT',
        v.t.location,
        `zero_copy_kv elides every output of the engine (${nOut}); a delegate with no outputs is a node nothing reads`,
        v.d,
      );
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
    const seen = new Map<string, Set<number>>();
    for (const e of v.edges) {
      if (e.outArg !== null) continue;
      const key = atLabel(e.at);
      if (buffers.has(e.inArg)) {
        push(zc, e.inArg, { v, e });
        const s = seen.get(key) ?? new Set<number>();
        s.add(e.inArg);
        seen.set(key, s);
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
        const src = copyOf(plan, plan.chains[staged.at.chain].instructions[staged.at.instruction], H2D_COPY)!.src;
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

  // ---- planned without device memory (enable_non_cpu_memory_planning off: no
  // staging, delegate I/O only tagged CUDA in the host arena), a staged engine
  // is fed the host buffer itself; Torch-TensorRT's runtime refuses a host
  // aliased input (TensorRTBackend.cpp, execute). A staged cache, not a zero-copy one.
  const hostOnly = !hasDeviceArena(plan);
  for (const [b, uses] of hostOnly ? [...direct] : []) {
    const staged = uses.filter(({ v, e }) => v.stamp === null && e.outArg !== null);
    for (const { v, e } of staged) {
      const tag = deviceLabel(taggedDevice(tensorAt(plan, b)!));
      const what = `aliased input ${JSON.stringify(e.input)} (for ${JSON.stringify(e.output)}) is fed ${valueLabel(plan, b)} itself, planned in host memory (the method has no CUDA arena, though the tensor is tagged ${tag})`;
      emit(
        'ZC_ALIASED_INPUT_HOST',
        binding(v, e.input),
        `${what}; the engine writes ${JSON.stringify(e.output)} through that pointer, and Torch-TensorRT's runtime refuses an aliased input that is not device memory on the first execute`,
        v.d,
      );
    }
    if (staged.length > 0) direct.delete(b);
  }

  // ---- the buffer side: fed straight to an aliased input whose output is kept, or by an unstamped delegate
  for (const [b, uses] of direct) {
    for (const { v, e } of uses) {
      if (v.stamp === undefined) continue;
      if (!v.stamp || e.outArg !== null) {
        const why = !v.stamp ? 'the delegate carries no zero_copy_kv' : `zero_copy_kv does not elide ${JSON.stringify(e.output)}`;
        emit(
          'ZC_UNSTAMPED_DIRECT',
          binding(v, e.input),
          `${valueLabel(plan, b)} is fed straight to aliased input ${JSON.stringify(e.input)}, but ${why}: the delegate side says the cache is staged`,
          v.d,
        );
      }
    }
  }
  const deviceBuffers = [...buffers].filter((b) => {
    const t = tensorAt(plan, b)!;
    const r = regionOf(t)!;
    return (
      taggedDevice(t).type === 'cuda' ||
      (r.arena > 0 && r.arena < plan.nonConstBufferSizes.length && arenaDevice(plan, r.arena).type === 'cuda')
    );
  });

  // ---- rules on the buffers either side names
  const marked = new Set<number>([...zc.keys(), ...direct.keys()]);
  const onDevice = new Set<number>([...marked, ...deviceBuffers]);
  for (const { at: a, ins } of instructionsOf(plan)) {
    const c = copyOf(plan, ins, H2D_COPY);
    if (c && onDevice.has(c.src))
      emit(
        'ZC_LEFTOVER_STAGING',
        `${method} > ${atLabel(a)}`,
        `a staging copy (et_copy::_h2d_copy) reads ${valueLabel(plan, c.src)}, which lives on the device; _h2d_copy needs a host source`,
      );
  }
  for (const w of writeBacks(plan)) {
    if (marked.has(w.dest))
      emit(
        'ZC_WRITEBACK_INTO_CACHE',
        `${method} > ${atLabel(w.at)}`,
        `aten::copy_ writes back into ${valueLabel(plan, w.dest)}, which its engine updates in place`,
      );
  }
  const hostPlanned: number[] = [];
  for (const b of [...marked].sort((x, y) => x - y)) {
    const t = tensorAt(plan, b)!;
    const uses = [...(zc.get(b) ?? []), ...(direct.get(b) ?? [])];
    const device = uses[0].v.device;
    const r = regionOf(t)!;
    const arenaOk = r.arena > 0 && r.arena < plan.nonConstBufferSizes.length;
    const place = arenaOk ? arenaDevice(plan, r.arena) : null;
    if (place && place.type === 'cpu' && hostOnly) hostPlanned.push(b);
    else if (!place || place.type !== 'cuda' || place.index !== device) {
      emit(
        'ZC_CACHE_OFF_DEVICE',
        at(b),
        `${valueLabel(plan, b)} is planned in arena ${r.arena} (${place ? deviceLabel(place) : 'no such arena'}); its engine (${uses[0].v.t.location}) writes it in place on cuda:${device}`,
      );
    } else if (taggedDevice(t).type !== 'cuda' || taggedDevice(t).index !== device) {
      emit(
        'ZC_CACHE_OFF_DEVICE',
        at(b),
        `${valueLabel(plan, b)} is planned on cuda:${device} but tagged ${deviceLabel(taggedDevice(t))} (extra_tensor_info)`,
      );
    }
    for (let o = 0; o < plan.values.length; o++) {
      const ot = o === b ? null : tensorAt(plan, o);
      const or = ot ? regionOf(ot) : null;
      if (or && overlaps(r, or))
        emit(
          'ZC_CACHE_OVERLAP',
          at(b),
          `${valueLabel(plan, b)} [${r.offset}, ${r.offset + r.bytes}) in arena ${r.arena} overlaps ${valueLabel(plan, o)} [${or.offset}, ${or.offset + or.bytes}); a cache lives across executions`,
        );
    }
    // Readers other than its aliased inputs, its staging copies (rule 2, above) and write-backs (rule 5, above).
    const others = refs[b].filter(
      (x: Ref) =>
        !(
          x.kind === 'delegate' &&
          uses.some(
            (u) =>
              u.e.at.chain === x.at.chain &&
              u.e.at.instruction === x.at.instruction &&
              u.v.d === x.delegate &&
              x.arg === inputs(u.v.meta).findIndex((i) => i.name === u.e.input),
          )
        ) &&
        !(x.kind === 'kernel' && x.op === H2D_COPY && x.arg === 0) &&
        !isWriteBackDest(plan, x),
    );
    for (const x of others)
      emit('ZC_OTHER_READER', at(b), `${valueLabel(plan, b)} is updated in place by its engine and also read by ${describeRef(plan, x)}`);
  }
  if (hostPlanned.length > 0) {
    emit(
      'ZC_HOST_PLANNED',
      method,
      `every planned tensor of the method is in a host arena (no CUDA arena in non_const_buffer_device), so ${hostPlanned.map((b) => valueLabel(plan, b)).join(', ')} ${hostPlanned.length === 1 ? 'is' : 'are'} host memory whatever the device tags say; the engine requires its aliased inputs device-resident`,
    );
  }

  // ---- rule 7: sharing is a recorded decision
  const partnersOf = (b: number) => sharedMap.get(`${p}:${b}`) ?? [];
  const sharedBy = (b: number) => new Set((zc.get(b) ?? []).map((u) => u.v.d));
  const isShared = (b: number) => sharedBy(b).size > 1 || partnersOf(b).length > 0;
  for (const [b, uses] of zc) {
    if (!isShared(b)) continue;
    const fqn = tensorName(tensorAt(plan, b)!);
    const partners = partnersOf(b);
    const withWhom = [
      ...(sharedBy(b).size > 1 ? [`delegates ${[...sharedBy(b)].join(' and ')} of ${method}`] : []),
      ...partners.map((x) => `method ${planName(program.executionPlan[x.plan], x.plan)}`),
    ].join(', ');
    for (const { v } of uses) {
      if (fqn === null || !v.shared?.includes(fqn))
        emit(
          'ZC_SHARED_CACHE_UNDECLARED',
          v.t.location,
          `${valueLabel(plan, b)} is shared (${withWhom}) but this delegate's shared_kv_cache does not name it; sharing a cache must be a recorded decision`,
          v.d,
        );
    }
    const here = arenaDevice(plan, regionOf(tensorAt(plan, b)!)!.arena);
    for (const x of partners) {
      const other = program.executionPlan[x.plan];
      const there = arenaDevice(other, regionOf(tensorAt(other, x.value)!)!.arena);
      if (there.type !== here.type || there.index !== here.index) {
        emit(
          'ZC_SHARED_CACHE_SPLIT',
          at(b),
          `${valueLabel(plan, b)} is zero-copy on ${deviceLabel(here)} here, but method ${planName(other, x.plan)}, planned to share it, holds it on ${deviceLabel(there)}`,
        );
      }
    }
  }
  for (const v of vs) {
    for (const name of v.shared ?? []) {
      const fed = v.edges.filter((e) => e.outArg === null && buffers.has(e.inArg) && tensorName(tensorAt(plan, e.inArg)!) === name);
      if (!v.stamp || fed.length === 0) {
        emit(
          'ZC_SHARED_CACHE_STALE',
          `${v.t.location} > compile_specs (${SPEC_SHARED_KV_CACHE})`,
          `shared_kv_cache names ${JSON.stringify(name)}, which this delegate does not update in place`,
          v.d,
        );
      } else if (!isShared(fed[0].inArg)) {
        emit(
          'ZC_SHARED_CACHE_STALE',
          `${v.t.location} > compile_specs (${SPEC_SHARED_KV_CACHE})`,
          `shared_kv_cache names ${JSON.stringify(name)}, but no other delegate or method shares it: the program does not carry the decision out`,
          v.d,
        );
      }
    }
  }

  // ---- exactly once per execution
  const edges = vs.flatMap((v) => v.edges);
  const declared = (b: number) =>
    isShared(b) && (zc.get(b) ?? []).every((u) => u.v.shared?.includes(tensorName(tensorAt(plan, b)!) ?? '\0'));
  for (const u of bufferUpdates(plan, edges, declared)) {
    if (u.count === 0 && partnersOf(u.value).length === 0) {
      emit(
        'ZC_UPDATE_MISSING',
        at(u.value),
        `${valueLabel(plan, u.value)} is a mutable buffer that nothing updates: no write-back into it and no zero-copy engine writes it`,
      );
    } else if (u.count > 1) {
      const how = [
        ...u.writeBacks.map((a) => `a write-back at ${atLabel(a)}`),
        ...u.zeroCopy.map((e) => `delegate ${e.delegate} in place`),
      ];
      emit('ZC_UPDATE_TWICE', at(u.value), `${valueLabel(plan, u.value)} is updated ${u.count} times per execution: ${how.join(', ')}`);
    }
  }
  for (const c of crossedWriteBacks(plan, edges)) {
    emit(
      'ZC_WRITEBACK_CROSSED',
      `${method} > ${atLabel(c.at)}`,
      `aliased output ${JSON.stringify(c.edge.output)} of delegate ${c.edge.delegate} updates the staging copy of ${valueLabel(plan, c.staged)} but is written back into ${valueLabel(plan, c.writtenTo)}`,
      c.edge.delegate,
    );
  }
}

function requireZeroCopy(ctx: Pick<CheckContext, 'trt'>, out: Diagnostic[]): void {
  let any = false;
  for (const t of ctx.trt) {
    const aliased = aliasedOutputs(t.blob.metadata).filter((b) =>
      t.blob.metadata.aliased_io.some((a) => a.output === b.name && a.kind === 'kv_cache_update'),
    );
    if (aliased.length === 0) continue;
    any = true;
    let stamp: string[] = [];
    try {
      const raw = getSpec(t.delegate.compileSpecs, SPEC_ZERO_COPY_KV);
      stamp = raw === undefined ? [] : decodeZeroCopyKv(raw);
    } catch {
      stamp = [];
    }
    const staged = aliased.filter((b) => !stamp.includes(b.name));
    if (staged.length > 0) {
      out.push(
        diag(
          'error',
          'ZC_NOT_ZERO_COPY',
          t.location,
          `--zero-copy-kv: the engine's kv_cache_update outputs ${staged.map((b) => JSON.stringify(b.name)).join(', ')} are staged (copied to the host and back every execution)`,
          HINTS.ZC_NOT_ZERO_COPY,
          {
            method: planName(t.plan, t.planIndex),
            delegate: t.delegateIndex,
          },
        ),
      );
    }
  }
  if (!any)
    out.push(
      diag(
        'warning',
        'ZC_NO_KV_CACHE',
        'program',
        '--zero-copy-kv: no TensorRT engine declares a kv_cache_update alias, so there is nothing to require',
        HINTS.ZC_NO_KV_CACHE,
      ),
    );
}

/** The zero-copy KV check family (registered in run.ts). */
export function checkZeroCopy(ctx: Pick<CheckContext, 'pte' | 'trt' | 'options'>): Diagnostic[] {
  const out: Diagnostic[] = [];
  const program = ctx.pte.program;
  const sharedMap = sharedAcrossMethods(program);
  program.executionPlan.forEach((_, p) => checkMethod(program, p, ctx, sharedMap, out));
  if (ctx.options.requireZeroCopyKv) requireZeroCopy(ctx, out);
  return out;
}
