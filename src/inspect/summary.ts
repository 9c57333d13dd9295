// What `trtx inspect` reports about a program, as data (schemas/inspect.schema.json).
// Only headers, the program and delegate blob metadata are read, never
// segment bodies, so the cost does not grow with engine or weight bytes.

import type { PteFile } from '../pte/open.js';
import type { ExecutionPlan, Tensor } from '../pte/model.js';
import { arenaDevice, deviceLabel, placement, scalarTypeName, taggedDevice, tensorAt, tensorName } from '../pte/tensor.js';
import { decodeCompileSpecs, showBytes } from '../tensorrt/compile-specs.js';
import { canonicalTargetDevice } from '../tensorrt/target-device.js';
import { delegatesOf, readDelegate } from '../tensorrt/delegates.js';
import { countEngines, delegateEngine, type EngineCensus, type EngineDetail, type EngineKind } from '../tensorrt/engine-kind.js';
import { formatIEC } from '../util/size.js';
import { stagingBytes } from '../graph/staging.js';
import { shortName, shortNameOrNull } from '../util/display.js';
import type { ReportBudget } from '../util/report-budget.js';

export interface TensorSummary {
  index: number;
  name: string | null;
  dtype: string;
  shape: number[];
  device: string;
}

export interface SpecSummary {
  key: string | null;
  size: number;
  /** Printable form of the raw value. */
  raw: string;
  decoded?: { target_device?: string; budget_bytes?: string; budget_iec?: string; zero_copy_kv?: string[] };
  error?: string;
}

export interface DelegateSummary {
  index: number;
  backend_id: string | null;
  data: { location: 'inline' | 'segment'; index: number; size: number } | { error: string };
  compile_specs: SpecSummary[];
  tensorrt?:
    | {
        magic: string;
        engine_size: number;
        /** A TensorRT plan, a trtx reference engine (runs in trtx verify, not on TensorRT), or neither. */
        engine: EngineKind;
        /** A reference engine that decodes: version 2 (the partition as an ExecuTorch program) or 1 (synthetic); null otherwise. */
        reference: {
          version: number;
          synthetic: boolean;
          program: { instructions: number; operators: number; weight_bytes: number; program_bytes: number } | null;
        } | null;
        inputs: string[];
        outputs: string[];
        aliased: { output: string; input: string; kind: string }[];
      }
    | { error: string };
}

export interface MethodSummary {
  name: string | null;
  inputs: TensorSummary[];
  outputs: TensorSummary[];
  values: Record<string, number>;
  instructions: Record<string, number>;
  operators: { name: string | null; overload: string | null; calls: number }[];
  arenas: { index: number; size: number; device: string }[];
  delegates: DelegateSummary[];
  staging: { host_to_device_bytes: number; device_to_host_bytes: number; copies: number };
}

export interface InspectReport {
  schema: 'trtx.inspect/1';
  file: string;
  file_size: number;
  header: {
    root_offset: number;
    file_identifier: string;
    extended_header: {
      magic: string;
      length: number;
      program_size: number;
      segment_base_offset: number;
      segment_data_size: number | null;
    } | null;
  };
  program: { version: number; methods: number; constant_data_bytes: number; segments: { index: number; offset: number; size: number }[] };
  /** What the TensorRTBackend delegates of the methods shown hold. */
  engines: EngineCensus;
  methods: MethodSummary[];
}

function tensorSummary(plan: ExecutionPlan, index: number, budget: ReportBudget): TensorSummary {
  const t: Tensor | null = tensorAt(plan, index);
  if (!t) {
    budget.chargeReport(96, `${plan.name ?? 'method'} > value %${index}`);
    return { index, name: null, dtype: plan.values[index]?.type ?? 'missing', shape: [], device: '-' };
  }
  const name = shortNameOrNull(tensorName(t));
  // Charged before any work: a shape is printed whole, once per reference.
  budget.chargeReport((name?.length ?? 0) + 96 + 2 * t.sizes.length, `${plan.name ?? 'method'} > value %${index}`);
  const place = placement(plan, t);
  return {
    index,
    name,
    dtype: scalarTypeName(t.scalarType).toLowerCase(),
    shape: t.sizes,
    device: deviceLabel(place ? place.device : taggedDevice(t)),
  };
}

