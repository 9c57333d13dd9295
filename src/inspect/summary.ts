// What `trtx inspect` reports about a program, as data (schemas/inspect.schema.json).
// Only headers, the program and delegate blob metadata are read, never
// segment bodies, so the cost does not grow with engine or weight bytes.

import type { PteFile } from '../pte/open.js';
import type { ExecutionPlan, Tensor } from '../pte/model.js';
import { arenaDevice, deviceLabel, placement, planName, scalarTypeName, taggedDevice, tensorAt, tensorName } from '../pte/tensor.js';
import { delegatesOf } from '../tensorrt/delegates.js';
import { countEngines, type EngineDetail } from '../tensorrt/engine-kind.js';
import { stagingBytes } from '../graph/staging.js';
import { shortNameOrNull } from '../util/display.js';
import { present } from '../util/present.js';
import type { ReportBudget } from '../util/report-budget.js';
import { delegateSummary, type DelegateSummary } from './delegate-summary.js';
import type { z } from 'zod';
import type * as json from './report-json.js';

export type { DelegateSummary, SpecSummary } from './delegate-summary.js';

// The types are the zod schemas' (report-json.ts), which the JSON Schema is generated from.
export type TensorSummary = z.infer<typeof json.TensorSummary>;
export type MethodSummary = z.infer<typeof json.MethodSummary>;
export type InspectReport = z.infer<typeof json.InspectReport>;

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

/** Constant bytes: the constant segment's size, or the legacy inline buffers. */
function constantBytes(pte: PteFile): number {
  const inline = pte.program.constantBuffer.reduce((n, b) => n + b.storage.length, 0);
  const cs = pte.program.constantSegment;
  const seg = cs && cs.offsets.length > 0 ? (pte.segments[cs.segmentIndex]?.size ?? 0) : 0;
  return inline + seg;
}

export async function summarize(pte: PteFile, opts: { method?: string } = {}): Promise<InspectReport> {
  const refs = new Map(delegatesOf(pte).map((r) => [`${r.planIndex}/${r.delegateIndex}`, r]));
  const methods: MethodSummary[] = [];
  const kinds: EngineDetail[] = [];
  for (const [planIndex, plan] of pte.program.executionPlan.entries()) {
    if (opts.method !== undefined && plan.name !== opts.method) continue;
    const delegates: DelegateSummary[] = [];
    for (const index of plan.delegates.keys()) {
      // delegatesOf lists every delegate of every plan.
      const ref = present(refs.get(`${planIndex}/${index}`), `${planName(plan, planIndex)} > delegate ${index}`);
      delegates.push(await delegateSummary(pte, ref, kinds));
    }
    methods.push(methodSummary(plan, delegates, pte.reportBudget));
  }
  return {
    schema: 'trtx.inspect/1',
    file: pte.path,
    file_size: pte.fileSize,
    header: headerSummary(pte),
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

function methodSummary(plan: ExecutionPlan, delegates: DelegateSummary[], budget: ReportBudget): MethodSummary {
  const instructions = plan.chains.flatMap((c) => c.instructions);
  const calls = new Map<number, number>();
  for (const i of instructions) if (i.type === 'KernelCall') calls.set(i.opIndex, (calls.get(i.opIndex) ?? 0) + 1);
  return {
    name: plan.name,
    inputs: plan.inputs.map((i) => tensorSummary(plan, i, budget)),
    outputs: plan.outputs.map((i) => tensorSummary(plan, i, budget)),
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
  };
}

function headerSummary(pte: PteFile): InspectReport['header'] {
  const eh = pte.header.extended;
  return {
    root_offset: pte.header.rootOffset,
    file_identifier: pte.header.identifier,
    extended_header: eh && {
      magic: eh.magic,
      length: eh.length,
      program_size: eh.programSize,
      segment_base_offset: eh.segmentBaseOffset,
      segment_data_size: eh.segmentDataSize,
    },
  };
}
