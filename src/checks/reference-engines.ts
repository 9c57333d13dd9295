// trtx reference engines against their blobs (schemas/reference-engine.md,
// docs/reference-lowering.md §1): each engine decodes (a version-2 engine's
// program with trtx's own .pte decoder, under its decode budget), a
// version-1 (synthetic) engine's steps fit the bindings, and a version-2
// engine's program takes the input bindings and returns the output bindings.
// TensorRT plans are not read here (only their first 8 bytes, to know them).

import { planName } from '../pte/tensor.js';
import { readEngineKind, readReferenceEngine } from '../tensorrt/engine-kind.js';
import { checkEngineBindings } from '../tensorrt/reference-engine-bindings.js';
import type { ReferenceEngine } from '../tensorrt/reference-engine.js';
import { programArityMismatch } from '../tensorrt/reference-program.js';
import { isTrtxError } from '../util/errors.js';
import type { CheckContext } from './context.js';
import { diag, type Diagnostic } from './diagnostic.js';

export const REFERENCE_PROGRAM_ARITY_HINT =
  're-export the program (`trtx export --engine reference`): the partition\u2019s program must take the engine\u2019s input bindings and return its output bindings, in order';

export async function checkReferenceEngines(ctx: Pick<CheckContext, 'pte' | 'trt'>): Promise<Diagnostic[]> {
  const out: Diagnostic[] = [];
  for (const d of ctx.trt) {
    const where = { method: planName(d.plan, d.planIndex), delegate: d.delegateIndex };
    const bindings = d.blob.metadata.io_bindings;
    let engine: ReferenceEngine;
    try {
      if ((await readEngineKind(ctx.pte, d, d.blob)) !== 'reference') continue;
      engine = await readReferenceEngine(ctx.pte, d, d.blob);
      if (!engine.program) checkEngineBindings(engine, bindings, { location: `${d.location} > engine` });
    } catch (e) {
      if (!isTrtxError(e)) throw e;
      out.push(diag(ctx.pte.reportBudget, 'error', e.code, e.location || d.location, e.message, e.hint ?? 're-export the program', where));
      continue;
    }
    const wrong = engine.program && programArityMismatch(engine.program, bindings);
    if (wrong)
      out.push(
        diag(
          ctx.pte.reportBudget,
          'error',
          'TRT_REFERENCE_PROGRAM_ARITY',
          `${d.location} > engine > program`,
          wrong,
          REFERENCE_PROGRAM_ARITY_HINT,
          where,
        ),
      );
  }
  return out;
}
