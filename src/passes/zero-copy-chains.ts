// The zero-copy KV rewrite's chain analysis (called by zero-copy-analyse.ts):
// follows each staged cache from its `_h2d_copy` through the engines that
// update it to its `_d2h_copy` and `aten::copy_` write-back, and refuses a
// chain whose cache or copies anything else reads. Changes nothing.

import type { ExecutionPlan, Tensor } from '../pte/model.js';
import { planName, tensorAt, tensorName, valueLabel } from '../pte/tensor.js';
import { bindingLabel, inputs, outputs } from '../tensorrt/blob.js';
import { refuse, type Chain, type KvDelegate, type Link, type ZeroCopyOptions } from './zero-copy-model.js';
import {
  COPY_BACK,
  D2H_COPY,
  H2D_COPY,
  atLabel,
  copyOf,
  describeRef,
  hasDeviceArena,
  instructionAt,
  isCopyOutput,
  mutableBuffers,
  referencesOf,
  writeBackOf,
  type At,
  type Ref,
} from '../graph/dataflow.js';
import { itemAt } from '../util/present.js';

function refAt(r: Ref, at: At): boolean {
  return (r.kind === 'kernel' || r.kind === 'delegate') && r.at.chain === at.chain && r.at.instruction === at.instruction;
}

function describeReaders(plan: ExecutionPlan, rs: Ref[]): string {
  return rs.length === 0 ? 'nothing' : rs.map((r) => describeRef(plan, r)).join(', ');
}

/** What the steps of chainsOf share about one method. */
interface ChainScan {
  plan: ExecutionPlan;
  /** Every aliased input/output pair of every KV call. */
  links: Link[];
  /** The links already placed in a chain. */
  visited: Set<Link>;
  refs: Ref[][];
  refsOf: (v: number) => Ref[];
  /** Where a link's input or output binding is, for a refusal. */
  at: (l: Link, which: 'in' | 'out') => string;
}

/** The staged cache a chain starts from, once its staging copy is checked. */
interface ChainStart {
  /** The `_h2d_copy` that stages it. */
  staging: At;
  buffer: number;
  bt: Tensor;
  /** The buffer's label, for messages. */
  bl: string;
}

/** The end of a chain: the `_d2h_copy`, its host value and the `aten::copy_` write-back. */
interface ChainEnd {
  d2h: At;
  host: number;
  copy: At;
}

/** Follows each staged cache from its `_h2d_copy` through the engines that update it to its write-back. */
export function chainsOf(plan: ExecutionPlan, delegates: KvDelegate[], opts: ZeroCopyOptions): Chain[] {
  const refs = referencesOf(plan);
  const links = linksOf(delegates);
  const s: ChainScan = {
    plan,
    links,
    visited: new Set<Link>(),
    refs,
    refsOf: (v) => itemAt(refs, v, 'the references of a value'),
    at: (l, which) => `${l.dg.location} > binding ${bindingLabel(which === 'in' ? l.input : l.output)}`,
  };
  const byOut = new Map(links.map((l) => [l.outArg, l]));
  const chains: Chain[] = [];
  for (const start of links) {
    const from = stagedStart(s, start, byOut);
    if (!from) continue; // a later link of a chain
    const { chain, end } = followChain(s, start, from);
    checkChain(s, start, from, chain, end, opts);
    // One device (refused by checkChain otherwise): the first engine's.
    chains.push({
      buffer: from.buffer,
      h2d: from.staging,
      staging: start.inArg,
      links: chain,
      ...end,
      device: start.dg.device,
      partners: [],
    });
  }
  const lost = links.find((l) => !s.visited.has(l));
  if (lost) {
    refuse(
      'ZC_REWRITE_NOT_STAGED_BUFFER',
      s.at(lost, 'in'),
      `aliased input ${JSON.stringify(lost.input)} is fed ${valueLabel(plan, lost.inArg)}, which no staging copy of a mutable buffer leads to`,
    );
  }
  return chains;
}

