// What each engine keeps resident and streams per execute in a verify run,
// from the budget the runner resolved for it (its report's budget: the
// option, the baked spec or automatic; clamped to the engine's streamable
// bytes; ignored by an engine not built for streaming). Only an engine that
// carries its partition (the runner's `reference-program` executor, a
// version-2 or 3 reference engine) has weights that mean something: a
// synthetic engine's are made up, so theirs are null.

import type { BudgetResolution, DelegateReport, EngineKernels } from '../runner/report.js';

export interface BudgetStreaming {
  /** Decimal strings, as the runner writes its budgets; null for an engine whose weights are made up. */
  streamable_weight_bytes: string | null;
  resident_bytes: string | null;
  streamed_bytes_per_execute: string | null;
}

/**
 * Resident and streamed bytes under the resolved budget: an engine that
 * does not stream (not built for it, the budget ignored, or no effective
 * budget) keeps every weight resident; one that streams with `effective`
 * bytes keeps min(effective, weights) and streams the rest in per execute.
 */
export function budgetStreaming(b: BudgetResolution, engine: DelegateReport['engine']): BudgetStreaming {
  if (engine !== 'reference-program') return { streamable_weight_bytes: null, resident_bytes: null, streamed_bytes_per_execute: null };
  const weights = BigInt(b.streamable_bytes);
  const all = weights.toString();
  if (!b.streaming || b.ignored !== null || b.effective === null)
    return { streamable_weight_bytes: all, resident_bytes: all, streamed_bytes_per_execute: '0' };
  const effective = BigInt(b.effective);
  const resident = effective < weights ? effective : weights;
  return { streamable_weight_bytes: all, resident_bytes: resident.toString(), streamed_bytes_per_execute: (weights - resident).toString() };
}

/**
 * What the engine's weights did in the run, as the runner counted it (ATen's
 * kernels place them: resident up to the budget, the rest copied per execute
 * into a window; src/aten/weights.h), beside the spec's arithmetic above.
 */
export interface MeasuredStreaming {
  /** What computed the engine (the runner's report); null from a runner before it. */
  kernels: EngineKernels | null;
  /** null where the kernels place no weights (ExecuTorch's CPU kernels, synthetic engines). */
  measured: {
    resident_bytes: string;
    streamed_bytes_per_execute: string;
    window_bytes: string;
    /** Counted over the run: every execute's copies. */
    streamed_bytes: string;
    executes: number;
  } | null;
}

export function measuredStreaming(d: DelegateReport): MeasuredStreaming {
  const w = d.weights ?? null;
  return {
    kernels: d.kernels ?? null,
    measured: w
      ? {
          resident_bytes: w.resident_bytes,
          streamed_bytes_per_execute: w.streamed_bytes_per_execute,
          window_bytes: w.window_bytes,
          streamed_bytes: w.streamed_bytes,
          executes: d.executes,
        }
      : null,
  };
}
