// The zero-copy KV rewrite's edits: each staged cache becomes its
// delegate's argument in a CUDA arena region of its own, the copies and the
// elided outputs go, the delegate is stamped (src/passes/zero-copy.ts says
// what and why). Runs only on what src/passes/zero-copy-analyse.ts accepted.

import type { ExecutionPlan, Program, Tensor } from '../pte/model.js';
import { DeviceType, TensorDataLocation, splitMemoryOffset } from '../pte/model.js';
import { arenaDevice, deviceLabel, planName, tensorAt, tensorBytes, tensorName, valueLabel } from '../pte/tensor.js';
import { stagingBytes } from '../graph/staging.js';
import { aliasedOutputs } from '../tensorrt/blob.js';
import { SPEC_ZERO_COPY_KV, encodeZeroCopyKv, setSpec } from '../tensorrt/compile-specs.js';
import { SPEC_SHARED_KV_CACHE, encodeSharedKvCache } from '../tensorrt/shared-kv-cache.js';
import { bufferUpdates, writeBackOrder } from '../graph/writeback-order.js';
import {
  ARENA_SIZE_ALIGNMENT,
  CACHE_ALIGNMENT,
  alignUp,
  packArena,
  removeDeadValues,
  removeInstructions,
  removeUnusedOperators,
} from './zero-copy-edit.js';
import {
  refuse,
  type BlobTable,
  type Chain,
  type KvDelegate,
  type Link,
  type MethodWork,
  type ZeroCopyDelegate,
  type ZeroCopyMethod,
  type ZeroCopyOptions,
  type ZeroCopyResult,
} from './zero-copy-model.js';
import { analyseZeroCopyKv } from './zero-copy-analyse.js';
import { aliasEdgesOf, atKey, instructionAt, parseIndexPair, planAt, type AliasEdge } from '../graph/dataflow.js';
import { pushAll } from '../util/arrays.js';
import { itemAt, present } from '../util/present.js';

function cudaArenaFor(plan: ExecutionPlan, device: number): number {
  const found = plan.nonConstBufferDevice.find(
    (e) => e.deviceType === DeviceType.CUDA && e.deviceIndex === device && e.bufferIdx > 0 && e.bufferIdx < plan.nonConstBufferSizes.length,
  );
  if (found) return found.bufferIdx;
  if (plan.nonConstBufferSizes.length === 0) plan.nonConstBufferSizes.push(0n); // arena 0 is reserved
  plan.nonConstBufferSizes.push(0n);
  setArenaDevice(plan, plan.nonConstBufferSizes.length - 1, device);
  return plan.nonConstBufferSizes.length - 1;
}

function setArenaDevice(plan: ExecutionPlan, arena: number, device: number): void {
  const entry = plan.nonConstBufferDevice.find((e) => e.bufferIdx === arena);
  if (entry) {
    entry.deviceType = DeviceType.CUDA;
    entry.deviceIndex = device;
  } else {
    plan.nonConstBufferDevice.push({ bufferIdx: arena, deviceType: DeviceType.CUDA, deviceIndex: device });
    plan.nonConstBufferDevice.sort((a, b) => a.bufferIdx - b.bufferIdx);
  }
  if (plan.$absent) plan.$absent = plan.$absent.filter((f) => f !== 'nonConstBufferDevice');
}

function tagDevice(t: Tensor, device: number): void {
  t.extraTensorInfo = {
    ...(t.extraTensorInfo ?? { mutableDataSegmentsIdx: 0n, fullyQualifiedName: null, location: TensorDataLocation.SEGMENT }),
    deviceType: DeviceType.CUDA,
    deviceIndex: device,
  };
}

const arenaLabel = (plan: ExecutionPlan, arena: number) => `arena ${arena} (${deviceLabel(arenaDevice(plan, arena))})`;

/** The KV delegates a method's chains run through, each with its links in chain order. */
type ChainDelegates = Map<number, { dg: KvDelegate; links: Link[] }>;

