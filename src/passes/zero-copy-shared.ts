// Caches methods share (ExecuTorch's share_mutable_buffers plans them at one
// memory_id and offset in a state arena of each method): under --share-cache
// the state arena moves to the device whole, so everything in it must be a
// cache made zero-copy on one device. Part of the analysis
// (src/passes/zero-copy-analyse.ts); refuses, changes nothing.

import type { Program } from '../pte/model.js';
import { arenaDevice, deviceLabel, planName, tensorAt, valueLabel } from '../pte/tensor.js';
import { specView } from '../tensorrt/delegate-view.js';
import { blobKey, refuse, type BlobTable, type Chain, type MethodWork } from './zero-copy-model.js';
import { aliasEdgesOf, parseIndexPair, planAt, regionOf } from '../graph/dataflow.js';
import { present } from '../util/present.js';

/** The method's buffers an already zero-copy delegate takes directly. */
function zeroCopyBuffersOf(program: Program, p: number, blobs: BlobTable): Set<number> {
  const plan = planAt(program, p);
  const out = new Set<number>();
  plan.delegates.forEach((delegate, d) => {
    const meta = blobs.get(blobKey(p, d));
    const stamp = specView(delegate).zeroCopy;
    if (!meta || stamp === null || 'error' in stamp) return;
    for (const e of aliasEdgesOf(plan, d, meta, new Set(stamp.names))) if (e.outArg === null) out.add(e.inArg);
  });
  return out;
}

/** With --share-cache, a shared state arena moves to the device whole: everything in it must be a cache going (or gone) zero-copy on one device. */
export function checkSharedArenas(program: Program, work: MethodWork[], blobs: BlobTable): Map<string, number> {
  const arenas = new Map<string, number>(); // `plan:arena` -> device
  const chainOf = new Map<string, Chain>();
  for (const w of work) for (const c of w.chains) chainOf.set(`${w.p}:${c.buffer}`, c);
  const want = new Map<string, { device: number; why: string }>();
  for (const w of work) {
    for (const c of w.chains) {
      if (c.partners.length === 0) continue;
      const arena = regionOf(tensorAt(w.plan, c.buffer)!)!.arena;
      for (const m of [{ plan: w.p, value: c.buffer }, ...c.partners]) {
        const key = `${m.plan}:${arena}`;
        if (!want.has(key)) want.set(key, { device: c.device, why: valueLabel(w.plan, c.buffer) });
      }
    }
  }
  for (const [key, { device, why }] of want) {
    const [p, arena] = present(parseIndexPair(key), `shared arena key ${key}`);
    const plan = planAt(program, p);
    const zc = zeroCopyBuffersOf(program, p, blobs);
    const at = `${planName(plan, p)} > arena ${arena}`;
    const place = arenaDevice(plan, arena);
    if (place.type === 'cuda' && place.index !== device)
      refuse(
        'ZC_REWRITE_SHARED_ARENA_MIXED',
        at,
        `the shared state arena is on ${deviceLabel(place)}, but ${why} is updated on cuda:${device}`,
      );
    for (let v = 0; v < plan.values.length; v++) {
      const t = tensorAt(plan, v);
      if (!t?.allocationInfo || t.allocationInfo.memoryId !== arena) continue;
      const c = chainOf.get(`${p}:${v}`);
      if (c ? c.device !== device : !zc.has(v)) {
        refuse(
          'ZC_REWRITE_SHARED_ARENA_MIXED',
          at,
          `the shared state arena also holds ${valueLabel(plan, v)}, which ${c ? `is updated on cuda:${c.device}` : 'does not become zero-copy'}; the arena moves to cuda:${device} as a whole`,
        );
      }
    }
    arenas.set(key, device);
  }
  return arenas;
}