function count<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
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

/** Constant bytes: the constant segment's size, or the legacy inline buffers. */
function constantBytes(pte: PteFile): number {
  const inline = pte.program.constantBuffer.reduce((n, b) => n + b.storage.length, 0);
  const cs = pte.program.constantSegment;
  const seg = cs && cs.offsets.length > 0 ? (pte.segments[cs.segmentIndex]?.size ?? 0) : 0;
  return inline + seg;
}

export async function summarize(pte: PteFile, opts: { method?: string } = {}): Promise<InspectReport> {
  const eh = pte.header.extended;
  const refs = new Map(delegatesOf(pte).map((r) => [`${r.planIndex}/${r.delegateIndex}`, r]));
  const methods: MethodSummary[] = [];
  const kinds: EngineDetail[] = [];
  for (const [planIndex, plan] of pte.program.executionPlan.entries()) {
    if (opts.method !== undefined && plan.name !== opts.method) continue;
    const instructions = plan.chains.flatMap((c) => c.instructions);
    const calls = new Map<number, number>();
    for (const i of instructions) if (i.type === 'KernelCall') calls.set(i.opIndex, (calls.get(i.opIndex) ?? 0) + 1);
    const delegates: DelegateSummary[] = [];
    for (const [index, d] of plan.delegates.entries()) {
      const ref = refs.get(`${planIndex}/${index}`)!;
      const summary: DelegateSummary = {
        index,
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
        const m = blob.metadata;
        pte.reportBudget.chargeReport(
          m.io_bindings.reduce((n, b) => n + Math.min(b.name.length, 240) + 16, 64),
          ref.location,
        );
        const detail = await delegateEngine(pte, ref, blob);
        kinds.push(detail);
        const e = detail.engine;
        const p = e?.program;
        summary.tensorrt = {
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
              }
            : null,
          inputs: m.io_bindings.filter((b) => b.is_input).map((b) => shortName(b.name)),
          outputs: m.io_bindings.filter((b) => !b.is_input).map((b) => shortName(b.name)),
          aliased: m.aliased_io.map((a) => ({ output: shortName(a.output), input: shortName(a.input), kind: a.kind })),
        };
      }
      delegates.push(summary);
    }
    methods.push({
      name: plan.name,
      inputs: plan.inputs.map((i) => tensorSummary(plan, i, pte.reportBudget)),
      outputs: plan.outputs.map((i) => tensorSummary(plan, i, pte.reportBudget)),
      values: count(plan.values, (v) => v.type),
      instructions: count(instructions, (i) => i.type),
      operators: plan.operators.map((o, i) => ({
        name: shortNameOrNull(o.name),
        overload: shortNameOrNull(o.overload),
        calls: calls.get(i) ?? 0,
      })),
      arenas: plan.nonConstBufferSizes.map((size, index) => ({
        index,
        size: Number(size),
        device: index === 0 ? 'reserved' : deviceLabel(arenaDevice(plan, index)),
      })),
      delegates,
      staging: stagingBytes(plan),
    });
  }
  return {
    schema: 'trtx.inspect/1',
    file: pte.path,
    file_size: pte.fileSize,
    header: {
      root_offset: pte.header.rootOffset,
      file_identifier: pte.header.identifier,
      extended_header: eh && {
        magic: eh.magic,
        length: eh.length,
        program_size: eh.programSize,
        segment_base_offset: eh.segmentBaseOffset,
        segment_data_size: eh.segmentDataSize,
      },
    },
    program: {
      version: pte.program.version,
      methods: pte.program.executionPlan.length,
      constant_data_bytes: constantBytes(pte),
      segments: pte.segments.map((s) => ({ index: s.index, offset: s.offset, size: s.size })),
    },
    engines: countEngines(kinds),
    methods,
  };
}
