// Copy-back ordering at file level (docs/zero-copy-kv.md): every mutable
// buffer is updated exactly once per execution of its method, by its own
// write-back (`aten::copy_` into it) or by a zero-copy delegate (the buffer
// fed straight to an aliased input whose output was elided), never both and
// never neither; and a staged aliased output is written back into the buffer
// its aliased input was staged from, not another one.
//
// ExecuTorch's write-back pass pairs mutation specs with values by position
// (exir/passes/insert_write_back_for_buffers_pass.py), so a method mixing zero-copy caches and a copy-back buffer can
// finalize with a crossed mutation map. The file itself is right as long as
// each copy carries its own destination, which is what is checked here: the
// updates each buffer gets, and where each staged update lands.

import type { ExecutionPlan } from '../pte/model.js';
import {
  D2H_COPY,
  H2D_COPY,
  copyOf,
  instructionAt,
  isCopyOutput,
  mutableBuffers,
  referencesOf,
  writeBackOf,
  writeBacks,
  type AliasEdge,
  type At,
  type Ref,
} from './dataflow.js';

export type { AliasEdge };

export interface BufferUpdates {
  value: number;
  /** Write-backs into the buffer, in instruction order. */
  writeBacks: At[];
  /** Elided aliased inputs the buffer is fed to directly. */
  zeroCopy: AliasEdge[];
  /** Updates per execution: write-backs, plus the zero-copy delegates (one for a declared shared chain). */
  count: number;
}

/**
 * Updates of every mutable buffer of the method. `sharedChain(v)` says a
 * buffer is declared shared by every delegate that writes it in place: those
 * writes are one update made in steps.
 */
export function bufferUpdates(
  plan: ExecutionPlan,
  edges: readonly AliasEdge[],
  sharedChain: (v: number) => boolean = () => false,
): BufferUpdates[] {
  const wbs = writeBacks(plan);
  return [...mutableBuffers(plan)]
    .sort((a, b) => a - b)
    .map((value) => {
      const writeBacksInto = wbs.filter((w) => w.dest === value).map((w) => w.at);
      const zeroCopy = edges.filter((e) => e.outArg === null && e.inArg === value);
      const delegates = new Set(zeroCopy.map((e) => e.delegate)).size;
      const inPlace = delegates === 0 ? 0 : sharedChain(value) ? 1 : zeroCopy.length;
      return { value, writeBacks: writeBacksInto, zeroCopy, count: writeBacksInto.length + inPlace };
    });
}

/** Write-back destinations in instruction order. */
export function writeBackOrder(plan: ExecutionPlan): number[] {
  return writeBacks(plan).map((w) => w.dest);
}

export interface CrossedWriteBack {
  edge: AliasEdge;
  /** The buffer the aliased input was staged from. */
  staged: number;
  /** The buffer the aliased output is written back into. */
  writtenTo: number;
  at: At;
}

/** The one reader of `v` other than the refs `skip` accepts, or null when there is not exactly one. */
function soleReader(refs: Ref[][], v: number, skip: (r: Ref) => boolean): Ref | null {
  const [only, ...others] = refs[v]?.filter((r) => !skip(r)) ?? [];
  return only !== undefined && others.length === 0 ? only : null;
}

/**
 * Staged aliased outputs written back into a buffer other than the one their
 * aliased input was staged from: `_h2d_copy(A, s)`, the engine updates `s`
 * through the alias, and the copy that returns it lands in `B`.
 */
export function crossedWriteBacks(plan: ExecutionPlan, edges: readonly AliasEdge[]): CrossedWriteBack[] {
  const refs = referencesOf(plan);
  const out: CrossedWriteBack[] = [];
  for (const e of edges) {
    if (e.outArg === null) continue;
    const staging = refs[e.inArg]?.find((r) => isCopyOutput(r, H2D_COPY));
    if (!staging || staging.kind !== 'kernel') continue;
    const staged = copyOf(plan, instructionAt(plan, staging.at), H2D_COPY)!.src;
    const toHost = soleReader(
      refs,
      e.outArg,
      (r) => r.kind === 'delegate' && r.at.chain === e.at.chain && r.at.instruction === e.at.instruction,
    );
    if (!toHost || toHost.kind !== 'kernel' || toHost.op !== D2H_COPY || toHost.arg !== 0) continue;
    const host = copyOf(plan, instructionAt(plan, toHost.at), D2H_COPY)!.dst;
    for (const r of refs[host] ?? []) {
      if (r.kind !== 'kernel') continue;
      const w = writeBackOf(plan, instructionAt(plan, r.at));
      if (w && r.arg === 1 && w.src === host && w.dest !== staged) out.push({ edge: e, staged, writtenTo: w.dest, at: r.at });
    }
  }
  return out;
}