/** One link per aliased input/output pair of each KV delegate's call. */
function linksOf(delegates: KvDelegate[]): Link[] {
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
  return links;
}

/**
 * The staged mutable buffer `start`'s input is a staging copy of, with that
 * copy read by nothing but `start`; null when `start` is fed by another
 * link (a later link of a chain). Refuses anything else.
 */
function stagedStart(s: ChainScan, start: Link, byOut: ReadonlyMap<number, Link>): ChainStart | null {
  const { plan, refs, at } = s;
  const staging = refs[start.inArg]?.find((r) => isCopyOutput(r, H2D_COPY));
  if (!staging || staging.kind !== 'kernel') {
    if (byOut.has(start.inArg)) return null;
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
  const stagingReaders = s
    .refsOf(start.inArg)
    .filter((r) => !isCopyOutput(r, H2D_COPY) && !(refAt(r, start.dg.at) && r.kind === 'delegate' && r.arg === start.inPos));
  if (stagingReaders.length > 0) {
    refuse(
      'ZC_REWRITE_OTHER_READER',
      at(start, 'in'),
      `the staging copy ${valueLabel(plan, start.inArg)} of buffer ${bl} is also read by ${describeReaders(plan, stagingReaders)}`,
    );
  }
  return { staging: staging.at, buffer, bt, bl };
}

/**
 * From `start`, each aliased output read only by the next engine's aliased
 * input, until one is read only by a `_d2h_copy` whose host value only the
 * write-back into the chain's own buffer reads. Refuses any other reader.
 */
function followChain(s: ChainScan, start: Link, from: ChainStart): { chain: Link[]; end: ChainEnd } {
  const { plan, links, visited, refsOf, at } = s;
  const { buffer, bl } = from;
  const chain: Link[] = [start];
  visited.add(start);
  let cur = start;
  for (;;) {
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
        return { chain, end: { d2h: r.at, host, copy: copy.at } };
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
}

/**
 * The whole chain: nothing but its staging copy and write-back reads the
 * buffer, its engines share one device, and several engines share it only
 * with --share-cache and a buffer name to record the decision under.
 */
function checkChain(s: ChainScan, start: Link, from: ChainStart, chain: Link[], end: ChainEnd, opts: ZeroCopyOptions): void {
  const { plan } = s;
  const { buffer, bt, bl } = from;
  const where = `${planName(plan, start.dg.p)} > ${bl}`;
  const bufferReaders = s
    .refsOf(buffer)
    .filter(
      (r) =>
        !(r.kind === 'kernel' && refAt(r, from.staging) && r.arg === 0) &&
        !(r.kind === 'kernel' && refAt(r, end.copy) && r.op === COPY_BACK && r.arg !== 1),
    );
  if (bufferReaders.length > 0) {
    refuse(
      'ZC_REWRITE_OTHER_READER',
      where,
      `cache ${bl} is also read by ${describeReaders(plan, bufferReaders)}; once it lives on the device only its engine may read it`,
    );
  }
  const devices = [...new Set(chain.map((l) => l.dg.device))];
  if (devices.length > 1) {
    refuse(
      'ZC_REWRITE_DEVICE_CONFLICT',
      where,
      `cache ${bl} is updated by engines on ${devices.map((d) => `cuda:${d}`).join(' and ')} (${chain.map((l) => l.dg.location).join(', ')})`,
    );
  }
  if (chain.length > 1) {
    const who = chain.map((l) => l.dg.location).join(' then ');
    if (!opts.shareCache)
      refuse('ZC_REWRITE_SHARED_DELEGATES', where, `cache ${bl} is shared by ${chain.length} delegates (${who}): each updates it in turn`);
    if (tensorName(bt) === null)
      refuse(
        'ZC_REWRITE_SHARED_DELEGATES',
        where,
        `cache ${bl} is shared by ${who}, and the decision cannot be recorded: the buffer has no fully_qualified_name`,
      );
  }
}
