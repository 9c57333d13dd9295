// What a set of per-engine weight-streaming budgets can add up to. The budget
// applies to each engine on its own and every delegate of a loaded method is
// initialized together, so N engines can hold N budgets resident at once.
// One wording for `trtx check` and `trtx rewrite --budget`.

import { formatIEC } from '../util/size.js';

export interface EngineBudget {
  /** Method the engine belongs to. */
  method: string;
  budget: bigint;
}

export interface ResidentBudget {
  engines: number;
  total: bigint;
  /** "3 engines x 8 GiB = 24 GiB may be resident" */
  line: string;
}

export function residentBudget(entries: readonly EngineBudget[]): ResidentBudget {
  const total = entries.reduce((n, e) => n + e.budget, 0n);
  const n = entries.length;
  const uniform = entries.every((e) => e.budget === entries[0]?.budget);
  const terms = uniform
    ? `${n} engine${n === 1 ? '' : 's'} x ${formatIEC(entries[0]?.budget ?? 0n)}`
    : `${n} engines, ${entries.map((e) => formatIEC(e.budget)).join(' + ')}`;
  const methods = new Set(entries.map((e) => e.method)).size;
  // Methods load separately; the sum is only reached with all of them loaded.
  const when = methods > 1 ? ` when all ${methods} methods are loaded` : '';
  return { engines: n, total, line: `${terms} = ${formatIEC(total)} may be resident${when}` };
}

/**
 * What one engine keeps on the device and streams, under the budget its
 * delegate bakes (docs/runtime-contracts.md): an explicit budget is clamped
 * to the engine's streamable weights, so min(budget, weights) stays
 * resident and the rest streams in on every execute; an engine not built
 * for streaming keeps every weight resident and ignores a budget; with no
 * budget TensorRT sizes it at load, so neither is known before.
 */
export interface EngineStreaming {
  weight_streaming: boolean;
  streamable_weight_bytes: bigint;
  /** The baked weight_streaming_budget; null: automatic (none, or one that does not read). */
  budget_bytes: bigint | null;
  /** Weight bytes resident on the device; null when TensorRT decides at load (automatic). */
  resident_bytes: bigint | null;
  /** Weight bytes streamed in per execute; null when TensorRT decides at load. */
  streamed_bytes_per_execute: bigint | null;
}

export function engineStreaming(
  engine: { weightStreaming: boolean; streamableWeightBytes: bigint },
  budget: bigint | undefined,
): EngineStreaming {
  const weights = engine.streamableWeightBytes;
  const base = { weight_streaming: engine.weightStreaming, streamable_weight_bytes: weights, budget_bytes: budget ?? null };
  if (!engine.weightStreaming) return { ...base, resident_bytes: weights, streamed_bytes_per_execute: 0n };
  if (budget === undefined) return { ...base, resident_bytes: null, streamed_bytes_per_execute: null };
  const resident = budget < weights ? budget : weights;
  return { ...base, resident_bytes: resident, streamed_bytes_per_execute: weights - resident };
}

/** "weights 1.25 GiB streamable; budget 512 MiB: 512 MiB resident, 768 MiB streamed per execute". */
export function streamingLine(s: EngineStreaming): string {
  const w = formatIEC(s.streamable_weight_bytes);
  if (!s.weight_streaming) return `weights ${w}, all resident: not built for weight streaming (a budget is ignored)`;
  if (s.budget_bytes === null) return `weights ${w} streamable; budget automatic: TensorRT sizes what stays resident at load`;
  const streamed = s.streamed_bytes_per_execute ?? 0n;
  return `weights ${w} streamable; budget ${formatIEC(s.budget_bytes)}: ${formatIEC(s.resident_bytes ?? 0n)} resident, ${
    streamed > 0n ? `${formatIEC(streamed)} streamed per execute` : 'nothing streamed (the budget holds every weight)'
  }`;
}
