// The dataflow facts the zero-copy KV rewrite and its checks read off a
// method: every place a value is referenced, which kernel calls are staging
// copies and buffer write-backs, which values are mutable buffers, which
// device a TensorRT delegate runs on, and which caches two methods share by
// planning. Nothing here changes a program.
//
// The file does not record the mutation map (docs/file-format.md): a
// write-back is recognised by what it is, an `aten::copy_` whose first
// argument (the destination) is the buffer.

import type { BackendDelegate, ExecutionPlan, Instruction, Program, Tensor } from '../pte/model.js';
import { memoryOffset } from '../pte/model.js';
import { arenaDevice, tensorAt, tensorBytes, tensorName, valueLabel, type DevicePlace } from '../pte/tensor.js';
import { D2H_COPY, H2D_COPY } from './staging.js';
import { inputs, outputs, type BlobMetadata } from '../tensorrt/blob.js';
import { specView } from '../tensorrt/delegate-view.js';
import { itemAt } from '../util/present.js';

export { D2H_COPY, H2D_COPY };
export const COPY_BACK = 'aten::copy_';

export type KernelCall = Extract<Instruction, { type: 'KernelCall' }>;
export type DelegateCall = Extract<Instruction, { type: 'DelegateCall' }>;

/** An instruction's place: chain and index within it. */
export interface At {
  chain: number;
  instruction: number;
}

export const atKey = (a: At) => `${a.chain}:${a.instruction}`;
export const atLabel = (a: At) => `chain ${a.chain} instruction ${a.instruction}`;

/** One reference to a value. */
export type Ref =
  | { kind: 'kernel'; at: At; arg: number; op: string }
  | { kind: 'delegate'; at: At; arg: number; delegate: number }
  | { kind: 'plan-input' | 'plan-output'; index: number }
  | { kind: 'chain-input' | 'chain-output'; chain: number; index: number }
  | { kind: 'move' | 'jump' | 'free'; at: At }
  | { kind: 'list'; value: number };

export function opName(plan: ExecutionPlan, ins: KernelCall): string {
  return plan.operators[ins.opIndex]?.name ?? '';
}

/** Every instruction of the method with its place. */
export function* instructionsOf(plan: ExecutionPlan): Generator<{ at: At; ins: Instruction }> {
  for (const [c, chain] of plan.chains.entries()) {
    for (const [i, ins] of chain.instructions.entries()) yield { at: { chain: c, instruction: i }, ins };
  }
}

/** refs[v]: every reference to value v (indices outside values are ignored). */
export function referencesOf(plan: ExecutionPlan): Ref[][] {
  const refs: Ref[][] = plan.values.map(() => []);
  const add = (v: number, r: Ref) => {
    if (Number.isInteger(v)) refs[v]?.push(r);
  };
  plan.inputs.forEach((v, index) => add(v, { kind: 'plan-input', index }));
  plan.outputs.forEach((v, index) => add(v, { kind: 'plan-output', index }));
  plan.chains.forEach((c, chain) => {
    c.inputs.forEach((v, index) => add(v, { kind: 'chain-input', chain, index }));
    c.outputs.forEach((v, index) => add(v, { kind: 'chain-output', chain, index }));
  });
  for (const { at, ins } of instructionsOf(plan)) {
    switch (ins.type) {
      case 'KernelCall': {
        const op = opName(plan, ins);
        ins.args.forEach((v, arg) => add(v, { kind: 'kernel', at, arg, op }));
        break;
      }
      case 'DelegateCall':
        ins.args.forEach((v, arg) => add(v, { kind: 'delegate', at, arg, delegate: ins.delegateIndex }));
        break;
      case 'MoveCall':
        add(ins.moveFrom, { kind: 'move', at });
        add(ins.moveTo, { kind: 'move', at });
        break;
      case 'JumpFalseCall':
        add(ins.condValueIndex, { kind: 'jump', at });
        break;
      case 'FreeCall':
        add(ins.valueIndex, { kind: 'free', at });
        break;
    }
  }
  plan.values.forEach((v, value) => {
    if (v.type === 'TensorList' || v.type === 'OptionalTensorList') for (const item of v.items) add(item, { kind: 'list', value });
  });
  return refs;
}

