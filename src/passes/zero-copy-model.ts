// The zero-copy KV rewrite's vocabulary: what it may be asked (options),
// what it refuses with (codes and their hints), what it found and did
// (ZeroCopyResult), and the analysis's records of one delegate, one staged
// cache and one method (KvDelegate, Chain, MethodWork). src/passes/zero-copy.ts
// says what the rewrite does.

import type { RewriteCode } from '../codes/index.js';
import type { ExecutionPlan } from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { stagingBytes } from '../graph/staging.js';
import type { BlobMetadata } from '../tensorrt/blob.js';
import { readDelegateBlobs, type DelegateBlobs } from '../tensorrt/delegate-view.js';
import { TrtxError } from '../util/errors.js';
import { type At, type DelegateCall } from '../graph/dataflow.js';

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

export function refuse(code: ZeroCopyRewriteCode, location: string, message: string): never {
  throw new TrtxError(code, location, message, { hint: HINTS[code] });
}

export interface ZeroCopyOptions {
  /** Allow caches two delegates or two methods share, recording the decision (shared_kv_cache). */
  shareCache?: boolean;
  /**
   * Refuse (ZC_REWRITE_NO_ALIASED_CACHE) a program whose engines declare no
   * KV cache; without it such a program is left as it is, with a note, so one
   * CI job can run the same lines over every model of a team.
   */
  strict?: boolean;
}

/** Parsed metadata of every TensorRT delegate, keyed blobKey(plan, delegate). */
export type BlobTable = ReadonlyMap<string, BlobMetadata>;
export const blobKey = (plan: number, delegate: number) => `${plan}/${delegate}`;

/** The metadata of every blob read (readDelegateBlobs). A blob that does not parse is refused with its own code, the first in file order. */
export function blobTableOf(blobs: DelegateBlobs): Map<string, BlobMetadata> {
  const out = new Map<string, BlobMetadata>();
  for (const { planIndex, delegateIndex, read } of blobs.entries) {
    if ('error' in read) throw read.error;
    out.set(blobKey(planIndex, delegateIndex), read.blob.metadata);
  }
  return out;
}

/** Reads every TensorRT blob's header and metadata (never an engine), refusing as blobTableOf. */
export async function readTrtBlobs(pte: PteFile): Promise<Map<string, BlobMetadata>> {
  return blobTableOf(await readDelegateBlobs(pte));
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
  /** No TensorRT delegate declares a kv_cache_update alias: nothing to make zero-copy (non-strict). */
  noCache: { delegates: number } | null;
  rewritten: ZeroCopyDelegate[];
  /** Delegates that were zero-copy already. */
  already: ZeroCopyDelegate[];
  methods: ZeroCopyMethod[];
  /** Per rewritten method (plan index): old value index -> new (-1: removed). */
  valueMaps: Map<number, Int32Array>;
}

// ---------------------------------------------------------------------------
// What the analysis finds (src/passes/zero-copy-analyse.ts) and the editing uses

export interface KvDelegate {
  p: number;
  plan: ExecutionPlan;
  d: number;
  meta: BlobMetadata;
  location: string;
  device: number;
  call: DelegateCall;
  at: At;
}

export interface Link {
  dg: KvDelegate;
  output: string;
  input: string;
  inPos: number;
  outPos: number;
  inArg: number;
  outArg: number;
}

export interface Chain {
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

export interface MethodWork {
  p: number;
  plan: ExecutionPlan;
  chains: Chain[];
  delegates: KvDelegate[];
}