/**
 * Un-stages one method's caches, step by step: calls take the caches
 * themselves, the copies go, the delegates are stamped, what nothing uses
 * goes, the caches move to device arenas, and the result is checked.
 */
function rewriteMethod(
  w: MethodWork,
  sharedArenas: Map<string, number>,
  layoutShared: ReadonlySet<string>,
): { report: ZeroCopyMethod; delegates: ZeroCopyDelegate[]; valueMap: Int32Array } {
  const { plan, p } = w;
  const method = planName(plan, p);
  const stagingBefore = stagingBytes(plan);
  const sizesBefore = [...plan.nonConstBufferSizes];
  const opsBefore = plan.operators.length;
  const valuesBefore = plan.values.length;
  const orderBefore = writeBackOrder(plan);
  const elidedBuffers = new Set(w.chains.map((c) => c.buffer));

  const { removeAt, candidates, candidateOps, fromArena } = copiesOf(w);
  const { delegates, bufferOfLink } = rewireCalls(w);
  removeInstructions(plan, removeAt);
  const out = stampDelegates(w, delegates, bufferOfLink);

  // Values and operators nothing uses any more.
  for (const b of elidedBuffers) candidates.delete(b);
  const valueMap = removeDeadValues(plan, candidates);
  removeUnusedOperators(plan, candidateOps);
  const m = (v: number) => itemAt(valueMap, v, `the value map of ${method}`);

  const caches = placeCaches(w, m, fromArena, sharedArenas, layoutShared);
  checkRewritten(w, m, orderBefore, elidedBuffers, delegates);

  const arenas = plan.nonConstBufferSizes
    .map((size, arena) => ({ arena, device: deviceLabel(arenaDevice(plan, arena)), before: sizesBefore[arena] ?? 0n, after: size }))
    .filter((a) => a.arena > 0 && a.before !== a.after);
  return {
    report: {
      method,
      caches,
      stagingBefore,
      stagingAfter: stagingBytes(plan),
      arenas,
      removed: { instructions: removeAt.size, values: valuesBefore - plan.values.length, operators: opsBefore - plan.operators.length },
    },
    delegates: out,
    valueMap,
  };
}

/**
 * The copies each chain drops (its `_h2d_copy`, `_d2h_copy` and
 * `aten::copy_`), the values and operators that may die with them, and the
 * arena each such value was planned in.
 */
function copiesOf(w: MethodWork) {
  const { plan } = w;
  const removeAt = new Set<string>();
  const candidates = new Set<number>();
  const candidateOps = new Set<number>();
  for (const c of w.chains) {
    for (const at of [c.h2d, c.d2h, c.copy]) {
      removeAt.add(atKey(at));
      const ins = instructionAt(plan, at);
      if (ins.type === 'KernelCall') {
        ins.args.forEach((a) => candidates.add(a));
        candidateOps.add(ins.opIndex);
      }
    }
    for (const l of c.links) candidates.add(l.outArg);
  }
  const fromArena = new Map<number, number>(); // value -> arena it was planned in
  for (const v of candidates) {
    const t = tensorAt(plan, v);
    if (t?.allocationInfo) fromArena.set(v, t.allocationInfo.memoryId);
  }
  return { removeAt, candidates, candidateOps, fromArena };
}

/** Each delegate call takes the cache itself for an aliased input and loses the aliased outputs. */
function rewireCalls(w: MethodWork): { delegates: ChainDelegates; bufferOfLink: Map<Link, number> } {
  const delegates: ChainDelegates = new Map();
  for (const c of w.chains)
    for (const l of c.links) delegates.set(l.dg.d, { dg: l.dg, links: [...(delegates.get(l.dg.d)?.links ?? []), l] });
  const bufferOfLink = new Map<Link, number>();
  for (const c of w.chains) for (const l of c.links) bufferOfLink.set(l, c.buffer);
  for (const { dg, links } of delegates.values()) {
    const args = [...dg.call.args];
    const drop = new Set<number>();
    for (const l of links) {
      args[l.inPos] = bufferOfLink.get(l)!;
      drop.add(l.outPos);
    }
    dg.call.args = args.filter((_, k) => !drop.has(k));
  }
  return { delegates, bufferOfLink };
}

