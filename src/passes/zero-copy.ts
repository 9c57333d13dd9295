// `trtx rewrite --zero-copy-kv [--share-cache]`: un-stages the KV caches of
// a finished program (domain brief section 5, seed 001).
//
// For every TensorRT delegate whose blob declares `kv_cache_update` aliases
// fed by staging copies of mutable buffers:
//   - each buffer becomes the delegate's argument (its `_h2d_copy` goes);
//   - the aliased outputs leave the call with the `_d2h_copy` and the
//     `aten::copy_` that wrote them back (the engine's write through the
//     aliased input is the update);
//   - the buffer moves to a region of its own at the end of the CUDA arena
//     of the delegate's device (created with its non_const_buffer_device
//     entry when the method has none), tagged cuda:N, keeping its initial
//     state (data_buffer_idx);
//   - the delegate is stamped `zero_copy_kv` with the elided output names.
// Values, instructions and operators nothing uses any more are dropped and
// the arenas they emptied are re-packed (see packArena), so a rewritten
// program holds no staging memory. A copy-back buffer that is not aliased
// (a convolution state) keeps its staging and its write-back; which outputs
// are aliased is read from the blob's aliased_io, never from graph shape.
//
// Every way this goes wrong upstream is a refusal here, naming the buffer,
// binding or delegate (codes below). A cache that two delegates or two
// methods share is refused unless --share-cache says it is meant, and then
// the decision is written into the program (src/tensorrt/shared-kv-cache.ts).

import type { RewriteCode } from '../codes/index.js';
import type { ExecutionPlan, Program, Tensor } from '../pte/model.js';
import { DeviceType, TensorDataLocation, splitMemoryOffset } from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { arenaDevice, deviceLabel, planName, tensorAt, tensorBytes, tensorName, valueLabel } from '../pte/tensor.js';
import { stagingBytes } from '../graph/staging.js';
import { aliasedOutputs, bindingLabel, inputs, outputs, type BlobMetadata } from '../tensorrt/blob.js';
import { SPEC_ZERO_COPY_KV, decodeZeroCopyKv, encodeZeroCopyKv, getSpec, setSpec } from '../tensorrt/compile-specs.js';
import { delegateLocation, delegatesOf, isTensorRT, readDelegateBlob } from '../tensorrt/delegates.js';
import { SPEC_SHARED_KV_CACHE, encodeSharedKvCache } from '../tensorrt/shared-kv-cache.js';
import { TrtxError } from '../util/errors.js';
import { formatIEC } from '../util/size.js';
import type { Pass, PassReport } from './pass.js';
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
  COPY_BACK,
  D2H_COPY,
  H2D_COPY,
  aliasEdgesOf,
  atKey,
  atLabel,
  copyOf,
  delegateDevice,
  describeRef,
  hasDeviceArena,
  instructionAt,
  instructionsOf,
  isCopyOutput,
  mutableBuffers,
  referencesOf,
  regionOf,
  sharedAcrossMethods,
  writeBackOf,
  type AliasEdge,
  type At,
  type DelegateCall,
  type Ref,
} from '../graph/dataflow.js';

