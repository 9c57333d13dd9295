// trtx reference engines against their blobs (schemas/reference-engine.md,
// docs/reference-lowering.md §1): each engine decodes (a version-2 or 3
// engine's program with trtx's own .pte decoder, under its decode budget;
// its header and flatbuffer only), a version-1 (synthetic) engine's steps fit
// the bindings, and a version-2 or 3 engine's program takes the input
// bindings and returns the output bindings. A version-3 engine's weights are
// the outer program's named data (docs/reference-lowering.md section 1): every external
// weight must be there, at the tensor's size, or ExecuTorch's load fails
// with NotFound (or reads another weight's bytes). And a budget that is at
// least the engine's streamable weights streams nothing.
// TensorRT plans are not read here (only their first 8 bytes, to know them).

import { planName } from '../pte/tensor.js';
import type { PteFile } from '../pte/open.js';
import { specView } from '../tensorrt/delegate-view.js';
import { namedDataSizes, readEngineKind, readStandinEngine } from '../tensorrt/engine-kind.js';
import { checkEngineBindings } from '../tensorrt/standin-engine-bindings.js';
import type { StandinEngine } from '../tensorrt/standin-engine.js';
import { PROGRAM_METHOD, programArityMismatch, type ExternalWeight } from '../tensorrt/standin-program.js';
import { isTrtxError } from '../util/errors.js';
import { formatIEC } from '../util/size.js';
import type { CheckContext, TrtDelegate } from './context.js';
import { diag, type Diagnostic } from './diagnostic.js';

export const REFERENCE_PROGRAM_ARITY_HINT =
  're-export the program (`trtx export --engine reference`): the partition\u2019s program must take the engine\u2019s input bindings and return its output bindings, in order';
export const REFERENCE_EXTERNAL_WEIGHT_HINT =
  're-export the program (`trtx export --engine reference`): each external weight of a version-3 engine is the outer program\u2019s named data under the tensor\u2019s fully_qualified_name, at the tensor\u2019s size; a rewrite that dropped named data must keep it';
export const REFERENCE_PROGRAM_DELEGATED_HINT =
  're-export the program (`trtx export --engine reference`): the partition\u2019s program must run on kernels only (no delegate, no delegate call), as the lowering writes it';
export const BUDGET_STREAMS_NOTHING_HINT =
  'a budget below the engine\u2019s streamable weights streams the rest per execute; at or above them the whole engine stays resident (`trtx rewrite --budget SIZE` to stream, `--clear-budget` for automatic)';

type Where = { method: string; delegate: number };

/** What is wrong with one external weight against the outer program's named data; null when it is there at its size. */
function externalWeightFault(w: ExternalWeight, sizes: ReadonlyMap<string, number>): string | null {
  if (w.key === null)
    return `EXTERNAL constant ${w.where} has no fully_qualified_name: ExecuTorch finds an external weight by it, and there is none to find`;
  const size = sizes.get(w.key);
  const key = JSON.stringify(w.key);
  if (size === undefined)
    return `external weight ${key} (${w.where}) is not in the program's named data: ExecuTorch's load of the engine fails with NotFound`;
  if (w.nbytes !== null && BigInt(size) !== w.nbytes)
    return `external weight ${key} (${w.where}) is ${w.nbytes} bytes but its named data is ${size} bytes`;
  return null;
}

function externalWeightChecks(pte: PteFile, d: TrtDelegate, engine: StandinEngine, where: Where): Diagnostic[] {
  const weights = engine.program?.externalWeights ?? [];
  if (!weights.length) return [];
  const sizes = namedDataSizes(pte);
  const out: Diagnostic[] = [];
  for (const w of weights) {
    const fault = externalWeightFault(w, sizes);
    if (fault)
      out.push(
        diag(
          pte.reportBudget,
          'error',
          'TRT_REFERENCE_EXTERNAL_WEIGHT',
          `${d.location} > engine > program > ${w.where}`,
          fault,
          REFERENCE_EXTERNAL_WEIGHT_HINT,
          where,
        ),
      );
  }
  return out;
}

/**
 * A budget at or above what the engine can stream keeps every weight
 * resident: a warning, since the user asked for streaming. Only of an engine
 * that carries its partition (version 2 or 3): a synthetic engine's
 * streamable size is as made up as its function.
 */
function streamsNothing(pte: PteFile, d: TrtDelegate, engine: StandinEngine, where: Where): Diagnostic[] {
  const budget = specView(d.delegate).specs.weightStreamingBudget;
  const weights = engine.streamableWeightBytes;
  if (budget === undefined || !engine.program || !engine.weightStreaming || budget < weights) return [];
  return [
    diag(
      pte.reportBudget,
      'warning',
      'TRT_BUDGET_STREAMS_NOTHING',
      `${d.location} > compile_specs (weight_streaming_budget)`,
      `streams nothing; the budget is larger than the weights: weight_streaming_budget ${formatIEC(budget)} (${budget} bytes) >= the engine's ${formatIEC(weights)} (${weights} bytes) of streamable weights, so all of them stay resident`,
      BUDGET_STREAMS_NOTHING_HINT,
      where,
    ),
  ];
}

export async function checkStandinEngines(ctx: Pick<CheckContext, 'pte' | 'trt'>): Promise<Diagnostic[]> {
  const out: Diagnostic[] = [];
  for (const d of ctx.trt) {
    const where = { method: planName(d.plan, d.planIndex), delegate: d.delegateIndex };
    const bindings = d.blob.metadata.io_bindings;
    let engine: StandinEngine;
    try {
      if ((await readEngineKind(ctx.pte, d, d.blob)) !== 'reference') continue;
      engine = await readStandinEngine(ctx.pte, d, d.blob);
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
    // The runner refuses a delegated partition when it loads the engine (EngineFormat); check says so first (issue 43).
    if (engine.program && engine.program.delegates > 0)
      out.push(
        diag(
          ctx.pte.reportBudget,
          'error',
          'TRT_REFERENCE_PROGRAM_DELEGATED',
          `${d.location} > engine > program`,
          `the partition's program is itself delegated (${engine.program.delegates} delegate(s) and delegate calls in method ${PROGRAM_METHOD}); the runtime runs an engine's program on kernels only and refuses it when it loads the engine`,
          REFERENCE_PROGRAM_DELEGATED_HINT,
          where,
        ),
      );
    out.push(...externalWeightChecks(ctx.pte, d, engine, where), ...streamsNothing(ctx.pte, d, engine, where));
  }
  return out;
}
