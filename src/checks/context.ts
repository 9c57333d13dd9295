// What every check sees: the opened program and, per TensorRT delegate, its
// parsed blob (read once, shared by all checks, and with the passes when the
// pipeline read them for those: CheckOptions.blobs). A blob that fails to
// parse is recorded as its diagnostic and left out of `trt`.

import type { PteFile } from '../pte/open.js';
import type { ParsedBlob } from '../tensorrt/blob.js';
import { blobOf, type DelegateBlobs } from '../tensorrt/delegate-view.js';
import { delegatesOf, isTensorRT, type DelegateRef } from '../tensorrt/delegates.js';
import { diag, type Diagnostic } from './diagnostic.js';
import type { RuntimeRules } from './runtime-rules.js';

export interface TrtDelegate extends DelegateRef {
  blob: ParsedBlob;
}

export interface CheckContext {
  pte: PteFile;
  /** Every TensorRT delegate whose blob parsed. */
  trt: TrtDelegate[];
  /** Options of the run (e.g. --zero-copy-kv requires zero-copy). */
  options: CheckOptions;
}

export interface CheckOptions {
  /** Require every KV cache to be zero-copy. */
  requireZeroCopyKv?: boolean;
  /** Whose runtime rules apply (`--runtime`); default DEFAULT_RUNTIME. */
  runtime?: RuntimeRules;
  /** The file's blobs, read already (the pipeline reads them once for its passes and its checks). */
  blobs?: DelegateBlobs;
}

export type Check = (ctx: CheckContext) => Diagnostic[] | Promise<Diagnostic[]>;

export async function buildCheckContext(
  pte: PteFile,
  options: CheckOptions = {},
): Promise<{ ctx: CheckContext; blobDiagnostics: Diagnostic[] }> {
  const trt: TrtDelegate[] = [];
  const blobDiagnostics: Diagnostic[] = [];
  for (const ref of delegatesOf(pte, isTensorRT)) {
    const read = await blobOf(pte, ref, options.blobs);
    if ('blob' in read) trt.push({ ...ref, blob: read.blob });
    else {
      const e = read.error;
      blobDiagnostics.push(
        diag(pte.reportBudget, 'error', e.code, e.location || ref.location, e.message, e.hint ?? 're-export the program', {
          method: ref.plan.name,
          delegate: ref.delegateIndex,
        }),
      );
    }
  }
  return { ctx: { pte, trt, options }, blobDiagnostics };
}
