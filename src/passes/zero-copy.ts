// `trtx rewrite --zero-copy-kv [--share-cache]`: un-stages the KV caches of
// a finished program (docs/zero-copy-kv.md; what Torch-TensorRT's
// `_zero_copy.py` does at export in pytorch/TensorRT#4667).
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

import type { Pass, PassReport } from './pass.js';
import type { BlobTable, ZeroCopyOptions } from './zero-copy-model.js';
import { applyZeroCopyKv } from './zero-copy-apply.js';
import { describeZeroCopy, detailsOf, type ZeroCopyDetails } from './zero-copy-report.js';

export { ZERO_COPY_REWRITE_CODES, blobTableOf, readTrtBlobs } from './zero-copy-model.js';
export type {
  BlobTable,
  ZeroCopyDelegate,
  ZeroCopyMethod,
  ZeroCopyOptions,
  ZeroCopyResult,
  ZeroCopyRewriteCode,
} from './zero-copy-model.js';
export { applyZeroCopyKv } from './zero-copy-apply.js';
export { describeZeroCopy, isZeroCopyReport, type ZeroCopyDetails } from './zero-copy-report.js';

/** The rewrite pass for `--zero-copy-kv`; `blobs` from readTrtBlobs (or blobTableOf) on the input file. */
export function zeroCopyKvPass(blobs: BlobTable, opts: ZeroCopyOptions = {}): Pass {
  return (program): PassReport<ZeroCopyDetails> => {
    const r = applyZeroCopyKv(program, blobs, opts);
    return { pass: 'zero-copy-kv', changed: r.changed, lines: describeZeroCopy(r), warnings: [], details: detailsOf(r, opts) };
  };
}
