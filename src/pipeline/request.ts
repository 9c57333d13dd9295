// What a rewrite is asked to do, and the passes that do it. Every command
// that changes a program (`rewrite`, `export`, `demo`, and `verify` deriving
// its zero-copy twin) states a RewriteRequest; planPasses turns it into the
// passes, always in one order: the budget, then zero-copy KV. On a delegate
// that carries neither spec yet, that order appends them as Torch-TensorRT's
// partitioner writes them (weight_streaming_budget before zero_copy_kv:
// py/torch_tensorrt/executorch/partitioner.py).
//
// A new transformation is a pass in src/passes/, a field here and one entry
// in planPasses; the commands then only say when to ask for it.

import type { BudgetRequest } from '../passes/budget.js';
import { budgetPass } from '../passes/budget.js';
import type { Pass } from '../passes/pass.js';
import { blobTableOf, zeroCopyKvPass, type ZeroCopyOptions } from '../passes/zero-copy.js';
import type { DelegateBlobs } from '../tensorrt/delegate-view.js';

// Callers read the reports through the pipeline: only it imports the passes.
export type { PassReport } from '../passes/pass.js';
export { isZeroCopyReport, type ZeroCopyDetails } from '../passes/zero-copy.js';

export interface RewriteRequest {
  /** Set (bytes) or remove (null) weight_streaming_budget, optionally narrowed to a method or a delegate. */
  budget?: BudgetRequest;
  /** Un-stage the KV caches (docs/zero-copy-kv.md); the check after it then requires zero-copy. */
  zeroCopyKv?: ZeroCopyOptions;
}

export interface PlannedPass {
  name: 'budget' | 'zero-copy-kv';
  /** Makes the pass once the input is open: a pass may read what the file holds (the engines' metadata, read once by the pipeline). */
  make(blobs: DelegateBlobs): Pass;
}

/** The passes `request` asks for, in the order they run. */
export function planPasses(request: RewriteRequest): PlannedPass[] {
  const passes: PlannedPass[] = [];
  const { budget, zeroCopyKv } = request;
  if (budget) passes.push({ name: 'budget', make: () => budgetPass(budget) });
  if (zeroCopyKv) passes.push({ name: 'zero-copy-kv', make: (blobs) => zeroCopyKvPass(blobTableOf(blobs), zeroCopyKv) });
  return passes;
}
