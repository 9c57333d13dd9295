// What `trtx inspect` reports about one delegate: where its data lies, its
// compile specs (raw and decoded), and for a TensorRT blob its header,
// bindings and aliases and what its engine is (a TensorRT plan or a trtx
// reference engine). Only the blob's header and metadata are read.

import type { PteFile } from '../pte/open.js';
import { decodeCompileSpecs, showBytes } from '../tensorrt/compile-specs.js';
import { canonicalTargetDevice } from '../tensorrt/target-device.js';
import { readDelegate, type DelegateRef } from '../tensorrt/delegates.js';
import { delegateEngine, type EngineDetail } from '../tensorrt/engine-kind.js';
import type { ParsedBlob } from '../tensorrt/blob.js';
import { specView } from '../tensorrt/delegate-view.js';
import { engineStreaming, type EngineStreaming } from '../tensorrt/resident.js';
import { formatIEC } from '../util/size.js';
import { shortName } from '../util/display.js';
import type { z } from 'zod';
import type * as json from './report-json.js';

// The types are the zod schemas' (report-json.ts), which the JSON Schema is generated from.
export type SpecSummary = z.infer<typeof json.SpecSummary>;
export type DelegateSummary = z.infer<typeof json.DelegateSummary>;

/** EngineStreaming with its byte counts as JSON numbers (a weight size fits a double exactly below 8 PiB). */
type JsonStreaming = {
  [K in keyof EngineStreaming]: EngineStreaming[K] extends bigint
    ? number
    : EngineStreaming[K] extends bigint | null
      ? number | null
      : EngineStreaming[K];
};

function jsonStreaming(s: EngineStreaming): JsonStreaming {
  const n = (v: bigint | null) => (v === null ? null : Number(v));
  return {
    weight_streaming: s.weight_streaming,
    streamable_weight_bytes: Number(s.streamable_weight_bytes),
    budget_bytes: n(s.budget_bytes),
    resident_bytes: n(s.resident_bytes),
    streamed_bytes_per_execute: n(s.streamed_bytes_per_execute),
  };
}

function specSummary(spec: { key: string | null; value: Uint8Array }, location: string): SpecSummary {
  const out: SpecSummary = { key: spec.key, size: spec.value.length, raw: showBytes(spec.value) };
  const { specs, diagnostics } = decodeCompileSpecs([spec], { location });
  const error = diagnostics.find((d) => d.severity === 'error');
  if (error) out.error = error.message;
  if (specs.target !== undefined) out.decoded = { target_device: canonicalTargetDevice(specs.target) };
  if (specs.weightStreamingBudget !== undefined) {
    out.decoded = { budget_bytes: specs.weightStreamingBudget.toString(), budget_iec: formatIEC(specs.weightStreamingBudget) };
  }
  if (specs.zeroCopyKv !== undefined) out.decoded = { zero_copy_kv: specs.zeroCopyKv };
  return out;
}

/** The summary of the delegate `ref` names; what its engine is goes to `kinds` (the census of the report). */
export async function delegateSummary(pte: PteFile, ref: DelegateRef, kinds: EngineDetail[]): Promise<DelegateSummary> {
  const d = ref.delegate;
  const summary: DelegateSummary = {
    index: ref.delegateIndex,
    backend_id: d.id,
    data: { error: '' },
    compile_specs: d.compileSpecs.map((s) => specSummary(s, ref.location)),
  };
  const { place, blob } = await readDelegate(pte, ref);
  summary.data = 'error' in place ? place : { location: place.location, index: place.index, size: place.size };
  if (blob && 'error' in blob) {
    summary.tensorrt = blob;
    kinds.push({ kind: 'unknown', engine: null });
  } else if (blob) {
    const detail = await tensorrtSummary(pte, ref, blob);
    kinds.push(detail.engine);
    summary.tensorrt = detail.summary;
  }
  return summary;
}

async function tensorrtSummary(
  pte: PteFile,
  ref: DelegateRef,
  blob: ParsedBlob,
): Promise<{ summary: NonNullable<DelegateSummary['tensorrt']>; engine: EngineDetail }> {
  const m = blob.metadata;
  pte.reportBudget.chargeReport(
    m.io_bindings.reduce((n, b) => n + Math.min(b.name.length, 240) + 16, 64),
    ref.location,
  );
  const detail = await delegateEngine(pte, ref, blob);
  const e = detail.engine;
  const p = e?.program;
  const summary = {
    magic: blob.magic,
    engine_size: Number(blob.engineSize),
    engine: detail.kind,
    reference: e
      ? {
          version: e.version,
          synthetic: !p,
          program: p
            ? { instructions: p.instructions, operators: p.operators, weight_bytes: p.weightBytes, program_bytes: p.programBytes }
            : null,
          streaming: jsonStreaming(engineStreaming(e, specView(ref.delegate).specs.weightStreamingBudget)),
        }
      : null,
    inputs: m.io_bindings.filter((b) => b.is_input).map((b) => shortName(b.name)),
    outputs: m.io_bindings.filter((b) => !b.is_input).map((b) => shortName(b.name)),
    aliased: m.aliased_io.map((a) => ({ output: shortName(a.output), input: shortName(a.input), kind: a.kind })),
  };
  return { summary, engine: detail };
}