/**
 * Stamps each delegate with zero_copy_kv (every aliased output), and with
 * shared_kv_cache for the caches it shares with another engine or method.
 */
function stampDelegates(w: MethodWork, delegates: ChainDelegates, bufferOfLink: ReadonlyMap<Link, number>): ZeroCopyDelegate[] {
  const { plan } = w;
  const method = planName(plan, w.p);
  const sharedNames = (c: Chain) => (c.links.length > 1 || c.partners.length > 0 ? tensorName(tensorAt(plan, c.buffer)!) : null);
  const out: ZeroCopyDelegate[] = [];
  for (const { dg, links } of delegates.values()) {
    const elided = aliasedOutputs(dg.meta).map((b) => b.name);
    const delegate = itemAt(plan.delegates, dg.d, `the delegates of ${method}`);
    delegate.compileSpecs = setSpec(delegate.compileSpecs, SPEC_ZERO_COPY_KV, encodeZeroCopyKv(elided));
    const byInput = new Map(links.map((l) => [l.input, l]));
    const ordered = dg.meta.aliased_io.map((a) => byInput.get(a.input)!);
    const shared = ordered.flatMap((l) => {
      const c = w.chains.find((x) => x.links.includes(l))!;
      const n = sharedNames(c);
      return n === null ? [] : [n];
    });
    if (shared.length > 0) delegate.compileSpecs = setSpec(delegate.compileSpecs, SPEC_SHARED_KV_CACHE, encodeSharedKvCache(shared));
    out.push({
      method,
      delegate: dg.d,
      location: dg.location,
      elided,
      buffers: ordered.map((l) => valueLabel(plan, bufferOfLink.get(l)!)),
      shared,
    });
  }
  return out;
}

/**
 * Moves each cache (value `m(buffer)` after the dead values went) to a CUDA
 * arena of its engine's device, or tags a shared arena's device in place,
 * then repacks every arena a value left or a cache arrives in.
 */
function placeCaches(
  w: MethodWork,
  m: (v: number) => number,
  fromArena: ReadonlyMap<number, number>,
  sharedArenas: Map<string, number>,
  layoutShared: ReadonlySet<string>,
): ZeroCopyMethod['caches'] {
  const { plan, p } = w;
  const touched = new Set<number>();
  for (const [v, arena] of fromArena) if (m(v) < 0) touched.add(arena);
  const moving = new Map<number, { value: number; chain: Chain }[]>(); // target arena -> caches
  const caches: ZeroCopyMethod['caches'] = [];
  for (const c of w.chains) {
    const v = m(c.buffer);
    const t = tensorAt(plan, v)!;
    const from = arenaLabel(plan, t.allocationInfo!.memoryId);
    const key = `${p}:${t.allocationInfo!.memoryId}`;
    if (sharedArenas.has(key)) {
      setArenaDevice(plan, t.allocationInfo!.memoryId, c.device);
      tagDevice(t, c.device);
      caches.push({
        buffer: valueLabel(plan, v),
        bytes: tensorBytes(t) ?? 0n,
        from,
        to: `${arenaLabel(plan, t.allocationInfo!.memoryId)}, shared, in place`,
      });
      continue;
    }
    touched.add(t.allocationInfo!.memoryId);
    const target = cudaArenaFor(plan, c.device);
    touched.add(target);
    moving.set(target, [...(moving.get(target) ?? []), { value: v, chain: c }]);
    tagDevice(t, c.device);
    caches.push({ buffer: valueLabel(plan, v), bytes: tensorBytes(t) ?? 0n, from, to: '' });
  }
  repackArenas(w, touched, moving, caches, layoutShared);
  return caches;
}

/**
 * Packs each touched arena without the values that left it, then places the
 * caches arriving in it after the rest (CACHE_ALIGNMENT), filling in their
 * `to` in the report.
 */