const HINTS = {
  ZC_REWRITE_NO_ALIASED_CACHE:
    'zero-copy KV applies to TensorRT engines exported with aliased KV caches (TR02 blobs with kv_cache_update entries); this program has nothing to un-stage',
  ZC_REWRITE_USER_ALIAS:
    'elision is all-or-nothing per delegate and a user alias cannot be elided; keep this program staged, or re-export the engine without the user alias',
  ZC_REWRITE_NOT_STAGED_BUFFER:
    'only a mutable buffer that ExecuTorch stages into the engine can become zero-copy; keep this program staged or re-export',
  ZC_REWRITE_OUTPUT_READ:
    'the aliased output is used by more than its write-back, so it cannot be elided; keep this program staged or re-export',
  ZC_REWRITE_WRITEBACK_MISMATCH:
    'the program writes an aliased output back into another buffer than its aliased input (a crossed mutation map); re-export the program',
  ZC_REWRITE_OTHER_READER:
    'a zero-copy buffer moves to the device, where a staging copy or another backend can no longer read it; keep this program staged or re-export',
  ZC_REWRITE_SHARED_DELEGATES:
    'two engines update this cache in turn; if that is meant, pass --share-cache to record the decision in the program',
  ZC_REWRITE_SHARED_METHODS:
    'the methods are planned to share this cache (share_mutable_buffers); if that is meant, pass --share-cache to record the decision in the program',
  ZC_REWRITE_SHARED_ARENA_MIXED:
    'a shared state arena moves to the device as a whole, so everything in it must be a cache made zero-copy on one device; keep this program staged',
  ZC_REWRITE_NO_OUTPUTS_LEFT:
    'a delegate with no outputs left is a node nothing reads and a dead-code pass may erase it; keep this program staged, or re-export the engine with an output',
  ZC_REWRITE_DEVICE_CONFLICT: 're-export so that the engines updating one cache run on one device',
  ZC_REWRITE_INPUT_UNSOUND: 'run `trtx check` on the input and fix or re-export it first',
  ZC_REWRITE_INTERNAL: 'this is a trtx bug; please report it with the input file',
} as const satisfies Partial<Record<RewriteCode, string>>;

export type ZeroCopyRewriteCode = keyof typeof HINTS;
export const ZERO_COPY_REWRITE_CODES = Object.keys(HINTS) as ZeroCopyRewriteCode[];

function refuse(code: ZeroCopyRewriteCode, location: string, message: string): never {
  throw new TrtxError(code, location, message, { hint: HINTS[code] });
}

export interface ZeroCopyOptions {
  /** Allow caches two delegates or two methods share, recording the decision (shared_kv_cache). */
  shareCache?: boolean;
}

/** Parsed metadata of every TensorRT delegate, keyed blobKey(plan, delegate). */
export type BlobTable = ReadonlyMap<string, BlobMetadata>;
export const blobKey = (plan: number, delegate: number) => `${plan}/${delegate}`;

/** Reads every TensorRT blob's header and metadata (never an engine). A blob that does not parse is refused with its own code. */
export async function readTrtBlobs(pte: PteFile): Promise<Map<string, BlobMetadata>> {
  const out = new Map<string, BlobMetadata>();
  for (const ref of delegatesOf(pte, isTensorRT))
    out.set(blobKey(ref.planIndex, ref.delegateIndex), (await readDelegateBlob(pte, ref)).metadata);
  return out;
}

// ---------------------------------------------------------------------------
// What the pass found and did

export interface ZeroCopyDelegate {
  method: string;
  delegate: number;
  location: string;
  /** Output bindings elided (zero_copy_kv), in output order. */
  elided: string[];
  /** The buffers fed to the aliased inputs, as labels. */
  buffers: string[];
  /** Caches recorded as shared (shared_kv_cache), when any. */
  shared: string[];
}

export interface ZeroCopyMethod {
  method: string;
  /** Caches moved to the device. */
  caches: { buffer: string; bytes: bigint; from: string; to: string }[];
  stagingBefore: ReturnType<typeof stagingBytes>;
  stagingAfter: ReturnType<typeof stagingBytes>;
  arenas: { arena: number; device: string; before: bigint; after: bigint }[];
  removed: { instructions: number; values: number; operators: number };
}

export interface ZeroCopyResult {
  changed: boolean;
  rewritten: ZeroCopyDelegate[];
  /** Delegates that were zero-copy already. */
  already: ZeroCopyDelegate[];
  methods: ZeroCopyMethod[];
  /** Per rewritten method (plan index): old value index -> new (-1: removed). */
  valueMaps: Map<number, Int32Array>;
}

// ---------------------------------------------------------------------------
// Analysis

