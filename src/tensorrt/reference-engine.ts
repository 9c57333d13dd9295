// The trtx reference engine (schemas/reference_engine.fbs, documented in
// schemas/reference-engine.md): the engine bytes a fixture's TensorRT blob
// carries where a real program carries a TensorRT plan. The blob around it is
// the exact TensorRT blob; only the engine differs, so every delegate contract
// (binding, aliasing, elision, scratch, budgets) can run without TensorRT.
//
// Decoding verifies the flatbuffer before any generated accessor reads it:
// these bytes come out of files trtx did not necessarily write.

import * as flatbuffers from 'flatbuffers';
import { Engine as FbEngine } from '../generated/trtx-ref/engine.js';
import { Step as FbStep } from '../generated/trtx-ref/step.js';
import { Op } from '../generated/trtx-ref/op.js';
import { Affine as FbAffine } from '../generated/trtx-ref/affine.js';
import { KvWrite as FbKvWrite } from '../generated/trtx-ref/kv-write.js';
import { Attend as FbAttend } from '../generated/trtx-ref/attend.js';
import { RingShift as FbRingShift } from '../generated/trtx-ref/ring-shift.js';
import { ScratchNeed as FbScratchNeed } from '../generated/trtx-ref/scratch-need.js';
import { REFERENCE_ENGINE_LAYOUT } from '../generated/layout/reference-engine.js';
import { verifyFlatBuffer, type BufferFormat } from '../pte/verify.js';
import { TrtxError } from '../util/errors.js';
import { decodeReferenceProgram, type ReferenceProgram } from './reference-program.js';
import { engineFail, engineWhere as where, ENGINE_HINT as HINT, type EngineLocationOptions } from './reference-engine-errors.js';

export type { EngineLocationOptions } from './reference-engine-errors.js';

const U32_LIMIT = 2 ** 32;
const U64_LIMIT = 1n << 64n;

export const REFERENCE_ENGINE_IDENTIFIER = 'TRXE';
/** Versions this reader understands; any other is refused. */
export const REFERENCE_ENGINE_VERSIONS: readonly number[] = [1, 2];
/** Version 1: synthetic steps (fixtures and benchmarks). */
export const REFERENCE_ENGINE_VERSION = 1;
/** Version 2: the partition as an ExecuTorch program. */
export const REFERENCE_ENGINE_PROGRAM_VERSION = 2;

export type RefStep =
  | { op: 'Affine'; input: number; output: number; scale: number; bias: number }
  | { op: 'KvWrite'; cache: number; position: number; source: number; seqDim: number; salt: number }
  | { op: 'Attend'; caches: number[]; query: number; output: number }
  | { op: 'RingShift'; stateIn: number; source: number; stateOut: number };

export type RefOp = RefStep['op'];

/** Step as written by a caller: the float knobs may take their schema defaults. */
export type RefStepInit =
  | { op: 'Affine'; input: number; output: number; scale?: number; bias?: number }
  | { op: 'KvWrite'; cache: number; position: number; source: number; seqDim: number; salt?: number }
  | { op: 'Attend'; caches: number[]; query: number; output: number }
  | { op: 'RingShift'; stateIn: number; source: number; stateOut: number };

export interface ScratchNeed {
  baseBytes: bigint;
  perUnitBytes: bigint;
  unitBinding: number;
  unitDim: number;
}

export interface ReferenceEngine {
  version: number;
  steps: RefStep[];
  /** null: the engine declares no scratch (needs none). */
  scratch: ScratchNeed | null;
  streamableWeightBytes: bigint;
  weightStreaming: boolean;
  /** Version 2: the partition's program as trtx reads it; null for version 1 (synthetic). */
  program: ReferenceProgram | null;
}

export interface EngineInit {
  /** Version 1's steps; empty for version 2. */
  steps: RefStepInit[];
  /** Version 2: the partition's .pte bytes (the version defaults to 2 with it, 1 without). */
  program?: Uint8Array;
  scratch?: { baseBytes: bigint | number; perUnitBytes?: bigint | number; unitBinding?: number; unitDim?: number } | null;
  streamableWeightBytes?: bigint | number;
  weightStreaming?: boolean;
  /** Only for crafting refusal cases; a writer writes 2 with a program, else 1. */
  version?: number;
}

// ---------------------------------------------------------------------------
// Encoding

function u32(v: number, what: string): number {
  if (!Number.isInteger(v) || v < 0 || v >= U32_LIMIT) {
    throw new TrtxError('REF_ENGINE_VALUE', what, `${v} is not a u32`);
  }
  return v;
}