function repackArenas(
  w: MethodWork,
  touched: ReadonlySet<number>,
  moving: ReadonlyMap<number, { value: number; chain: Chain }[]>,
  caches: ZeroCopyMethod['caches'],
  layoutShared: ReadonlySet<string>,
): void {
  const { plan, p } = w;
  const leaving = new Set([...moving.values()].flat().map((x) => x.value));
  for (const arena of [...touched].sort((a, b) => a - b)) {
    const old = arena > 0 ? plan.nonConstBufferSizes[arena] : undefined;
    if (old === undefined) continue;
    // An arena another method shares keeps its layout: offsets there are the sharing.
    const packed = layoutShared.has(`${p}:${arena}`) ? null : packArena(plan, arena, leaving);
    let end = packed ?? old;
    const arriving = moving.get(arena) ?? [];
    for (const { value } of arriving) {
      const t = tensorAt(plan, value)!;
      const offset = alignUp(end, CACHE_ALIGNMENT);
      t.allocationInfo = { memoryId: arena, ...splitMemoryOffset(offset) };
      end = offset + (tensorBytes(t) ?? 0n);
      caches.find((x) => x.buffer === valueLabel(plan, value))!.to = `${arenaLabel(plan, arena)} at ${offset}`;
    }
    const size = alignUp(end, ARENA_SIZE_ALIGNMENT);
    if (packed === null) plan.nonConstBufferSizes[arena] = size > old ? size : old;
    else plan.nonConstBufferSizes[arena] = arriving.length > 0 || size < old ? size : old;
  }
}

/** The result must update every buffer exactly once, and keep the order of the write-backs left. */
function checkRewritten(
  w: MethodWork,
  m: (v: number) => number,
  orderBefore: number[],
  elidedBuffers: ReadonlySet<number>,
  delegates: ChainDelegates,
): void {
  const { plan } = w;
  const method = planName(plan, w.p);
  const after = writeBackOrder(plan);
  const expected = orderBefore.filter((b) => !elidedBuffers.has(b)).map(m);
  if (after.length !== expected.length || after.some((b, i) => b !== expected[i])) {
    refuse('ZC_REWRITE_INTERNAL', method, `the write-backs left are [${after.join(', ')}], expected [${expected.join(', ')}]`);
  }
  const edges: AliasEdge[] = [];
  for (const { dg } of delegates.values())
    pushAll(edges, aliasEdgesOf(plan, dg.d, dg.meta, new Set(aliasedOutputs(dg.meta).map((b) => b.name))));
  const sharedChains = new Set(w.chains.filter((c) => c.links.length > 1).map((c) => m(c.buffer)));
  for (const u of bufferUpdates(plan, edges, (v) => sharedChains.has(v))) {
    if (u.zeroCopy.length > 0 && u.count !== 1)
      refuse('ZC_REWRITE_INTERNAL', method, `${valueLabel(plan, u.value)} is updated ${u.count} times after the rewrite`);
  }
}

// ---------------------------------------------------------------------------
// The pass

/** Un-stages every staged KV cache of `program` (mutating it), or refuses. */
export function applyZeroCopyKv(program: Program, blobs: BlobTable, opts: ZeroCopyOptions = {}): ZeroCopyResult {
  const { already, work, sharedArenas, layoutShared, noCache } = analyseZeroCopyKv(program, blobs, opts);
  const result: ZeroCopyResult = {
    changed: false,
    noCache: noCache ? { delegates: blobs.size } : null,
    rewritten: [],
    already,
    methods: [],
    valueMaps: new Map(),
  };
  for (const w of work) {
    const r = rewriteMethod(w, sharedArenas, layoutShared);
    pushAll(result.rewritten, r.delegates);
    result.methods.push(r.report);
    result.valueMaps.set(w.p, r.valueMap);
  }
  // A shared arena whose partner method had nothing to rewrite still moves with it.
  for (const [key, device] of sharedArenas) {
    const [p, arena] = present(parseIndexPair(key), `shared arena key ${key}`);
    if (work.some((w) => w.p === p)) continue;
    setArenaDevice(planAt(program, p), arena, device);
  }
  result.changed = result.rewritten.length > 0;
  return result;
}