interface KvDelegate {
  p: number;
  plan: ExecutionPlan;
  d: number;
  meta: BlobMetadata;
  location: string;
  device: number;
  call: DelegateCall;
  at: At;
}

interface Link {
  dg: KvDelegate;
  output: string;
  input: string;
  inPos: number;
  outPos: number;
  inArg: number;
  outArg: number;
}

interface Chain {
  buffer: number;
  h2d: At;
  staging: number;
  links: Link[];
  d2h: At;
  host: number;
  copy: At;
  device: number;
  /** Same cache in other methods (share_mutable_buffers layout). */
  partners: { plan: number; value: number }[];
}

interface MethodWork {
  p: number;
  plan: ExecutionPlan;
  chains: Chain[];
  delegates: KvDelegate[];
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && new Set(a).size === a.length && a.every((x) => b.includes(x));

function refAt(r: Ref, at: At): boolean {
  return (r.kind === 'kernel' || r.kind === 'delegate') && r.at.chain === at.chain && r.at.instruction === at.instruction;
}

function describeReaders(plan: ExecutionPlan, rs: Ref[]): string {
  return rs.length === 0 ? 'nothing' : rs.map((r) => describeRef(plan, r)).join(', ');
}

/** Classifies the method's KV delegates: those to rewrite (returned) and those already zero-copy (pushed to `already`). */
function kvDelegatesOf(program: Program, p: number, blobs: BlobTable, already: ZeroCopyDelegate[]): KvDelegate[] {
  const plan = program.executionPlan[p];
  const method = planName(plan, p);
  const todo: KvDelegate[] = [];
  plan.delegates.forEach((delegate, d) => {
    const meta = blobs.get(blobKey(p, d));
    if (!meta || !isTensorRT(delegate) || !meta.aliased_io.some((a) => a.kind === 'kv_cache_update')) return;
    const location = delegateLocation(plan, p, d, delegate);
    const calls = [...instructionsOf(plan)].filter((x) => x.ins.type === 'DelegateCall' && x.ins.delegateIndex === d);
    if (calls.length === 0) return;
    if (calls.length > 1)
      refuse(
        'ZC_REWRITE_INPUT_UNSOUND',
        location,
        `is called ${calls.length} times (${calls.map((c) => atLabel(c.at)).join(', ')}); un-staging handles one call per delegate`,
      );
    const { at } = calls[0];
    const call = calls[0].ins as DelegateCall;
    const aliased = aliasedOutputs(meta).map((b) => b.name);
    const nIn = inputs(meta).length;
    const nOut = outputs(meta).length;
    const n = call.args.length;
    const stampBytes = getSpec(delegate.compileSpecs, SPEC_ZERO_COPY_KV);
    if (stampBytes !== undefined) {
      let stamp: string[];
      try {
        stamp = decodeZeroCopyKv(stampBytes, `${location} > compile_specs (zero_copy_kv)`);
      } catch (e) {
        refuse('ZC_REWRITE_INPUT_UNSOUND', location, `carries a zero_copy_kv spec that does not parse: ${(e as Error).message}`);
      }
      if (sameSet(stamp, aliased) && n === nIn + nOut - aliased.length) {
        const args = new Map(
          [...inputs(meta), ...outputs(meta).filter((b) => !aliased.includes(b.name))].map((b, k) => [b.name, call.args[k]]),
        );
        already.push({
          method,
          delegate: d,
          location,
          elided: aliased,
          buffers: meta.aliased_io.map((a) => valueLabel(plan, args.get(a.input) ?? -1)),
          shared: [],
        });
        return;
      }
      refuse(
        'ZC_REWRITE_INPUT_UNSOUND',
        location,
        `is stamped zero_copy_kv ${JSON.stringify(stamp)} but its aliased outputs are ${JSON.stringify(aliased)} and its call has ${n} arguments; the program is neither staged nor zero-copy there`,
      );
    }
    if (n !== nIn + nOut) {
      refuse(
        'ZC_REWRITE_INPUT_UNSOUND',
        location,
        `its call at ${atLabel(at)} has ${n} arguments; staged it takes ${nIn + nOut} (${nIn} inputs + ${nOut} outputs)`,
      );
    }
    const user = meta.aliased_io.find((a) => a.kind !== 'kv_cache_update');
    if (user) {
      refuse(
        'ZC_REWRITE_USER_ALIAS',
        `${location} > binding ${bindingLabel(user.output)}`,
        `the engine aliases output ${JSON.stringify(user.output)} onto input ${JSON.stringify(user.input)} as a "${user.kind}" alias, which is not a cache; the runtime elides all of an engine's aliased outputs or none, so its kv_cache_update aliases cannot be elided either`,
      );
    }
    if (nOut === aliased.length) {
      refuse(
        'ZC_REWRITE_NO_OUTPUTS_LEFT',
        location,
        `every output of the engine (${aliased.join(', ')}) is an aliased cache; eliding them would leave the delegate with no outputs`,
      );
    }
    todo.push({ p, plan, d, meta, location, device: delegateDevice(delegate, meta), call, at });
  });
  return todo;
}

/** Follows each staged cache from its `_h2d_copy` through the engines that update it to its write-back. */
function chainsOf(plan: ExecutionPlan, delegates: KvDelegate[], opts: ZeroCopyOptions): Chain[] {
  const refs = referencesOf(plan);
  const links: Link[] = [];
  for (const dg of delegates) {
    const ins = inputs(dg.meta);
    const outs = outputs(dg.meta);
    for (const a of dg.meta.aliased_io) {
      const inPos = ins.findIndex((b) => b.name === a.input);
      const outPos = ins.length + outs.findIndex((b) => b.name === a.output);
      links.push({ dg, output: a.output, input: a.input, inPos, outPos, inArg: dg.call.args[inPos], outArg: dg.call.args[outPos] });
    }
  }
  const byOut = new Map(links.map((l) => [l.outArg, l]));
  const at = (l: Link, which: 'in' | 'out') => `${l.dg.location} > binding ${bindingLabel(which === 'in' ? l.input : l.output)}`;
  const visited = new Set<Link>();
  const chains: Chain[] = [];

  for (const start of links) {
    const staging = refs[start.inArg]?.find((r) => isCopyOutput(r, H2D_COPY));
    if (!staging || staging.kind !== 'kernel') {
      if (byOut.has(start.inArg)) continue; // a later link of a chain
      refuse(
        'ZC_REWRITE_NOT_STAGED_BUFFER',
        at(start, 'in'),
        `aliased input ${JSON.stringify(start.input)} (for output ${JSON.stringify(start.output)}) is fed ${valueLabel(plan, start.inArg)}, which is neither a staging copy (et_copy::_h2d_copy) of a mutable buffer nor a cache another engine updated` +
          (hasDeviceArena(plan)
            ? ''
            : ' (the method was planned without device memory, so there is no staging and no CUDA arena to move a cache to)'),
      );
    }
    const buffer = copyOf(plan, instructionAt(plan, staging.at), H2D_COPY)!.src;
    const bt = tensorAt(plan, buffer);
    const bl = valueLabel(plan, buffer);
    if (!bt?.allocationInfo || plan.inputs.includes(buffer) || !mutableBuffers(plan).has(buffer)) {
      const why = !bt
        ? 'is not a tensor'
        : plan.inputs.includes(buffer)
          ? "is the method's input (a caller-owned cache)"
          : !bt.allocationInfo
            ? 'is not memory-planned'
            : 'is not a mutable buffer (nothing writes it back)';
      refuse(
        'ZC_REWRITE_NOT_STAGED_BUFFER',
        at(start, 'in'),
        `aliased input ${JSON.stringify(start.input)} is staged from ${bl}, which ${why}`,
      );
    }
    const stagingReaders = refs[start.inArg].filter(
      (r) => !isCopyOutput(r, H2D_COPY) && !(refAt(r, start.dg.at) && r.kind === 'delegate' && r.arg === start.inPos),
    );
    if (stagingReaders.length > 0) {
      refuse(
        'ZC_REWRITE_OTHER_READER',
        at(start, 'in'),
        `the staging copy ${valueLabel(plan, start.inArg)} of buffer ${bl} is also read by ${describeReaders(plan, stagingReaders)}`,
      );
    }

    const chain: Link[] = [start];
    visited.add(start);
    let cur = start;
    let end: { d2h: At; host: number; copy: At } | null = null;
    while (!end) {
      const readers = refs[cur.outArg].filter((r) => !(r.kind === 'delegate' && refAt(r, cur.dg.at) && r.arg === cur.outPos));
      const next =
        readers.length === 1 && readers[0].kind === 'delegate'
          ? links.find((l) => refAt(readers[0], l.dg.at) && l.inPos === (readers[0] as { arg: number }).arg)
          : undefined;
      if (next && !visited.has(next)) {
        chain.push(next);
        visited.add(next);
        cur = next;
        continue;
      }
      const r = readers[0];
      if (readers.length === 1 && r.kind === 'kernel' && r.op === D2H_COPY && r.arg === 0) {
        const host = copyOf(plan, instructionAt(plan, r.at), D2H_COPY)!.dst;
        const hostReaders = refs[host].filter((x) => !isCopyOutput(x, D2H_COPY));
        const w =
          hostReaders.length === 1 && hostReaders[0].kind === 'kernel' && hostReaders[0].arg === 1
            ? writeBackOf(plan, instructionAt(plan, hostReaders[0].at))
            : null;
        if (w && hostReaders[0].kind === 'kernel') {
          if (w.dest !== buffer) {
            refuse(
              'ZC_REWRITE_WRITEBACK_MISMATCH',
              at(cur, 'out'),
              `aliased output ${JSON.stringify(cur.output)} updates the staging copy of ${bl}, but the program writes it back into ${valueLabel(plan, w.dest)} (${atLabel(hostReaders[0].at)})`,
            );
          }
          end = { d2h: r.at, host, copy: hostReaders[0].at };
          break;
        }
        refuse(
          'ZC_REWRITE_OUTPUT_READ',
          at(cur, 'out'),
          `aliased output ${JSON.stringify(cur.output)} is copied to the host as ${valueLabel(plan, host)}, which is read by ${describeReaders(plan, hostReaders)} instead of one write-back into ${bl}`,
        );
      }
      if (readers.length === 0) {
        refuse(
          'ZC_REWRITE_OUTPUT_READ',
          at(cur, 'out'),
          `aliased output ${JSON.stringify(cur.output)} (${valueLabel(plan, cur.outArg)}) is never written back into ${bl}: the staged program loses this update, and un-staging it would change what the program computes`,
        );
      }
      refuse(
        'ZC_REWRITE_OUTPUT_READ',
        at(cur, 'out'),
        `aliased output ${JSON.stringify(cur.output)} (${valueLabel(plan, cur.outArg)}) is read by ${describeReaders(plan, readers)}; only its write-back into ${bl} may read it`,
      );
    }

    const bufferReaders = refs[buffer].filter(
      (r) =>
        !(r.kind === 'kernel' && refAt(r, staging.at) && r.arg === 0) &&
        !(r.kind === 'kernel' && refAt(r, end.copy) && r.op === COPY_BACK && r.arg !== 1),
    );
    if (bufferReaders.length > 0) {
      refuse(
        'ZC_REWRITE_OTHER_READER',
        `${planName(plan, chain[0].dg.p)} > ${bl}`,
        `cache ${bl} is also read by ${describeReaders(plan, bufferReaders)}; once it lives on the device only its engine may read it`,
      );
    }
    const devices = [...new Set(chain.map((l) => l.dg.device))];
    if (devices.length > 1) {
      refuse(
        'ZC_REWRITE_DEVICE_CONFLICT',
        `${planName(plan, chain[0].dg.p)} > ${bl}`,
        `cache ${bl} is updated by engines on ${devices.map((d) => `cuda:${d}`).join(' and ')} (${chain.map((l) => l.dg.location).join(', ')})`,
      );
    }
    if (chain.length > 1) {
      const who = chain.map((l) => l.dg.location).join(' then ');
      if (!opts.shareCache)
        refuse(
          'ZC_REWRITE_SHARED_DELEGATES',
          `${planName(plan, chain[0].dg.p)} > ${bl}`,
          `cache ${bl} is shared by ${chain.length} delegates (${who}): each updates it in turn`,
        );
      if (tensorName(bt) === null)
        refuse(
          'ZC_REWRITE_SHARED_DELEGATES',
          `${planName(plan, chain[0].dg.p)} > ${bl}`,
          `cache ${bl} is shared by ${who}, and the decision cannot be recorded: the buffer has no fully_qualified_name`,
        );
    }
    chains.push({ buffer, h2d: staging.at, staging: start.inArg, links: chain, ...end, device: devices[0], partners: [] });
  }
  const lost = links.find((l) => !visited.has(l));
  if (lost) {
    refuse(
      'ZC_REWRITE_NOT_STAGED_BUFFER',
      at(lost, 'in'),
      `aliased input ${JSON.stringify(lost.input)} is fed ${valueLabel(plan, lost.inArg)}, which no staging copy of a mutable buffer leads to`,
    );
  }
  return chains;
}

/** The method's buffers an already zero-copy delegate takes directly. */
function zeroCopyBuffersOf(program: Program, p: number, blobs: BlobTable): Set<number> {
  const plan = program.executionPlan[p];
  const out = new Set<number>();
  plan.delegates.forEach((delegate, d) => {
    const meta = blobs.get(blobKey(p, d));
    const stamp = getSpec(delegate.compileSpecs, SPEC_ZERO_COPY_KV);
    if (!meta || stamp === undefined) return;
    let elided: string[];
    try {
      elided = decodeZeroCopyKv(stamp);
    } catch {
      return;
    }
    for (const e of aliasEdgesOf(plan, d, meta, new Set(elided))) if (e.outArg === null) out.add(e.inArg);
  });
  return out;
}

/** With --share-cache, a shared state arena moves to the device whole: everything in it must be a cache going (or gone) zero-copy on one device. */
function checkSharedArenas(program: Program, work: MethodWork[], blobs: BlobTable): Map<string, number> {
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
    const [p, arena] = key.split(':').map(Number);
    const plan = program.executionPlan[p];
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

// ---------------------------------------------------------------------------
// Editing

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

  // Instructions and arguments.
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
  const delegates = new Map<number, { dg: KvDelegate; links: Link[] }>();
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
  removeInstructions(plan, removeAt);

  // Stamps.
  const sharedNames = (c: Chain) => (c.links.length > 1 || c.partners.length > 0 ? tensorName(tensorAt(plan, c.buffer)!) : null);
  const out: ZeroCopyDelegate[] = [];
  for (const { dg, links } of delegates.values()) {
    const elided = aliasedOutputs(dg.meta).map((b) => b.name);
    const delegate = plan.delegates[dg.d];
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

  // Values and operators nothing uses any more.
  for (const b of elidedBuffers) candidates.delete(b);
  const valueMap = removeDeadValues(plan, candidates);
  removeUnusedOperators(plan, candidateOps);
  const m = (v: number) => valueMap[v];

  // Placement.
  const touched = new Set<number>();
  for (const [v, arena] of fromArena) if (valueMap[v] < 0) touched.add(arena);
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
  const leaving = new Set([...moving.values()].flat().map((x) => x.value));
  for (const arena of [...touched].sort((a, b) => a - b)) {
    if (arena <= 0 || arena >= plan.nonConstBufferSizes.length) continue;
    const old = plan.nonConstBufferSizes[arena];
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

  // The result must update every buffer exactly once, and keep the order of the write-backs left.
  const after = writeBackOrder(plan);
  const expected = orderBefore.filter((b) => !elidedBuffers.has(b)).map(m);
  if (after.length !== expected.length || after.some((b, i) => b !== expected[i])) {
    refuse('ZC_REWRITE_INTERNAL', method, `the write-backs left are [${after.join(', ')}], expected [${expected.join(', ')}]`);
  }
  const edges: AliasEdge[] = [];
  for (const { dg } of delegates.values())
    edges.push(...aliasEdgesOf(plan, dg.d, dg.meta, new Set(aliasedOutputs(dg.meta).map((b) => b.name))));
  const sharedChains = new Set(w.chains.filter((c) => c.links.length > 1).map((c) => m(c.buffer)));
  for (const u of bufferUpdates(plan, edges, (v) => sharedChains.has(v))) {
    if (u.zeroCopy.length > 0 && u.count !== 1)
      refuse('ZC_REWRITE_INTERNAL', method, `${valueLabel(plan, u.value)} is updated ${u.count} times after the rewrite`);
  }

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

// ---------------------------------------------------------------------------
// The pass

/** Un-stages every staged KV cache of `program` (mutating it), or refuses. */
export function applyZeroCopyKv(program: Program, blobs: BlobTable, opts: ZeroCopyOptions = {}): ZeroCopyResult {
  const anyCache = [...blobs.values()].some((m) => m.aliased_io.some((a) => a.kind === 'kv_cache_update'));
  if (!anyCache) {
    refuse(
      'ZC_REWRITE_NO_ALIASED_CACHE',
      'program',
      `no TensorRT delegate declares a kv_cache_update alias (${blobs.size} TensorRT delegate${blobs.size === 1 ? '' : 's'}), so there is no cache to un-stage`,
    );
  }
  const already: ZeroCopyDelegate[] = [];
  const work: MethodWork[] = [];
  program.executionPlan.forEach((plan, p) => {
    const delegates = kvDelegatesOf(program, p, blobs, already);
    if (delegates.length > 0) work.push({ p, plan, delegates, chains: chainsOf(plan, delegates, opts) });
  });

  const shared = sharedAcrossMethods(program);
  for (const w of work) {
    for (const c of w.chains) {
      c.partners = shared.get(`${w.p}:${c.buffer}`) ?? [];
      if (c.partners.length > 0 && !opts.shareCache) {
        const others = [...new Set(c.partners.map((x) => planName(program.executionPlan[x.plan], x.plan)))];
        refuse(
          'ZC_REWRITE_SHARED_METHODS',
          `${planName(w.plan, w.p)} > ${valueLabel(w.plan, c.buffer)}`,
          `cache ${valueLabel(w.plan, c.buffer)} is shared with ${others.map((o) => `method ${o}`).join(', ')}: planned at one memory_id and offset in a state arena of its own in each`,
        );
      }
    }
  }
  const sharedArenas = checkSharedArenas(program, work, blobs);
  const layoutShared = new Set<string>();
  for (const key of shared.keys()) {
    const [p, v] = key.split(':').map(Number);
    const r = regionOf(tensorAt(program.executionPlan[p], v)!);
    if (r) layoutShared.add(`${p}:${r.arena}`);
  }

  const result: ZeroCopyResult = { changed: false, rewritten: [], already, methods: [], valueMaps: new Map() };
  for (const w of work) {
    const r = rewriteMethod(w, sharedArenas, layoutShared);
    result.rewritten.push(...r.delegates);
    result.methods.push(r.report);
    result.valueMaps.set(w.p, r.valueMap);
  }
  // A shared arena whose partner method had nothing to rewrite still moves with it.
  for (const [key, device] of sharedArenas) {
    const [p, arena] = key.split(':').map(Number);
    if (work.some((w) => w.p === p)) continue;
    const plan = program.executionPlan[p];
    setArenaDevice(plan, arena, device);
  }
  result.changed = result.rewritten.length > 0;
  return result;
}

const mb = (n: number | bigint) => formatIEC(BigInt(n));

export function describeZeroCopy(r: ZeroCopyResult): string[] {
  if (!r.changed) {
    return [
      `already zero-copy, nothing to un-stage: ${r.already.map((d) => `${d.location} elides ${d.elided.join(', ')}`).join('; ') || 'no staged cache'}`,
    ];
  }
  const lines: string[] = [];
  const list = (xs: string[]) => (xs.length <= 4 ? xs.join(', ') : `${xs.length}: ${xs[0]}, ${xs[1]}, ..., ${xs[xs.length - 1]}`);
  for (const d of r.rewritten) {
    lines.push(
      `${d.location}: stamped zero_copy_kv (${list(d.elided)}); fed its caches directly (${list(d.buffers)})${d.shared.length ? `; shared_kv_cache (${list(d.shared)})` : ''}`,
    );
  }
  for (const m of r.methods) {
    const bytes = m.caches.reduce((s, c) => s + c.bytes, 0n);
    const stBefore = m.stagingBefore.host_to_device_bytes + m.stagingBefore.device_to_host_bytes;
    const stAfter = m.stagingAfter.host_to_device_bytes + m.stagingAfter.device_to_host_bytes;
    lines.push(
      `${m.method}: ${m.caches.length} cache${m.caches.length === 1 ? '' : 's'} (${mb(bytes)}) moved to the device; staging per execution ${mb(stBefore)} -> ${mb(stAfter)}; removed ${m.removed.instructions} instructions, ${m.removed.values} values, ${m.removed.operators} operators`,
    );
    for (const a of m.arenas) lines.push(`${m.method}: arena ${a.arena} (${a.device}) ${mb(a.before)} -> ${mb(a.after)}`);
  }
  for (const d of r.already) lines.push(`${d.location}: already zero-copy, unchanged`);
  return lines;
}

const delegateJson = (d: ZeroCopyDelegate) => ({
  method: d.method,
  delegate: d.delegate,
  location: d.location,
  elided: d.elided,
  buffers: d.buffers,
  shared: d.shared,
});

/** What the zero-copy pass reports (`rewrite --json` passes[].details). */
export type ZeroCopyDetails = ReturnType<typeof detailsOf>;

function detailsOf(r: ZeroCopyResult, opts: ZeroCopyOptions) {
  return {
    share_cache: Boolean(opts.shareCache),
    already_zero_copy: !r.changed,
    rewritten: r.rewritten.map(delegateJson),
    already: r.already.map(delegateJson),
    methods: r.methods.map((m) => ({
      method: m.method,
      caches: m.caches.map((c) => ({ ...c, bytes: c.bytes.toString() })),
      staging_before: m.stagingBefore,
      staging_after: m.stagingAfter,
      arenas: m.arenas.map((a) => ({ ...a, before: a.before.toString(), after: a.after.toString() })),
      removed: m.removed,
    })),
  };
}

export const isZeroCopyReport = (r: PassReport): r is PassReport<ZeroCopyDetails> => r.pass === 'zero-copy-kv';

/** The rewrite pass for `--zero-copy-kv`; `blobs` from readTrtBlobs on the input file. */
export function zeroCopyKvPass(blobs: BlobTable, opts: ZeroCopyOptions = {}): Pass {
  return (program): PassReport<ZeroCopyDetails> => {
    const r = applyZeroCopyKv(program, blobs, opts);
    return { pass: 'zero-copy-kv', changed: r.changed, lines: describeZeroCopy(r), warnings: [], details: detailsOf(r, opts) };
  };
}
