// The zero-copy KV check's buffer side: caches fed to engines straight
// from a host arena, buffers handed to an aliased input with no stamp behind
// them, and the rules on every buffer either side names (device placement, a
// region of its own, no staging copy, no write-back, no other reader).

import { arenaDevice, deviceLabel, taggedDevice, tensorAt, valueLabel } from '../pte/tensor.js';
import { inputs } from '../tensorrt/blob.js';
import {
  H2D_COPY,
  atLabel,
  copyOf,
  describeRef,
  hasDeviceArena,
  instructionsOf,
  isWriteBackDest,
  overlaps,
  regionOf,
  writeBacks,
  type Ref,
} from '../graph/dataflow.js';
import { itemAt, present } from '../util/present.js';
import { binding, type MethodScan, type Use } from './zero-copy-scan.js';

/** Checks the buffers the delegates of `s` take in place, in report order. */
export function checkBufferSide(s: MethodScan): void {
  const hostOnly = !hasDeviceArena(s.plan);
  if (hostOnly) checkHostFed(s);
  checkUnstampedDirect(s);
  // The rules below hold for every buffer either side names (after
  // checkHostFed dropped the staged ones from `direct`).
  const marked = new Set<number>([...s.zc.keys(), ...s.direct.keys()]);
  checkCopies(s, marked);
  const hostPlanned: number[] = [];
  for (const b of [...marked].sort((x, y) => x - y)) {
    if (checkPlacement(s, b, hostOnly)) hostPlanned.push(b);
    checkOverlaps(s, b);
    checkOtherReaders(s, b);
  }
  if (hostPlanned.length > 0) {
    s.emit(
      'ZC_HOST_PLANNED',
      s.method,
      `every planned tensor of the method is in a host arena (no CUDA arena in non_const_buffer_device), so ${hostPlanned.map((b) => valueLabel(s.plan, b)).join(', ')} ${hostPlanned.length === 1 ? 'is' : 'are'} host memory whatever the device tags say; the engine requires its aliased inputs device-resident`,
    );
  }
}

/**
 * Planned without device memory (enable_non_cpu_memory_planning off: no
 * staging, delegate I/O only tagged CUDA in the host arena), a staged engine
 * is fed the host buffer itself; Torch-TensorRT's runtime refuses a host
 * aliased input (TensorRTBackend.cpp, execute). A staged cache, not a
 * zero-copy one, so it leaves `direct`.
 */
function checkHostFed(s: MethodScan): void {
  const { plan, emit, direct } = s;
  for (const [b, uses] of [...direct]) {
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
}

/** The buffer side: fed straight to an aliased input whose output is kept, or by an unstamped delegate. */
function checkUnstampedDirect(s: MethodScan): void {
  const { plan, emit, direct } = s;
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
}

/**
 * No staging copy reads a buffer on the device (a marked one, or any
 * mutable buffer tagged or planned on CUDA), and no write-back writes a
 * marked one.
 */
function checkCopies(s: MethodScan, marked: ReadonlySet<number>): void {
  const { plan, method, emit, buffers } = s;
  const deviceBuffers = [...buffers].filter((b) => {
    const t = tensorAt(plan, b)!;
    const r = regionOf(t)!;
    return (
      taggedDevice(t).type === 'cuda' ||
      (r.arena > 0 && r.arena < plan.nonConstBufferSizes.length && arenaDevice(plan, r.arena).type === 'cuda')
    );
  });
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
}

/** The uses that marked buffer `b`: its elided inputs, then its direct ones. */
function usesOf(s: MethodScan, b: number): Use[] {
  return [...(s.zc.get(b) ?? []), ...(s.direct.get(b) ?? [])];
}

/**
 * Marked buffer `b` is planned and tagged on its engine's device. Returns
 * true when it is in a host arena of a method with no device arena, which
 * the caller reports once for the whole method (ZC_HOST_PLANNED).
 */
function checkPlacement(s: MethodScan, b: number, hostOnly: boolean): boolean {
  const { plan, emit, at } = s;
  const t = tensorAt(plan, b)!;
  // A buffer is marked by its first use.
  const first = present(usesOf(s, b)[0], `the uses of zero-copy buffer ${b}`);
  const device = first.v.device;
  const r = regionOf(t)!;
  const arenaOk = r.arena > 0 && r.arena < plan.nonConstBufferSizes.length;
  const place = arenaOk ? arenaDevice(plan, r.arena) : null;
  if (place && place.type === 'cpu' && hostOnly) return true;
  if (!place || place.type !== 'cuda' || place.index !== device) {
    emit(
      'ZC_CACHE_OFF_DEVICE',
      at(b),
      `${valueLabel(plan, b)} is planned in arena ${r.arena} (${place ? deviceLabel(place) : 'no such arena'}); its engine (${first.v.t.location}) writes it in place on cuda:${device}`,
    );
  } else if (taggedDevice(t).type !== 'cuda' || taggedDevice(t).index !== device) {
    emit(
      'ZC_CACHE_OFF_DEVICE',
      at(b),
      `${valueLabel(plan, b)} is planned on cuda:${device} but tagged ${deviceLabel(taggedDevice(t))} (extra_tensor_info)`,
    );
  }
  return false;
}

/** Marked buffer `b` has a region of its own: a cache lives across executions. */
function checkOverlaps(s: MethodScan, b: number): void {
  const { plan, emit, at } = s;
  const r = regionOf(tensorAt(plan, b)!)!;
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
}

/**
 * Marked buffer `b` has no reader other than its aliased inputs, its
 * staging copies (checkCopies) and write-backs (checkCopies).
 */
function checkOtherReaders(s: MethodScan, b: number): void {
  const { plan, emit, refs, at } = s;
  const uses = usesOf(s, b);
  const others = itemAt(refs, b, 'the references of a value').filter(
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
