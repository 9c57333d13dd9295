// The zero-copy KV rules (docs/zero-copy-kv.md, pytorch/TensorRT#4667), in
// every method, driven from both records a zero-copy cache leaves:
//   - the delegate side: TensorRT delegates stamped `zero_copy_kv`;
//   - the buffer side: mutable buffers fed straight to a TensorRT delegate's
//     aliased input, and mutable buffers placed on a CUDA device;
// so a program where the two disagree (a stamp with no buffer behind it, a
// buffer handed over with no stamp) is caught from whichever side survived.
// Plus the file-level copy-back rule: every mutable buffer updated exactly
// once per execution, and each staged aliased output written back into the
// buffer its input was staged from.
//
// Each rule has its own code (ZERO_COPY_RULES says which rule and which
// fixture breaks it). `--zero-copy-kv` (options.requireZeroCopyKv) also
// requires every kv_cache_update alias in the program to be zero-copy.

import type { Program } from '../pte/model.js';
import { planName } from '../pte/tensor.js';
import { aliasedOutputs } from '../tensorrt/blob.js';
import { specView } from '../tensorrt/delegate-view.js';
import { sharedAcrossMethods, type MethodBuffer } from '../graph/dataflow.js';
import { HINTS } from './zero-copy-rules.js';
import { scanMethod } from './zero-copy-scan.js';
import { checkBufferSide } from './zero-copy-buffers.js';
import { checkUpdates } from './zero-copy-updates.js';
import type { CheckContext } from './context.js';
import { diag, type Diagnostic } from './diagnostic.js';

export { ZERO_COPY_CODES, ZERO_COPY_RULES, bufferPlaceholder, type ZeroCopyCode } from './zero-copy-rules.js';

function checkMethod(
  program: Program,
  p: number,
  ctx: Pick<CheckContext, 'pte' | 'trt'>,
  sharedMap: Map<string, MethodBuffer[]>,
  out: Diagnostic[],
): void {
  const s = scanMethod(program, p, ctx, sharedMap, out);
  checkBufferSide(s);
  checkUpdates(s);
}

function requireZeroCopy(ctx: Pick<CheckContext, 'pte' | 'trt'>, out: Diagnostic[]): void {
  let any = false;
  for (const t of ctx.trt) {
    const aliased = aliasedOutputs(t.blob.metadata).filter((b) =>
      t.blob.metadata.aliased_io.some((a) => a.output === b.name && a.kind === 'kv_cache_update'),
    );
    if (aliased.length === 0) continue;
    any = true;
    const stamp = specView(t.delegate).zeroCopy;
    const elided = stamp && 'names' in stamp ? stamp.names : [];
    const staged = aliased.filter((b) => !elided.includes(b.name));
    if (staged.length > 0) {
      const names = staged.map((b) => JSON.stringify(b.name)).join(', ');
      out.push(
        diag(
          ctx.pte.reportBudget,
          'error',
          'ZC_NOT_ZERO_COPY',
          t.location,
          stamp && 'error' in stamp
            ? `--zero-copy-kv: the engine's kv_cache_update outputs ${names} cannot be shown zero-copy: its zero_copy_kv spec does not parse (SPEC_ZERO_COPY_KV_INVALID)`
            : `--zero-copy-kv: the engine's kv_cache_update outputs ${names} are staged (copied to the host and back every execution)`,
          HINTS.ZC_NOT_ZERO_COPY,
          {
            method: planName(t.plan, t.planIndex),
            delegate: t.delegateIndex,
          },
        ),
      );
    }
  }
  if (!any)
    out.push(
      diag(
        ctx.pte.reportBudget,
        'warning',
        'ZC_NO_KV_CACHE',
        'program',
        '--zero-copy-kv: no TensorRT engine declares a kv_cache_update alias, so there is nothing to require',
        HINTS.ZC_NO_KV_CACHE,
      ),
    );
}

/** The zero-copy KV check family (registered in run.ts). */
export function checkZeroCopy(ctx: Pick<CheckContext, 'pte' | 'trt' | 'options'>): Diagnostic[] {
  const out: Diagnostic[] = [];
  const program = ctx.pte.program;
  const sharedMap = sharedAcrossMethods(program);
  program.executionPlan.forEach((_, p) => checkMethod(program, p, ctx, sharedMap, out));
  if (ctx.options.requireZeroCopyKv) requireZeroCopy(ctx, out);
  return out;
}
