// Version 2 and 3 reference engines carry the partition itself as an
// ExecuTorch program (docs/reference-lowering.md §1): a .pte whose method
// `forward` takes the engine's input bindings in order and returns its output
// bindings in order. trtx reads its header and its flatbuffer only (the same
// verifier and decode budget as any program it reads), never its segments,
// and checks it against the blob's bindings by arity. A version-3 program's
// constants are EXTERNAL tensors named by fully_qualified_name; their bytes
// are the outer program's named data (docs/reference-lowering.md section 1).

import { HEAD_BYTES, parseHeader, type PteHeader } from '../pte/header.js';
import { decodeProgram } from '../pte/decode.js';
import { TensorDataLocation, type Program } from '../pte/model.js';
import { resolveSegments } from '../pte/segments.js';
import { planName, tensorBytes, tensorName } from '../pte/tensor.js';
import { isTrtxError } from '../util/errors.js';
import { engineFail, type EngineLocationOptions } from './standin-engine-errors.js';
import type { EngineSource } from './standin-engine-read.js';

/** The method a version-2 engine's program runs. */
export const PROGRAM_METHOD = 'forward';

/** A constant of a version-3 program that lives outside it: the key its bytes have in the outer program's named data. */
export interface ExternalWeight {
  /** fully_qualified_name; null when the tensor has none (or an empty one). */
  key: string | null;
  /** The tensor's data size; null for a scalar type trtx does not know. */
  nbytes: bigint | null;
  /** Where it is listed: `METHOD > value %N`. */
  where: string;
}

/** What trtx reads of a version-2 or 3 engine's program. */
export interface StandinProgram {
  /** Bytes of the whole .pte (header and segments included). */
  programBytes: number;
  /** Bytes of its flatbuffer (what a reader reads of it). */
  flatbufferBytes: number;
  /** Its methods, in order (`forward` among them). */
  methods: string[];
  /** Inputs and outputs of `forward`. */
  inputs: number;
  outputs: number;
  /** Instructions and operators of `forward`. */
  instructions: number;
  operators: number;
  /**
   * The partition's weights: its constant segment's size (or inline constant
   * buffers); for version 3, the sizes of its external weights (their
   * named-data segments in the outer program, once a reader that has it
   * fills them in: engine-kind.ts; the tensors' sizes before).
   */
  weightBytes: number;
  /** Version 3: every EXTERNAL constant, one per key (a key listed twice is one weight). */
  externalWeights: ExternalWeight[];
  /**
   * Delegates of `forward` and its delegate calls: the runtime refuses any
   * (EngineFormat: the partition runs on kernels only, a backend cannot run
   * inside the engine's execute), so check does (TRT_REFERENCE_PROGRAM_DELEGATED).
   */
  delegates: number;
}

function constantBytes(program: Program, segmentSize: (index: number) => number | undefined): number {
  const cs = program.constantSegment;
  const segment = cs ? segmentSize(cs.segmentIndex) : undefined;
  if (segment !== undefined) return segment;
  return program.constantBuffer.reduce((n, b) => n + b.storage.length, 0);
}

/** Every EXTERNAL tensor of every method, the first of each key kept. */
function externalWeightsOf(program: Program): ExternalWeight[] {
  const out: ExternalWeight[] = [];
  const seen = new Set<string>();
  program.executionPlan.forEach((plan, p) =>
    plan.values.forEach((v, i) => {
      if (v.type !== 'Tensor' || v.tensor.extraTensorInfo?.location !== TensorDataLocation.EXTERNAL) return;
      const key = tensorName(v.tensor);
      if (key !== null && seen.has(key)) return;
      if (key !== null) seen.add(key);
      out.push({ key, nbytes: tensorBytes(v.tensor) ?? null, where: `${planName(plan, p)} > value %${i}` });
    }),
  );
  return out;
}