/** `et_copy::_h2d_copy.out(src, out) -> out` / `_d2h_copy`: the copy's source and destination. */
export function copyOf(plan: ExecutionPlan, ins: Instruction, op: string): { src: number; dst: number } | null {
  if (ins.type !== 'KernelCall' || opName(plan, ins) !== op) return null;
  const [src, dst] = ins.args;
  return src === undefined || dst === undefined ? null : { src, dst };
}

/** `aten::copy_(dest, src, non_blocking) -> dest`: a buffer write-back. */
export function writeBackOf(plan: ExecutionPlan, ins: Instruction): { dest: number; src: number } | null {
  if (ins.type !== 'KernelCall' || opName(plan, ins) !== COPY_BACK) return null;
  const [dest, src] = ins.args;
  return dest === undefined || src === undefined ? null : { dest, src };
}

/** True when `r` is one of the places an out-variant copy writes (out, or the return value that repeats it). */
export function isCopyOutput(r: Ref, op: string): boolean {
  return r.kind === 'kernel' && r.op === op && r.arg >= 1;
}

/** True when `r` is the destination (or the return value) of a write-back. */
export function isWriteBackDest(plan: ExecutionPlan, r: Ref): boolean {
  if (r.kind !== 'kernel' || r.op !== COPY_BACK) return false;
  const ins = instructionAt(plan, r.at);
  return r.arg === 0 || (ins.type === 'KernelCall' && r.arg === ins.args.length - 1 && ins.args[r.arg] === ins.args[0]);
}

/** The two indices of a `plan:index` key (sharedAcrossMethods's `plan:value`, a pass's `plan:arena`); undefined for another string. */
export function parseIndexPair(key: string): [number, number] | undefined {
  const m = /^(\d+):(\d+)$/.exec(key);
  return m?.[1] === undefined || m[2] === undefined ? undefined : [Number(m[1]), Number(m[2])];
}

/** Method `p` of `program`, an index trtx iterated or recorded (a missing one is a trtx bug: INTERNAL). */
export function planAt(program: Program, p: number): ExecutionPlan {
  return itemAt(program.executionPlan, p, 'a method of the program');
}

/** The instruction at `at`, a place trtx found in this plan (a missing one is a trtx bug: INTERNAL). */
export function instructionAt(plan: ExecutionPlan, at: At): Instruction {
  const chain = itemAt(plan.chains, at.chain, 'a chain of the method');
  return itemAt(chain.instructions, at.instruction, `an instruction of chain ${at.chain}`);
}

/** Write-backs in instruction order. */
export function writeBacks(plan: ExecutionPlan): { at: At; dest: number; src: number }[] {
  const out: { at: At; dest: number; src: number }[] = [];
  for (const { at, ins } of instructionsOf(plan)) {
    const w = writeBackOf(plan, ins);
    if (w) out.push({ at, ...w });
  }
  return out;
}

/**
 * The method's mutable buffers: memory-planned tensors that are not method
 * inputs and either carry a fully_qualified_name (ExecuTorch names exactly
 * its mutable buffers under emit_mutable_buffer_names; parameters and
 * constants are not planned) or are the destination of a write-back.
 */
export function mutableBuffers(plan: ExecutionPlan, edges: readonly AliasEdge[] = []): Set<number> {
  const inputs = new Set(plan.inputs);
  const dests = new Set(writeBacks(plan).map((w) => w.dest));
  const out = new Set<number>();
  plan.values.forEach((v, i) => {
    if (v.type !== 'Tensor' || !v.tensor.allocationInfo || inputs.has(i)) return;
    if (tensorName(v.tensor) !== null || dests.has(i)) out.add(i);
  });
  for (const v of updatedInPlaceOnly(plan, edges)) out.add(v);
  return out;
}

/**
 * Mutable buffers recognised by structure alone, for a zero-copy program
 * finalized without names: Torch-TensorRT documents `edge.to_executorch()`
 * with ExecuTorch's default `emit_mutable_buffer_names=False`
 * (executorch/exir/capture/_config.py), and the zero-copy rewrite removes the
 * write-backs that identify a staged program's buffers. A memory-planned
 * tensor that is no method input or output and that nothing in the method
 * references except engines updating it in place (the aliased input of an
 * elided output, `edges` with `outArg === null`) is written by nothing else
 * and read by nothing else, so its contents carry from one execution to the
 * next: that is what a mutable buffer is. An activation is always written by
 * the instruction that produces it, so it never qualifies.
 */
