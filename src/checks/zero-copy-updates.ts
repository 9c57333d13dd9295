// The zero-copy KV check's whole-program rules for one method: a cache two
// delegates or two methods share is a recorded decision (shared_kv_cache),
// and every mutable buffer is updated exactly once per execution, by its own
// write-back or by a zero-copy engine, with staged outputs written back into
// their own buffers.

import { arenaDevice, deviceLabel, planName, tensorAt, tensorName, valueLabel } from '../pte/tensor.js';
import { SPEC_SHARED_KV_CACHE } from '../tensorrt/shared-kv-cache.js';
import { bufferUpdates, crossedWriteBacks } from '../graph/writeback-order.js';
import { atLabel, planAt, regionOf, type MethodBuffer } from '../graph/dataflow.js';
import type { MethodScan } from './zero-copy-scan.js';

/** Who shares a buffer of the method: the delegates updating it in place, the methods planned to share it. */
interface Sharing {
  partnersOf: (b: number) => MethodBuffer[];
  sharedBy: (b: number) => Set<number>;
  isShared: (b: number) => boolean;
}

function sharingOf({ p, zc, sharedMap }: MethodScan): Sharing {
  const partnersOf = (b: number) => sharedMap.get(`${p}:${b}`) ?? [];
  const sharedBy = (b: number) => new Set((zc.get(b) ?? []).map((u) => u.v.d));
  return { partnersOf, sharedBy, isShared: (b) => sharedBy(b).size > 1 || partnersOf(b).length > 0 };
}

/** Checks sharing and the once-per-execution update of the buffers of `s`. */
export function checkUpdates(s: MethodScan): void {
  const sharing = sharingOf(s);
  checkSharedCaches(s, sharing);
  checkStaleSharing(s, sharing);
  checkUpdatedOnce(s, sharing);
}

/** Rule 7: a cache two delegates or two methods share is named by every delegate's shared_kv_cache, on one device. */
function checkSharedCaches(s: MethodScan, { partnersOf, sharedBy, isShared }: Sharing): void {
  const { program, plan, method, emit, at, zc } = s;
  for (const [b, uses] of zc) {
    if (!isShared(b)) continue;
    const fqn = tensorName(tensorAt(plan, b)!);
    const partners = partnersOf(b);
    const withWhom = [
      ...(sharedBy(b).size > 1 ? [`delegates ${[...sharedBy(b)].join(' and ')} of ${method}`] : []),
      ...partners.map((x) => `method ${planName(planAt(program, x.plan), x.plan)}`),
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
      const other = planAt(program, x.plan);
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
}

/** Rule 7 the other way: a shared_kv_cache names only caches its delegate updates in place and someone shares. */
function checkStaleSharing(s: MethodScan, { isShared }: Sharing): void {
  const { plan, emit, vs, buffers } = s;
  for (const v of vs) {
    for (const name of v.shared ?? []) {
      const fed = v.edges.filter((e) => e.outArg === null && buffers.has(e.inArg) && tensorName(tensorAt(plan, e.inArg)!) === name);
      const [first] = fed;
      if (!v.stamp || first === undefined) {
        emit(
          'ZC_SHARED_CACHE_STALE',
          `${v.t.location} > compile_specs (${SPEC_SHARED_KV_CACHE})`,
          `shared_kv_cache names ${JSON.stringify(name)}, which this delegate does not update in place`,
          v.d,
        );
      } else if (!isShared(first.inArg)) {
        emit(
          'ZC_SHARED_CACHE_STALE',
          `${v.t.location} > compile_specs (${SPEC_SHARED_KV_CACHE})`,
          `shared_kv_cache names ${JSON.stringify(name)}, but no other delegate or method shares it: the program does not carry the decision out`,
          v.d,
        );
      }
    }
  }
}

/** Every mutable buffer is updated exactly once per execution, staged outputs into their own buffers. */
function checkUpdatedOnce(s: MethodScan, { partnersOf, isShared }: Sharing): void {
  const { plan, method, emit, vs, at, zc } = s;
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