function u64(v: bigint | number, what: string): bigint {
  const b = typeof v === 'bigint' ? v : Number.isSafeInteger(v) ? BigInt(v) : -1n;
  if (b < 0n || b >= U64_LIMIT) throw new TrtxError('REF_ENGINE_VALUE', what, `${v} is not a u64`);
  return b;
}

function f32(v: number, what: string): number {
  if (!Number.isFinite(v)) throw new TrtxError('REF_ENGINE_VALUE', what, `${v} is not a finite number`);
  return v;
}

function encodeStep(b: flatbuffers.Builder, s: RefStepInit, i: number): flatbuffers.Offset {
  const at = `steps[${i}]`;
  let type: Op;
  let body: flatbuffers.Offset;
  switch (s.op) {
    case 'Affine':
      type = Op.Affine;
      body = FbAffine.createAffine(
        b,
        u32(s.input, `${at}.input`),
        u32(s.output, `${at}.output`),
        f32(s.scale ?? 1, `${at}.scale`),
        f32(s.bias ?? 0, `${at}.bias`),
      );
      break;
    case 'KvWrite':
      type = Op.KvWrite;
      body = FbKvWrite.createKvWrite(
        b,
        u32(s.cache, `${at}.cache`),
        u32(s.position, `${at}.position`),
        u32(s.source, `${at}.source`),
        u32(s.seqDim, `${at}.seq_dim`),
        f32(s.salt ?? 0.5, `${at}.salt`),
      );
      break;
    case 'Attend': {
      type = Op.Attend;
      const caches = FbAttend.createCachesVector(
        b,
        s.caches.map((c, k) => u32(c, `${at}.caches[${k}]`)),
      );
      body = FbAttend.createAttend(b, caches, u32(s.query, `${at}.query`), u32(s.output, `${at}.output`));
      break;
    }
    case 'RingShift':
      type = Op.RingShift;
      body = FbRingShift.createRingShift(
        b,
        u32(s.stateIn, `${at}.state_in`),
        u32(s.source, `${at}.source`),
        u32(s.stateOut, `${at}.state_out`),
      );
      break;
    default:
      throw new TrtxError('REF_ENGINE_VALUE', at, `unknown op ${JSON.stringify((s as { op: unknown }).op)}`);
  }
  return FbStep.createStep(b, type, body);
}

/** Engine bytes (identifier TRXE) for the reference engine described by `init`. */
export function encodeEngine(init: EngineInit): Uint8Array {
  const b = new flatbuffers.Builder(256);
  // Every field is written, defaults included, so the bytes say what they mean
  // to any reader (flatc, the C++ runner) without consulting schema defaults.
  b.forceDefaults(true);
  const steps = FbEngine.createStepsVector(
    b,
    init.steps.map((s, i) => encodeStep(b, s, i)),
  );
  let scratch = 0;
  if (init.scratch) {
    const sc = init.scratch;
    scratch = FbScratchNeed.createScratchNeed(
      b,
      u64(sc.baseBytes, 'scratch.base_bytes'),
      u64(sc.perUnitBytes ?? 0, 'scratch.per_unit_bytes'),
      u32(sc.unitBinding ?? 0, 'scratch.unit_binding'),
      u32(sc.unitDim ?? 0, 'scratch.unit_dim'),
    );
  }
  const program = init.program ? FbEngine.createProgramVector(b, init.program) : 0;
  FbEngine.startEngine(b);
  const version = init.version ?? (init.program ? REFERENCE_ENGINE_PROGRAM_VERSION : REFERENCE_ENGINE_VERSION);
  FbEngine.addVersion(b, u32(version, 'version'));
  FbEngine.addSteps(b, steps);
  if (scratch) FbEngine.addScratch(b, scratch);
  FbEngine.addStreamableWeightBytes(b, u64(init.streamableWeightBytes ?? 0, 'streamable_weight_bytes'));
  FbEngine.addWeightStreaming(b, init.weightStreaming ?? false);
  if (program) FbEngine.addProgram(b, program);
  FbEngine.finishEngineBuffer(b, FbEngine.endEngine(b));
  return b.asUint8Array().slice();
}

// ---------------------------------------------------------------------------
// Verification: what the generated accessors assume, proven before they run,
// by the verifier of every FlatBuffer trtx reads (src/pte/verify.ts) against
// the layout generated from schemas/reference_engine.fbs.

