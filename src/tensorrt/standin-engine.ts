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
import { verifyFlatBuffer, type BufferFormat } from '../pte/flatbuffer-verify.js';
import { TrtxError } from '../util/errors.js';
import { readStandinProgram, type StandinProgram } from './standin-program.js';
import { deref, fieldPos, memoryEngineSource, readBounded, u64At, type EngineReadCost, type EngineSource } from './standin-engine-read.js';
import { readSteps, type StandinStep } from './standin-engine-steps.js';
import { engineFail, engineWhere as where, ENGINE_HINT as HINT, type EngineLocationOptions } from './standin-engine-errors.js';

export type { EngineLocationOptions } from './standin-engine-errors.js';

const U32_LIMIT = 2 ** 32;
const U64_LIMIT = 1n << 64n;

export const REFERENCE_ENGINE_IDENTIFIER = 'TRXE';
/** Versions this reader understands; any other is refused. */
export const REFERENCE_ENGINE_VERSIONS: readonly number[] = [1, 2, 3];
/** Version 1: synthetic steps (fixtures and benchmarks). */
export const REFERENCE_ENGINE_VERSION = 1;
/** Version 2: the partition as an ExecuTorch program. */
export const REFERENCE_ENGINE_PROGRAM_VERSION = 2;
/** Version 3: version 2 with the weights outside the engine, in the outer program's named data (EXTERNAL constants). */
export const REFERENCE_ENGINE_EXTERNAL_VERSION = 3;

export type { StandinOp, StandinStep } from './standin-engine-steps.js';

/** Step as written by a caller: the float knobs may take their schema defaults. */
export type StandinStepInit =
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

export interface StandinEngine {
  version: number;
  steps: StandinStep[];
  /** null: the engine declares no scratch (needs none). */
  scratch: ScratchNeed | null;
  streamableWeightBytes: bigint;
  weightStreaming: boolean;
  /** Versions 2 and 3: the partition's program as trtx reads it; null for version 1 (synthetic). */
  program: StandinProgram | null;
}

