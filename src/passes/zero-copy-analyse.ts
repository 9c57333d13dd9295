// The zero-copy KV rewrite's analysis: which delegates have staged caches,
// each cache's chain (buffer -> _h2d_copy -> delegate -> _d2h_copy ->
// aten::copy_), and every refusal, before anything is changed. A program
// this accepts is rewritten by src/passes/zero-copy-apply.ts.

import { checkSharedArenas } from './zero-copy-shared.js';
import type { ExecutionPlan, Program } from '../pte/model.js';
import { planName, tensorAt, tensorName, valueLabel } from '../pte/tensor.js';
import { aliasedOutputs, bindingLabel, inputs, outputs } from '../tensorrt/blob.js';
import { specView } from '../tensorrt/delegate-view.js';
import { delegateLocation, isTensorRT } from '../tensorrt/delegates.js';
import {
  blobKey,
  refuse,
  type BlobTable,
  type Chain,
  type KvDelegate,
  type Link,
  type MethodWork,
  type ZeroCopyDelegate,
  type ZeroCopyOptions,
} from './zero-copy-model.js';
import {
  COPY_BACK,
  D2H_COPY,
  H2D_COPY,
  atLabel,
  bindArgs,
  copyOf,
  delegateDevice,
  describeRef,
  hasDeviceArena,
  instructionAt,
  instructionsOf,
  isCopyOutput,
  mutableBuffers,
  parseIndexPair,
  planAt,
  referencesOf,
  regionOf,
  sharedAcrossMethods,
  writeBackOf,
  type At,
  type DelegateCall,
  type Ref,
} from '../graph/dataflow.js';
import { itemAt, present } from '../util/present.js';

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
  const plan = planAt(program, p);
  const method = planName(plan, p);
  const todo: KvDelegate[] = [];
  plan.delegates.forEach((delegate, d) => {
    const meta = blobs.get(blobKey(p, d));
    if (!meta || !isTensorRT(delegate) || !meta.aliased_io.some((a) => a.kind === 'kv_cache_update')) return;
    const location = delegateLocation(plan, p, d, delegate);
    const calls = [...instructionsOf(plan)].filter((x) => x.ins.type === 'DelegateCall' && x.ins.delegateIndex === d);
    const [only, ...more] = calls;
    if (only === undefined) return;
    if (more.length > 0)
      refuse(
        'ZC_REWRITE_INPUT_UNSOUND',
        location,
        `is called ${calls.length} times (${calls.map((c) => atLabel(c.at)).join(', ')}); un-staging handles one call per delegate`,
      );
    const { at } = only;
    const call = only.ins as DelegateCall;
    const aliased = aliasedOutputs(meta).map((b) => b.name);
    const nIn = inputs(meta).length;
    const nOut = outputs(meta).length;
    const n = call.args.length;
    // The stamp's parse error is reported by its message, under the delegate's location.
    const stamped = specView(delegate).zeroCopy;
    if (stamped !== null) {
      if ('error' in stamped)
        refuse('ZC_REWRITE_INPUT_UNSOUND', location, `carries a zero_copy_kv spec that does not parse: ${stamped.error.message}`);
      const stamp = stamped.names;
      if (sameSet(stamp, aliased) && n === nIn + nOut - aliased.length) {
        const args = present(bindArgs(call, meta, new Set(aliased)), `the zero-copy bindings of ${location}`);
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
      // The call was checked to take every binding (kvDelegatesOf); the metadata, to name only bindings it has.
      const arg = (pos: number) => itemAt(dg.call.args, pos, `the arguments of ${dg.location}`);
      links.push({ dg, output: a.output, input: a.input, inPos, outPos, inArg: arg(inPos), outArg: arg(outPos) });
    }
  }
  const byOut = new Map(links.map((l) => [l.outArg, l]));
  const refsOf = (v: number) => itemAt(refs, v, 'the references of a value');
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
    const stagingReaders = refsOf(start.inArg).filter(
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
      const readers = refsOf(cur.outArg).filter((r) => !(r.kind === 'delegate' && refAt(r, cur.dg.at) && r.arg === cur.outPos));
      const [first, ...moreReaders] = readers;
      const r = moreReaders.length === 0 ? first : undefined;
      const next = r?.kind === 'delegate' ? links.find((l) => refAt(r, l.dg.at) && l.inPos === r.arg) : undefined;
      if (next && !visited.has(next)) {
        chain.push(next);
        visited.add(next);
        cur = next;
        continue;
      }
      if (r?.kind === 'kernel' && r.op === D2H_COPY && r.arg === 0) {
        const host = copyOf(plan, instructionAt(plan, r.at), D2H_COPY)!.dst;
        const hostReaders = refsOf(host).filter((x) => !isCopyOutput(x, D2H_COPY));
        const [firstHost, ...moreHost] = hostReaders;
        const copy = moreHost.length === 0 && firstHost?.kind === 'kernel' && firstHost.arg === 1 ? firstHost : undefined;
        const w = copy ? writeBackOf(plan, instructionAt(plan, copy.at)) : null;
        if (w && copy) {
          if (w.dest !== buffer) {
            refuse(
              'ZC_REWRITE_WRITEBACK_MISMATCH',
              at(cur, 'out'),
              `aliased output ${JSON.stringify(cur.output)} updates the staging copy of ${bl}, but the program writes it back into ${valueLabel(plan, w.dest)} (${atLabel(copy.at)})`,
            );
          }
          end = { d2h: r.at, host, copy: copy.at };
          break;
        }
        refuse(
          'ZC_REWRITE_OUTPUT_READ',
          at(cur, 'out'),
          `aliased output ${JSON.stringify(cur.output)} is copied to the host as ${valueLabel(plan, host)}, which is read by ${describeReaders(plan, hostReaders)} instead of one write-back into ${bl}`,
        );
      }
      if (first === undefined) {
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

    const bufferReaders = refsOf(buffer).filter(
      (r) =>
        !(r.kind === 'kernel' && refAt(r, staging.at) && r.arg === 0) &&
        !(r.kind === 'kernel' && refAt(r, end.copy) && r.op === COPY_BACK && r.arg !== 1),
    );
    if (bufferReaders.length > 0) {
      refuse(
        'ZC_REWRITE_OTHER_READER',
        `${planName(plan, start.dg.p)} > ${bl}`,
        `cache ${bl} is also read by ${describeReaders(plan, bufferReaders)}; once it lives on the device only its engine may read it`,
      );
    }
    const devices = [...new Set(chain.map((l) => l.dg.device))];
    if (devices.length > 1) {
      refuse(
        'ZC_REWRITE_DEVICE_CONFLICT',
        `${planName(plan, start.dg.p)} > ${bl}`,
        `cache ${bl} is updated by engines on ${devices.map((d) => `cuda:${d}`).join(' and ')} (${chain.map((l) => l.dg.location).join(', ')})`,
      );
    }
    if (chain.length > 1) {
      const who = chain.map((l) => l.dg.location).join(' then ');
      if (!opts.shareCache)
        refuse(
          'ZC_REWRITE_SHARED_DELEGATES',
          `${planName(plan, start.dg.p)} > ${bl}`,
          `cache ${bl} is shared by ${chain.length} delegates (${who}): each updates it in turn`,
        );
      if (tensorName(bt) === null)
        refuse(
          'ZC_REWRITE_SHARED_DELEGATES',
          `${planName(plan, start.dg.p)} > ${bl}`,
          `cache ${bl} is shared by ${who}, and the decision cannot be recorded: the buffer has no fully_qualified_name`,
        );
    }
    // One device (refused above otherwise): the first engine's.
    chains.push({ buffer, h2d: staging.at, staging: start.inArg, links: chain, ...end, device: start.dg.device, partners: [] });
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

/** What the rewrite works on once every refusal is made: the methods to rewrite, the delegates already zero-copy, and the arenas two methods share. */
export interface ZeroCopyPlan {
  already: ZeroCopyDelegate[];
  work: MethodWork[];
  /** Shared state arenas that move to the device: "plan:arena" -> device. */
  sharedArenas: Map<string, number>;
  /** "plan:arena" of every arena holding a cache another method plans at the same place. */
  layoutShared: Set<string>;
  /** No engine declares a KV cache (only without opts.strict). */
  noCache?: boolean;
}

/** Reads the program and refuses what cannot be un-staged; changes nothing. */
export function analyseZeroCopyKv(program: Program, blobs: BlobTable, opts: ZeroCopyOptions): ZeroCopyPlan {
  const anyCache = [...blobs.values()].some((m) => m.aliased_io.some((a) => a.kind === 'kv_cache_update'));
  if (!anyCache && !opts.strict) return { already: [], work: [], sharedArenas: new Map(), layoutShared: new Set(), noCache: true };
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
        const others = [...new Set(c.partners.map((x) => planName(planAt(program, x.plan), x.plan)))];
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
    const [p, v] = present(parseIndexPair(key), `shared buffer key ${key}`);
    const r = regionOf(tensorAt(planAt(program, p), v)!);
    if (r) layoutShared.add(`${p}:${r.arena}`);
  }

  return { already, work, sharedArenas, layoutShared };
}
