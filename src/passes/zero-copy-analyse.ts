// The zero-copy KV rewrite's analysis: which delegates have staged caches,
// each cache's chain (buffer -> _h2d_copy -> delegate -> _d2h_copy ->
// aten::copy_), and every refusal, before anything is changed. A program
// this accepts is rewritten by src/passes/zero-copy-apply.ts.

import { chainsOf } from './zero-copy-chains.js';
import { checkSharedArenas } from './zero-copy-shared.js';
import type { Program } from '../pte/model.js';
import { planName, tensorAt, valueLabel } from '../pte/tensor.js';
import { aliasedOutputs, bindingLabel, inputs, outputs } from '../tensorrt/blob.js';
import { specView } from '../tensorrt/delegate-view.js';
import { delegateLocation, isTensorRT } from '../tensorrt/delegates.js';
import {
  blobKey,
  refuse,
  type BlobTable,
  type KvDelegate,
  type MethodWork,
  type ZeroCopyDelegate,
  type ZeroCopyOptions,
} from './zero-copy-model.js';
import {
  atLabel,
  bindArgs,
  delegateDevice,
  instructionsOf,
  parseIndexPair,
  planAt,
  regionOf,
  sharedAcrossMethods,
  type DelegateCall,
} from '../graph/dataflow.js';
import { present } from '../util/present.js';

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && new Set(a).size === a.length && a.every((x) => b.includes(x));

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