export interface EngineInit {
  /** Version 1's steps; empty for version 2. */
  steps: StandinStepInit[];
  /** Version 2: the partition's .pte bytes (the version defaults to 2 with it, 1 without). */
  program?: Uint8Array;
  scratch?: { baseBytes: bigint | number; perUnitBytes?: bigint | number; unitBinding?: number; unitDim?: number } | null;
  streamableWeightBytes?: bigint | number;
  weightStreaming?: boolean;
  /** 3 for a program whose constants are EXTERNAL; else only for crafting refusal cases (a writer writes 2 with a program, else 1). */
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

function encodeStep(b: flatbuffers.Builder, s: StandinStepInit, i: number): flatbuffers.Offset {
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
// by the verifier of every FlatBuffer trtx reads (src/pte/flatbuffer-verify.ts) against
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
export function isStandinEngine(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && String.fromCharCode(...bytes.subarray(4, 8)) === REFERENCE_ENGINE_IDENTIFIER;
}

/** Decodes engine bytes held in memory; refuses anything but a well-formed reference engine of a known version. */
export function decodeEngine(bytes: Uint8Array, opts: EngineLocationOptions = {}): StandinEngine {
  return decodeEngineFrom(memoryEngineSource(bytes), opts);
}

/**
 * Reads an engine of `size` bytes that `read` fetches (offsets inside the
 * engine), fetching only its table, its program's header and flatbuffer:
 * never the program's segments (reference-engine-read.ts). Refuses what
 * decodeEngine refuses.
 */
export function readEngine(
  size: number,
  read: (offset: number, length: number) => Promise<Uint8Array>,
  opts: EngineLocationOptions = {},
  cost?: EngineReadCost,
): Promise<StandinEngine> {
  return readBounded(size, read, (src) => decodeEngineFrom(src, opts), cost);
}

/**
 * Decodes an engine from a source that reads what it is asked for
 * synchronously (an open file, pagedFileSource): the verifier walks it once,
 * holding a bounded number of pages, however many pages its tables touch.
 */
export function decodeEngineFromSource(src: EngineSource, opts: EngineLocationOptions = {}): StandinEngine {
  return decodeEngineFrom(src, opts);
}

function checkIdentifier(src: EngineSource, opts: EngineLocationOptions): void {
  if (src.length < 8) engineFail('REF_ENGINE_TRUNCATED', opts, '', `engine has ${src.length} bytes; a reference engine needs at least 8`);
  const head = src.bytes(0, 8);
  if (isStandinEngine(head)) return;
  const id = Array.from(head.subarray(4, 8), (c) => (c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '.')).join('');
  const plan = String.fromCharCode(...head.subarray(0, 4)) === 'ftrt' ? ' (this looks like a TensorRT plan)' : '';
  engineFail(
    'REF_ENGINE_IDENTIFIER',
    opts,
    'identifier',
    `identifier ${JSON.stringify(id)} is not "${REFERENCE_ENGINE_IDENTIFIER}"${plan}`,
  );
}

/** The Engine table's fields, from a verified buffer (defaults as the schema gives them). */
function engineFields(src: EngineSource, root: number) {
  const slot = (name: string) => REFERENCE_ENGINE_LAYOUT.tables.Engine.find((f) => f.name === name)!.slot;
  const at = (name: string) => fieldPos(src, root, slot(name));
  const vector = (name: string) => {
    const pos = at(name);
    if (!pos) return null;
    const start = deref(src, pos);
    return { start: start + 4, length: src.u32(start) };
  };
  const version = at('version') ? src.u32(at('version')) : 1;
  const scratchAt = at('scratch') ? deref(src, at('scratch')) : 0;
  const scratchField = (i: number) => (scratchAt ? fieldPos(src, scratchAt, i) : 0);
  const scratch: ScratchNeed | null = scratchAt
    ? {
        baseBytes: scratchField(0) ? u64At(src, scratchField(0)) : 0n,
        perUnitBytes: scratchField(1) ? u64At(src, scratchField(1)) : 0n,
        unitBinding: scratchField(2) ? src.u32(scratchField(2)) : 0,
        unitDim: scratchField(3) ? src.u32(scratchField(3)) : 0,
      }
    : null;
  return {
    version,
    steps: vector('steps')?.length ?? 0,
    program: vector('program'),
    scratch,
    streamableWeightBytes: at('streamable_weight_bytes') ? u64At(src, at('streamable_weight_bytes')) : 0n,
    weightStreaming: at('weight_streaming') ? src.u8(at('weight_streaming')) !== 0 : false,
  };
}

function decodeEngineFrom(src: EngineSource, opts: EngineLocationOptions): StandinEngine {
  checkIdentifier(src, opts);
  const root = src.u32(0);
  verifyFlatBuffer(src, root, engineFormat(opts));
  const fields = engineFields(src, root);
  const { version } = fields;
  if (!REFERENCE_ENGINE_VERSIONS.includes(version)) {
    engineFail(
      'REF_ENGINE_VERSION',
      opts,
      'version',
      `version ${version} is not one this reader knows (${REFERENCE_ENGINE_VERSIONS.join(', ')})`,
    );
  }
  const steps: StandinStep[] = [];
  let program: StandinProgram | null = null;
  if (version === REFERENCE_ENGINE_VERSION) {
    if (fields.program !== null)
      engineFail('REF_ENGINE_PROGRAM', opts, 'program', 'a version-1 (synthetic) engine carries a program; only versions 2 and 3 may');
    // A synthetic engine is its steps, read a field at a time: never the whole extent they lie in.
    steps.push(...readSteps(src, root, opts));
  } else {
    if (fields.steps)
      engineFail(
        'REF_ENGINE_PROGRAM',
        opts,
        'steps',
        `a version-${version} engine carries ${fields.steps} synthetic steps; it must carry none`,
      );
    if (fields.program === null || fields.program.length === 0)
      engineFail(
        'REF_ENGINE_PROGRAM',
        opts,
        'program',
        `a version-${version} engine carries no program (the partition as an ExecuTorch program)`,
      );
    program = readStandinProgram(src, fields.program.start, fields.program.length, opts);
    if (version === REFERENCE_ENGINE_PROGRAM_VERSION && program.externalWeights.length)
      engineFail(
        'REF_ENGINE_PROGRAM',
        opts,
        `program > ${program.externalWeights[0]?.where ?? 'values'}`,
        `a version-2 engine's program has ${program.externalWeights.length} EXTERNAL constant(s); only a version-3 engine's weights live outside it`,
      );
  }
  return {
    version,
    steps,
    scratch: fields.scratch,
    streamableWeightBytes: fields.streamableWeightBytes,
    weightStreaming: fields.weightStreaming,
    program,
  };
}
