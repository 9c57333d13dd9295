// What each method does with the state a program keeps across executions,
// so verify asks each method only what it can show:
//   - a method that reads a buffer it also writes (a KV decode step) keeps
//     state: each step must see what the previous one wrote;
//   - a method that only reads a buffer another method writes (get_state
//     beside set_state) must read what the writer wrote;
//   - a method that only writes (set_state, a reset) has nothing to show on
//     its own: what it wrote is seen through the methods that read it.
//
// Which methods share a buffer is ExecuTorch's: methods of one Program share
// mutable state only when memory planning ran with share_mutable_buffers
// (exir/passes/memory_planning_pass.py run_multimethod gives every spec of
// one fqn, mutated in some method or only read in another, the same mem_id 2
// and offset; exir/emit/_emitter.py then emits the reader's buffer as a
// planned tensor instead of a constant), and only when the application loads
// them with Module(share_memory_arenas=true) (extension/module/module.h: it
// "is required for models exported with share_mutable_buffers=true"; every
// method then gets the one arena for mem_ids 1 and 2). Otherwise each method
// has its own copy, and a buffer a method never mutates is a constant.
// graph/dataflow.ts sharedAcrossMethods recognises that layout.

import type { ExecutionPlan } from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { planName, tensorAt, tensorName, valueLabel } from '../pte/tensor.js';
import { itemAt, present } from '../util/present.js';
import { aliasEdgesOf, isWriteBackDest, mutableBuffers, referencesOf, sharedAcrossMethods, writeBacks } from '../graph/dataflow.js';
import { aliasedOutputs } from '../tensorrt/blob.js';
import { delegatesOf, isTensorRT, readDelegateBlob } from '../tensorrt/delegates.js';

export interface MethodState {
  /** Buffers (by the name the runner reports them under, else their value label) the method writes. */
  writes: string[];
  /** Buffers the method reads (anything but the destination of its own write-back). */
  reads: string[];
  /** Buffers the method reads but does not write, each with the other methods planned to share it that write it. */
  readsFrom: { buffer: string; writers: string[] }[];
}

export interface StateRoles {
  methods: Map<string, MethodState>;
  /** Whether two of the methods asked for share a buffer: they run with Module(share_memory_arenas). */
  shared: boolean;
}

/** Writes of one method: write-back destinations and buffers a zero-copy engine updates in place. */
async function writtenValues(pte: PteFile, p: number, plan: ExecutionPlan): Promise<Set<number>> {
  const out = new Set(writeBacks(plan).map((w) => w.dest));
  for (const ref of delegatesOf(pte, isTensorRT).filter((r) => r.planIndex === p)) {
    const meta = (await readDelegateBlob(pte, ref).catch(() => null))?.metadata;
    if (!meta) continue;
    const elided = new Set(aliasedOutputs(meta).map((b) => b.name));
    for (const e of aliasEdgesOf(plan, ref.delegateIndex, meta, elided)) if (e.outArg === null) out.add(e.inArg);
  }
  return out;
}

/** The roles of the methods `methods` of `pte` (the file the runner runs, so names match its report). */
export async function stateRoles(pte: PteFile, methods: readonly string[]): Promise<StateRoles> {
  const plans = pte.program.executionPlan;
  const chosen = new Set(methods);
  // p is always an index of plans: a loop index below, or a method index the sharing map holds of this program.
  const planAt = (p: number) => itemAt(plans, p, `execution_plan[${p}]`);
  const nameOf = (p: number) => planName(planAt(p), p);
  const label = (p: number, v: number) => {
    const t = tensorAt(planAt(p), v);
    return (t && tensorName(t)) ?? valueLabel(planAt(p), v);
  };
  const written = new Map<number, Set<number>>();
  const read = new Map<number, Set<number>>();
  for (const [p, plan] of plans.entries()) {
    if (!chosen.has(planName(plan, p))) continue;
    const w = await writtenValues(pte, p, plan);
    // A cache a zero-copy engine updates in place may carry no name: it is a buffer all the same.
    const buffers = new Set([...mutableBuffers(plan), ...w]);
    const refs = referencesOf(plan);
    written.set(p, w);
    read.set(p, new Set([...buffers].filter((v) => (refs[v] ?? []).some((r) => !isWriteBackDest(plan, r)))));
  }
  const sharing = sharedAcrossMethods(pte.program);
  const out = new Map<string, MethodState>();
  let shared = false;
  for (const [p, w] of written) {
    const r = present(read.get(p), `${nameOf(p)}: the values it reads`);
    const readsFrom: MethodState['readsFrom'] = [];
    for (const v of r) {
      const partners = (sharing.get(`${p}:${v}`) ?? []).filter((x) => written.has(x.plan));
      if (partners.length) shared = true;
      if (w.has(v)) continue;
      const writers = partners
        .filter((x) => present(written.get(x.plan), `${nameOf(x.plan)}: the values it writes`).has(x.value))
        .map((x) => nameOf(x.plan));
      if (writers.length) readsFrom.push({ buffer: label(p, v), writers });
    }
    out.set(nameOf(p), {
      writes: [...w].map((v) => label(p, v)),
      reads: [...r].map((v) => label(p, v)),
      readsFrom,
    });
  }
  return { methods: out, shared };
}

/** A method that reads a buffer it writes: its steps see what earlier steps wrote. */
export const keepsState = (m: MethodState) => m.reads.some((b) => m.writes.includes(b));