/** Runs `read`, a refusal of the .pte reader worded as the engine's (REF_ENGINE_PROGRAM). */
function asEngineRefusal<T>(opts: EngineLocationOptions, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (!isTrtxError(e)) throw e;
    return engineFail(
      'REF_ENGINE_PROGRAM',
      opts,
      e.location ? `program > ${e.location}` : 'program',
      `the partition's program is not one trtx can decode (${e.code}: ${e.message})`,
    );
  }
}

/**
 * Reads the program an engine carries at `at` (`size` bytes of the engine's
 * `program` vector): its header, then its flatbuffer (program_size bytes by
 * its extended header, the whole vector without one), and checks its segment
 * table against the vector without reading a segment. Refuses
 * (REF_ENGINE_PROGRAM) what trtx's .pte reader refuses, sizes that disagree,
 * or a program without `forward`.
 */
export function readStandinProgram(src: EngineSource, at: number, size: number, opts: EngineLocationOptions = {}): StandinProgram {
  const head = src.bytes(at, Math.min(HEAD_BYTES, size));
  const header: PteHeader = asEngineRefusal(opts, () => parseHeader(head, size));
  const flatbufferBytes = header.extended ? header.extended.programSize : size;
  const program = asEngineRefusal(opts, () => decodeProgram(src.bytes(at, flatbufferBytes), header.rootOffset));
  const segments = asEngineRefusal(opts, () => resolveSegments(program, header, size));
  const methods = program.executionPlan.map((p) => p.name ?? '');
  const plan = program.executionPlan.find((p) => p.name === PROGRAM_METHOD);
  if (!plan) {
    engineFail(
      'REF_ENGINE_PROGRAM',
      opts,
      'program',
      `the partition's program has no method ${PROGRAM_METHOD} (it has ${methods.map((m) => JSON.stringify(m)).join(', ') || 'none'})`,
    );
  }
  const externalWeights = externalWeightsOf(program);
  const own = constantBytes(program, (i) => segments[i]?.size);
  return {
    programBytes: size,
    flatbufferBytes,
    methods,
    inputs: plan.inputs.length,
    outputs: plan.outputs.length,
    instructions: plan.chains.reduce((n, c) => n + c.instructions.length, 0),
    operators: plan.operators.length,
    weightBytes: externalWeights.length ? externalWeights.reduce((n, w) => n + Number(w.nbytes ?? 0n), 0) : own,
    externalWeights,
    delegates: plan.delegates.length + plan.chains.reduce((n, c) => n + c.instructions.filter((i) => i.type === 'DelegateCall').length, 0),
  };
}

/** A disagreement between a version-2 engine's program and its blob's bindings; null when they agree. */
export function programArityMismatch(program: StandinProgram, bindings: readonly { is_input: boolean }[]): string | null {
  const ins = bindings.filter((b) => b.is_input).length;
  const outs = bindings.length - ins;
  const wrong: string[] = [];
  if (program.inputs !== ins) wrong.push(`takes ${program.inputs} inputs but the blob has ${ins} input bindings`);
  if (program.outputs !== outs) wrong.push(`returns ${program.outputs} outputs but the blob has ${outs} output bindings`);
  return wrong.length ? `the partition's program (method ${PROGRAM_METHOD}) ${wrong.join(' and ')}` : null;
}

/** "the partition as an ExecuTorch program (N instructions, M operators, W weight bytes, P program bytes)". */
export function describeStandinProgram(p: Pick<StandinProgram, 'instructions' | 'operators' | 'weightBytes' | 'programBytes'>): string {
  return `the partition as an ExecuTorch program (${p.instructions} instructions, ${p.operators} operators, ${p.weightBytes} weight bytes, ${p.programBytes} program bytes)`;
}

/** What every human-readable output says of a version-1 engine. */
export const SYNTHETIC_ENGINE = 'synthetic reference engine (fixtures and benchmarks; computes a made-up function, not the model)';