function engineFormat(opts: EngineLocationOptions | undefined): BufferFormat {
  return {
    layout: REFERENCE_ENGINE_LAYOUT,
    noun: 'engine',
    malformed: 'REF_ENGINE_MALFORMED',
    overBudget: 'REF_ENGINE_MALFORMED',
    hint: HINT,
    // trtx writes every table once; an engine whose offsets share data is not one trtx wrote.
    budgetHint: HINT,
    locate: (path) => where(opts, path),
  };
}

// ---------------------------------------------------------------------------
// Decoding

/** Whether `bytes` carry the reference engine identifier (bytes 4..7 "TRXE"). */
export function isReferenceEngine(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && String.fromCharCode(...bytes.subarray(4, 8)) === REFERENCE_ENGINE_IDENTIFIER;
}

function readStep(s: FbStep, i: number, opts: EngineLocationOptions | undefined): RefStep {
  switch (s.opType()) {
    case Op.Affine: {
      const a = s.op(new FbAffine()) as FbAffine;
      return { op: 'Affine', input: a.input(), output: a.output(), scale: a.scale(), bias: a.bias() };
    }
    case Op.KvWrite: {
      const k = s.op(new FbKvWrite()) as FbKvWrite;
      return { op: 'KvWrite', cache: k.cache(), position: k.position(), source: k.source(), seqDim: k.seqDim(), salt: k.salt() };
    }
    case Op.Attend: {
      const a = s.op(new FbAttend()) as FbAttend;
      const caches: number[] = [];
      for (let k = 0; k < a.cachesLength(); k++) caches.push(a.caches(k)!);
      return { op: 'Attend', caches, query: a.query(), output: a.output() };
    }
    case Op.RingShift: {
      const r = s.op(new FbRingShift()) as FbRingShift;
      return { op: 'RingShift', stateIn: r.stateIn(), source: r.source(), stateOut: r.stateOut() };
    }
    default:
      return engineFail('REF_ENGINE_OP', opts, `steps[${i}]`, 'step has no op');
  }
}

/** Decodes engine bytes; refuses anything but a well-formed reference engine of a known version. */
export function decodeEngine(bytes: Uint8Array, opts: EngineLocationOptions = {}): ReferenceEngine {
  if (bytes.length < 8)
    engineFail('REF_ENGINE_TRUNCATED', opts, '', `engine has ${bytes.length} bytes; a reference engine needs at least 8`);
  if (!isReferenceEngine(bytes)) {
    const id = Array.from(bytes.subarray(4, 8), (c) => (c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '.')).join('');
    const plan = String.fromCharCode(...bytes.subarray(0, 4)) === 'ftrt' ? ' (this looks like a TensorRT plan)' : '';
    engineFail(
      'REF_ENGINE_IDENTIFIER',
      opts,
      'identifier',
      `identifier ${JSON.stringify(id)} is not "${REFERENCE_ENGINE_IDENTIFIER}"${plan}`,
    );
  }
  const root = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  verifyFlatBuffer(bytes, root, engineFormat(opts));

  const e = FbEngine.getRootAsEngine(new flatbuffers.ByteBuffer(bytes));
  const version = e.version();
  if (!REFERENCE_ENGINE_VERSIONS.includes(version)) {
    engineFail(
      'REF_ENGINE_VERSION',
      opts,
      'version',
      `version ${version} is not one this reader knows (${REFERENCE_ENGINE_VERSIONS.join(', ')})`,
    );
  }
  const steps: RefStep[] = [];
  for (let i = 0; i < e.stepsLength(); i++) steps.push(readStep(e.steps(i)!, i, opts));
  const programBytes = e.programArray();
  let program: ReferenceProgram | null = null;
  if (version === REFERENCE_ENGINE_VERSION) {
    if (programBytes !== null)
      engineFail('REF_ENGINE_PROGRAM', opts, 'program', 'a version-1 (synthetic) engine carries a program; only version 2 may');
  } else {
    if (steps.length)
      engineFail('REF_ENGINE_PROGRAM', opts, 'steps', `a version-2 engine carries ${steps.length} synthetic steps; it must carry none`);
    if (programBytes === null || programBytes.length === 0)
      engineFail('REF_ENGINE_PROGRAM', opts, 'program', 'a version-2 engine carries no program (the partition as an ExecuTorch program)');
    program = decodeReferenceProgram(programBytes, opts);
  }
  const sc = e.scratch();
  return {
    version,
    steps,
    scratch: sc
      ? { baseBytes: sc.baseBytes(), perUnitBytes: sc.perUnitBytes(), unitBinding: sc.unitBinding(), unitDim: sc.unitDim() }
      : null,
    streamableWeightBytes: e.streamableWeightBytes(),
    weightStreaming: e.weightStreaming(),
    program,
  };
}