export function updatedInPlaceOnly(plan: ExecutionPlan, edges: readonly AliasEdge[], refs?: Ref[][]): Set<number> {
  const out = new Set<number>();
  const elided = edges.filter((e) => e.outArg === null);
  if (elided.length === 0) return out;
  const r = refs ?? referencesOf(plan);
  const io = new Set([...plan.inputs, ...plan.outputs]);
  const feeds = new Map<number, Set<string>>();
  for (const e of elided) {
    const s = feeds.get(e.inArg) ?? new Set<string>();
    s.add(`${atKey(e.at)}\0${e.delegate}`);
    feeds.set(e.inArg, s);
  }
  for (const [v, calls] of feeds) {
    const t = tensorAt(plan, v);
    if (!t?.allocationInfo || io.has(v)) continue;
    const onlyInPlace = (r[v] ?? []).every((ref) => ref.kind === 'delegate' && calls.has(`${atKey(ref.at)}\0${ref.delegate}`));
    // One argument per in-place update: a value the call also passes as another input would be read there as well.
    const uses = (r[v] ?? []).length;
    if (onlyInPlace && uses === elided.filter((e) => e.inArg === v).length) out.add(v);
  }
  return out;
}

/** The device a TensorRT delegate's I/O lives on: its cuda target_device, else the blob's device_id. */
export function delegateDevice(delegate: BackendDelegate, meta: BlobMetadata): number {
  const { target } = specView(delegate).specs;
  return target?.type === 'cuda' ? target.index : meta.device_id;
}

/** What `r` is, in words, for a message. */
export function describeRef(plan: ExecutionPlan, r: Ref): string {
  switch (r.kind) {
    case 'kernel': {
      const what =
        r.op === H2D_COPY
          ? 'a staging copy (et_copy::_h2d_copy)'
          : r.op === D2H_COPY
            ? 'a device-to-host copy (et_copy::_d2h_copy)'
            : `kernel ${r.op || '?'}`;
      return `${what} at ${atLabel(r.at)}`;
    }
    case 'delegate': {
      const d = plan.delegates[r.delegate];
      return `delegate ${r.delegate} (${d?.id ?? 'no id'}) at ${atLabel(r.at)}`;
    }
    case 'plan-input':
      return `the method's input ${r.index}`;
    case 'plan-output':
      return `the method's output ${r.index}`;
    case 'chain-input':
    case 'chain-output':
      return `chain ${r.chain} ${r.kind === 'chain-input' ? 'input' : 'output'} ${r.index}`;
    case 'list':
      return `the tensor list %${r.value}`;
    default:
      return `a ${r.kind} instruction at ${atLabel(r.at)}`;
  }
}

/** A buffer in a message: its name and value index. */
export const bufferLabel = (plan: ExecutionPlan, v: number) => valueLabel(plan, v);

export interface Region {
  arena: number;
  offset: bigint;
  bytes: bigint;
}

export function regionOf(t: Tensor): Region | null {
  if (!t.allocationInfo) return null;
  return { arena: t.allocationInfo.memoryId, offset: memoryOffset(t.allocationInfo), bytes: tensorBytes(t) ?? 0n };
}

export const overlaps = (a: Region, b: Region) =>
  a.arena === b.arena && a.bytes > 0n && b.bytes > 0n && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;

/** Whether the method plans anything in a CUDA arena. */
export function hasDeviceArena(plan: ExecutionPlan): boolean {
  for (let a = 1; a < plan.nonConstBufferSizes.length; a++) if (arenaDevice(plan, a).type === 'cuda') return true;
  return false;
}

export function placeOf(plan: ExecutionPlan, t: Tensor): DevicePlace | null {
  const r = regionOf(t);
  if (!r || r.arena <= 0 || r.arena >= plan.nonConstBufferSizes.length) return null;
  return arenaDevice(plan, r.arena);
}

// ---------------------------------------------------------------------------
// Caches two methods share

/** A cache as one method holds it. */
export interface MethodBuffer {
  plan: number;
  value: number;
}

