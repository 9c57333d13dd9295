// Surgery on one method for the zero-copy rewrite: dropping instructions
// (jump targets and stack traces follow), dropping values nothing refers to
// any more (every index that names a value is renumbered), dropping
// operators no instruction calls, and re-packing an arena after tensors left
// it. Each helper changes only what it names; the rest of the method keeps
// its bytes.

import type { ExecutionPlan } from '../pte/model.js';
import { memoryOffset, splitMemoryOffset } from '../pte/model.js';
import { tensorAt, tensorBytes } from '../pte/tensor.js';
import { atKey, referencesOf, type At } from '../graph/dataflow.js';
import { itemAt } from '../util/present.js';

/** Removes the instructions at `remove` (keys from atKey). */
export function removeInstructions(plan: ExecutionPlan, remove: ReadonlySet<string>): void {
  plan.chains.forEach((chain, c) => {
    const n = chain.instructions.length;
    const keeps = (i: number) => !remove.has(atKey({ chain: c, instruction: i }));
    const kept = [...chain.instructions.keys()].filter(keeps);
    if (kept.length === n) return;
    // A jump to a removed instruction lands on the next one kept (or the end).
    const target = (d: number) => {
      const k = kept.findIndex((i) => i >= d);
      return k === -1 ? kept.length : k;
    };
    const trace = chain.stacktrace.length === n ? chain.stacktrace : null;
    chain.instructions = chain.instructions
      .filter((_, i) => keeps(i))
      .map((ins) => (ins.type === 'JumpFalseCall' ? { ...ins, destinationInstruction: target(ins.destinationInstruction) } : ins));
    if (trace) chain.stacktrace = trace.filter((_, i) => keeps(i));
  });
}

/**
 * Removes the values in `candidates` that nothing refers to any more and
 * renumbers every reference. Returns old index -> new index (-1: removed).
 */
export function removeDeadValues(plan: ExecutionPlan, candidates: Iterable<number>): Int32Array {
  const refs = referencesOf(plan);
  const dead = new Set<number>();
  for (const v of candidates) if (Number.isInteger(v) && refs[v]?.length === 0) dead.add(v);
  const oldLength = plan.values.length;
  const map = new Int32Array(oldLength);
  let next = 0;
  for (let i = 0; i < oldLength; i++) map[i] = dead.has(i) ? -1 : next++;
  if (dead.size === 0) return map;
  // An index outside the values (an unsound input) keeps pointing past the end.
  const re = (v: number) => map[v] ?? (v >= oldLength ? v - dead.size : v);
  plan.values = plan.values
    .filter((_, i) => !dead.has(i))
    .map((v) =>
      v.type === 'TensorList' || v.type === 'OptionalTensorList' ? { ...v, items: v.items.map((x) => (x < 0 ? x : re(x))) } : v,
    );
  plan.inputs = plan.inputs.map(re);
  plan.outputs = plan.outputs.map(re);
  for (const chain of plan.chains) {
    chain.inputs = chain.inputs.map(re);
    chain.outputs = chain.outputs.map(re);
    chain.instructions = chain.instructions.map((ins) => {
      switch (ins.type) {
        case 'KernelCall':
        case 'DelegateCall':
          return { ...ins, args: ins.args.map(re) };
        case 'MoveCall':
          return { ...ins, moveFrom: re(ins.moveFrom), moveTo: re(ins.moveTo) };
        case 'JumpFalseCall':
          return { ...ins, condValueIndex: re(ins.condValueIndex) };
        case 'FreeCall':
          return { ...ins, valueIndex: re(ins.valueIndex) };
        default:
          return ins;
      }
    });
  }
  return map;
}

/** Removes the operators in `candidates` that no kernel call uses any more; renumbers op indices. */
export function removeUnusedOperators(plan: ExecutionPlan, candidates: Iterable<number>): void {
  const used = new Set<number>();
  for (const c of plan.chains) for (const ins of c.instructions) if (ins.type === 'KernelCall') used.add(ins.opIndex);
  const drop = new Set([...candidates].filter((o) => !used.has(o) && o >= 0 && o < plan.operators.length));
  if (drop.size === 0) return;
  const map = plan.operators.map(() => -1);
  let next = 0;
  plan.operators.forEach((_, i) => {
    if (!drop.has(i)) map[i] = next++;
  });
  plan.operators = plan.operators.filter((_, i) => !drop.has(i));
  for (const c of plan.chains)
    c.instructions = c.instructions.map((ins) =>
      // Every used operator is kept, so its index maps (refused inputs never get here).
      ins.type === 'KernelCall' ? { ...ins, opIndex: itemAt(map, ins.opIndex, 'the operator map') } : ins,
    );
}

/** Offsets keep their residue modulo this when an arena is re-packed. */
export const PACK_GRANULE = 256n;
/** Alignment of a cache region placed by the rewrite (TensorRT wants 256-byte aligned I/O). */
export const CACHE_ALIGNMENT = 256n;
/** Arena sizes are rounded up to this. */
export const ARENA_SIZE_ALIGNMENT = 64n;

export const alignUp = (n: bigint, a: bigint) => ((n + a - 1n) / a) * a;

/**
 * Re-packs arena `arena`: the tensors planned in it are grouped into runs
 * that overlap (memory planning shares a region between tensors whose
 * lifetimes do not meet), each run moves as one piece, the runs keep their
 * order and their offsets modulo PACK_GRANULE, and the gaps between them
 * close. No two tensors that did not overlap come to overlap, and every
 * pair that did keeps its relative place, so lifetimes need not be known.
 * `skip` are tensors leaving the arena (placed afterwards). Returns the end
 * of the last run, or null (arena left alone) when a tensor's size is
 * unknown.
 */
export function packArena(plan: ExecutionPlan, arena: number, skip: ReadonlySet<number> = new Set()): bigint | null {
  const items: { v: number; start: bigint; end: bigint }[] = [];
  for (let v = 0; v < plan.values.length; v++) {
    const t = tensorAt(plan, v);
    if (!t?.allocationInfo || t.allocationInfo.memoryId !== arena || skip.has(v)) continue;
    const bytes = tensorBytes(t);
    if (bytes === undefined) return null;
    const start = memoryOffset(t.allocationInfo);
    items.push({ v, start, end: start + bytes });
  }
  items.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.end < b.end ? -1 : a.end > b.end ? 1 : 0));
  // Runs: every tensor whose region meets the run so far joins it.
  const runs: { start: bigint; end: bigint; members: typeof items }[] = [];
  for (const item of items) {
    const last = runs.at(-1);
    if (last && item.start < last.end) {
      last.members.push(item);
      if (item.end > last.end) last.end = item.end;
    } else runs.push({ start: item.start, end: item.end, members: [item] });
  }
  let cursor = 0n;
  for (const run of runs) {
    const residue = run.start % PACK_GRANULE;
    let base = alignUp(cursor, PACK_GRANULE) + residue;
    if (base - PACK_GRANULE >= cursor) base -= PACK_GRANULE;
    const shift = run.start - base;
    for (const member of run.members) {
      const t = tensorAt(plan, member.v)!;
      t.allocationInfo = { memoryId: arena, ...splitMemoryOffset(member.start - shift) };
    }
    cursor = run.end - shift;
  }
  return cursor;
}

export type { At };
