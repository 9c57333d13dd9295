// Many TensorRT delegates naming one blob. ExecuTorch's emitter shares one
// processed blob between delegates whose lowered bytes are equal, so a few
// names for one blob are sound; trtx reads such a blob once
// (tensorrt/blob-once.ts). But the runtime initialises every delegate on its
// own, deserialising the engine once per delegate, and a file that names one
// segment from a hundred delegates is either hostile or about to hold its
// engine a hundred times on the GPU (issue 43: 129 delegates on one segment
// of 60 MiB metadata). Past SHARED_BLOB_WARN_OVER names, one warning per blob.

import { planName } from '../pte/tensor.js';
import { blobPlace, delegatesOf, isTensorRT, type DelegateRef } from '../tensorrt/delegates.js';
import { TrtxError } from '../util/errors.js';
import type { ReportBudget } from '../util/report-budget.js';
import type { PteFile } from '../pte/open.js';
import { diag, type Diagnostic } from './diagnostic.js';

/** More TensorRT delegates than this on one blob is a finding. */
export const SHARED_BLOB_WARN_OVER = 8;

export const SHARED_SEGMENT_HINT =
  'export each partition once and call it from every place that runs it; if the file was not written by ExecuTorch, do not load it';

function placeKey(pte: PteFile, ref: DelegateRef): string | null {
  try {
    const p = blobPlace(pte, ref);
    return p.location === 'segment' ? `segment ${p.index}` : `backend_delegate_data[${p.index}]`;
  } catch (e) {
    if (e instanceof TrtxError) return null; // a dangling reference is the blob read's finding
    throw e;
  }
}

/** One TRT_SHARED_SEGMENT warning per blob that more than SHARED_BLOB_WARN_OVER TensorRT delegates name. */
export function sharedBlobChecks(pte: PteFile, budget: ReportBudget): Diagnostic[] {
  const byBlob = new Map<string, DelegateRef[]>();
  for (const ref of delegatesOf(pte, isTensorRT)) {
    const key = placeKey(pte, ref);
    if (key === null) continue;
    const list = byBlob.get(key);
    if (list) list.push(ref);
    else byBlob.set(key, [ref]);
  }
  const out: Diagnostic[] = [];
  for (const [key, refs] of byBlob) {
    const [first] = refs;
    if (first === undefined || refs.length <= SHARED_BLOB_WARN_OVER) continue;
    const methods = new Set(refs.map((r) => planName(r.plan, r.planIndex)));
    out.push(
      diag(
        budget,
        'warning',
        'TRT_SHARED_SEGMENT',
        key,
        `${refs.length} TensorRT delegates (in ${methods.size} method${methods.size === 1 ? '' : 's'}, first ${first.location}) name ${key}: trtx reads it once, the runtime loads its engine once per delegate`,
        SHARED_SEGMENT_HINT,
        { method: planName(first.plan, first.planIndex), delegate: first.delegateIndex },
      ),
    );
  }
  return out;
}