/**
 * Whether arena `arena` of `plan` holds nothing but named mutable buffers:
 * the shape ExecuTorch's share_mutable_buffers gives the state it shares
 * (memory_planning_pass.py run_multimethod: every spec with one fqn gets one
 * mem_id and one offset, in an arena of its own).
 */
export function isStateArena(plan: ExecutionPlan, arena: number, buffers = mutableBuffers(plan)): boolean {
  let any = false;
  for (let i = 0; i < plan.values.length; i++) {
    const t = tensorAt(plan, i);
    if (!t?.allocationInfo || t.allocationInfo.memoryId !== arena) continue;
    if (!buffers.has(i) || tensorName(t) === null) return false;
    any = true;
  }
  return any;
}

/**
 * Caches shared between methods, keyed `plan:value`, each with the same
 * cache in the other methods. ExecuTorch plans every method's mutable
 * buffers on their own unless share_mutable_buffers is on, so a name seen in
 * two methods is not sharing by itself, and neither is the same initial
 * state (the emitter deduplicates mutable data by content hash, so two
 * zero-initialised caches point at one entry). Shared means planned as
 * share_mutable_buffers plans it: the same fully_qualified_name at the same
 * memory_id, offset and size in both methods, in an arena that holds only
 * named mutable buffers in both.
 */
export function sharedAcrossMethods(program: Program): Map<string, MethodBuffer[]> {
  const groups = new Map<string, MethodBuffer[]>();
  program.executionPlan.forEach((plan, p) => {
    const buffers = mutableBuffers(plan);
    const stateArena = new Map<number, boolean>();
    for (const v of buffers) {
      const t = tensorAt(plan, v)!;
      const name = tensorName(t);
      const r = regionOf(t);
      if (name === null || !r) continue;
      if (!stateArena.has(r.arena)) stateArena.set(r.arena, isStateArena(plan, r.arena, buffers));
      if (!stateArena.get(r.arena)) continue;
      const key = `${name}\0${r.arena}\0${r.offset}\0${r.bytes}`;
      const g = groups.get(key) ?? [];
      g.push({ plan: p, value: v });
      groups.set(key, g);
    }
  });
  const out = new Map<string, MethodBuffer[]>();
  for (const g of groups.values()) {
    if (new Set(g.map((b) => b.plan)).size < 2) continue;
    for (const b of g)
      out.set(
        `${b.plan}:${b.value}`,
        g.filter((o) => o.plan !== b.plan),
      );
  }
  return out;
}

// ---------------------------------------------------------------------------
// Delegate calls bound to their blob's bindings

/** One aliased binding pair of one delegate call, with the values it binds. */
export interface AliasEdge {
  delegate: number;
  at: At;
  output: string;
  input: string;
  kind: string;
  inArg: number;
  /** The output's argument; null when the call elides it (zero-copy). */
  outArg: number | null;
}

/**
 * Binding name -> argument of a call whose outputs in `elided` are not
 * arguments (inputs first, then the remaining outputs in order); null when
 * the argument count does not fit that layout.
 */
export function bindArgs(call: DelegateCall, meta: BlobMetadata, elided: ReadonlySet<string>): Map<string, number> | null {
  const bound = [...inputs(meta), ...outputs(meta).filter((b) => !elided.has(b.name))];
  if (call.args.length !== bound.length) return null;
  return new Map(call.args.map((arg, k) => [itemAt(bound, k, 'the bindings of a delegate call').name, arg]));
}

/** The aliased pairs of every call of `delegate` laid out with `elided` outputs left out (calls that do not fit are skipped). */
export function aliasEdgesOf(plan: ExecutionPlan, delegate: number, meta: BlobMetadata, elided: ReadonlySet<string>): AliasEdge[] {
  const out: AliasEdge[] = [];
  for (const { at, ins } of instructionsOf(plan)) {
    if (ins.type !== 'DelegateCall' || ins.delegateIndex !== delegate) continue;
    const args = bindArgs(ins, meta, elided);
    if (!args) continue;
    for (const a of meta.aliased_io) {
      const inArg = args.get(a.input);
      if (inArg === undefined) continue;
      out.push({
        delegate,
        at,
        output: a.output,
        input: a.input,
        kind: a.kind,
        inArg,
        outArg: elided.has(a.output) ? null : (args.get(a.output) ?? null),
      });
    }
  }
  return out;
}
