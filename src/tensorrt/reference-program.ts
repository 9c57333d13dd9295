// Version 2 reference engines carry the partition itself as an ExecuTorch
// program (docs/reference-lowering.md §1): a whole .pte whose method
// `forward` takes the engine's input bindings in order and returns its output
// bindings in order. trtx decodes it with its own .pte decoder (the same
// verifier and decode budget as any program it reads) and checks it against
// the blob's bindings by arity.

import { decodePteBytes } from '../pte/open.js';
import type { Program } from '../pte/model.js';
import { isTrtxError } from '../util/errors.js';
import { engineFail, type EngineLocationOptions } from './reference-engine-errors.js';

/** The method a version-2 engine's program runs. */
export const PROGRAM_METHOD = 'forward';

/** What trtx reads of a version-2 engine's program. */
export interface ReferenceProgram {
  /** Bytes of the whole .pte (header and segments included). */
  programBytes: number;
  /** Its methods, in order (`forward` among them). */
  methods: string[];
  /** Inputs and outputs of `forward`. */
  inputs: number;
  outputs: number;
  /** Instructions and operators of `forward`. */
  instructions: number;
  operators: number;
  /** Constant bytes: the size of the constant segment (the partition's weights), or of inline constant buffers. */
  weightBytes: number;
}

function constantBytes(program: Program): number {
  const cs = program.constantSegment;
  const segment = cs ? program.segments[cs.segmentIndex] : undefined;
  if (segment) return Number(segment.size);
  return program.constantBuffer.reduce((n, b) => n + b.storage.length, 0);
}

/** Decodes a version-2 engine's program bytes; refuses (REF_ENGINE_PROGRAM) anything trtx's .pte decoder refuses, or a program without `forward`. */
export function decodeReferenceProgram(bytes: Uint8Array, opts: EngineLocationOptions = {}): ReferenceProgram {
  let program: Program;
  try {
    program = decodePteBytes(bytes).program;
  } catch (e) {
    if (!isTrtxError(e)) throw e;
    engineFail(
      'REF_ENGINE_PROGRAM',
      opts,
      e.location ? `program > ${e.location}` : 'program',
      `the partition's program is not one trtx can decode (${e.code}: ${e.message})`,
    );
  }
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
  return {
    programBytes: bytes.length,
    methods,
    inputs: plan.inputs.length,
    outputs: plan.outputs.length,
    instructions: plan.chains.reduce((n, c) => n + c.instructions.length, 0),
    operators: plan.operators.length,
    weightBytes: constantBytes(program),
  };
}

/** A disagreement between a version-2 engine's program and its blob's bindings; null when they agree. */
export function programArityMismatch(program: ReferenceProgram, bindings: readonly { is_input: boolean }[]): string | null {
  const ins = bindings.filter((b) => b.is_input).length;
  const outs = bindings.length - ins;
  const wrong: string[] = [];
  if (program.inputs !== ins) wrong.push(`takes ${program.inputs} inputs but the blob has ${ins} input bindings`);
  if (program.outputs !== outs) wrong.push(`returns ${program.outputs} outputs but the blob has ${outs} output bindings`);
  return wrong.length ? `the partition's program (method ${PROGRAM_METHOD}) ${wrong.join(' and ')}` : null;
}

/** "the partition as an ExecuTorch program (N instructions, M operators, W weight bytes, P program bytes)". */
export function describeReferenceProgram(p: Pick<ReferenceProgram, 'instructions' | 'operators' | 'weightBytes' | 'programBytes'>): string {
  return `the partition as an ExecuTorch program (${p.instructions} instructions, ${p.operators} operators, ${p.weightBytes} weight bytes, ${p.programBytes} program bytes)`;
}

/** What every human-readable output says of a version-1 engine. */
export const SYNTHETIC_ENGINE = 'synthetic reference engine (fixtures and benchmarks; computes a made-up function, not the model)';
