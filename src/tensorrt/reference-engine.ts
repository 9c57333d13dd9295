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
import type { RefEngineCode } from '../codes/index.js';
import { REFERENCE_ENGINE_LAYOUT } from '../generated/layout/reference-engine.js';
import { verifyFlatBuffer, type BufferFormat } from '../pte/verify.js';
import { TrtxError } from '../util/errors.js';

export const REFERENCE_ENGINE_IDENTIFIER = 'TRXE';
/** Versions this reader understands; any other is refused. */
export const REFERENCE_ENGINE_VERSIONS: readonly number[] = [1];
export const REFERENCE_ENGINE_VERSION = 1;

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
}

export interface EngineInit {
  steps: RefStepInit[];
  scratch?: { baseBytes: bigint | number; perUnitBytes?: bigint | number; unitBinding?: number; unitDim?: number } | null;
  streamableWeightBytes?: bigint | number;
  weightStreaming?: boolean;
  /** Only for crafting refusal cases; a writer always writes the current version. */
  version?: number;
}

export interface EngineLocationOptions {
  /** Prefix for error locations, e.g. `decode > delegate 0 (TensorRTBackend) > engine`. */
  location?: string;
}

const HINT = 'the engine is not a trtx reference engine this version can read; rebuild the fixture with `npm run fixtures`';
const U32_LIMIT = 2 ** 32;
const U64_LIMIT = 1n << 64n;

function where(opts: EngineLocationOptions | undefined, rel: string): string {
  return opts?.location ? (rel ? `${opts.location} > ${rel}` : opts.location) : rel;
}

function fail(code: RefEngineCode, opts: EngineLocationOptions | undefined, rel: string, message: string): never {
  throw new TrtxError(code, where(opts, rel), message, { hint: HINT });
}

// ---------------------------------------------------------------------------
// Encoding

function u32(v: number, what: string): number {
  if (!Number.isInteger(v) || v < 0 || v >= U32_LIMIT) {
    throw new TrtxError('REF_ENGINE_VALUE', what, `${v} is not a u32`, { kind: 'usage' });
  }
  return v;
}

function u64(v: bigint | number, what: string): bigint {
  const b = typeof v === 'bigint' ? v : Number.isSafeInteger(v) ? BigInt(v) : -1n;
  if (b < 0n || b >= U64_LIMIT) throw new TrtxError('REF_ENGINE_VALUE', what, `${v} is not a u64`, { kind: 'usage' });
  return b;
}

function f32(v: number, what: string): number {
  if (!Number.isFinite(v)) throw new TrtxError('REF_ENGINE_VALUE', what, `${v} is not a finite number`, { kind: 'usage' });
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
      throw new TrtxError('REF_ENGINE_VALUE', at, `unknown op ${JSON.stringify((s as { op: unknown }).op)}`, { kind: 'usage' });
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
  FbEngine.startEngine(b);
  FbEngine.addVersion(b, u32(init.version ?? REFERENCE_ENGINE_VERSION, 'version'));
  FbEngine.addSteps(b, steps);
  if (scratch) FbEngine.addScratch(b, scratch);
  FbEngine.addStreamableWeightBytes(b, u64(init.streamableWeightBytes ?? 0, 'streamable_weight_bytes'));
  FbEngine.addWeightStreaming(b, init.weightStreaming ?? false);
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
  return bytes.length >= 8 && String.fromCharCode(bytes[4], bytes[5], bytes[6], bytes[7]) === REFERENCE_ENGINE_IDENTIFIER;
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
      return fail('REF_ENGINE_OP', opts, `steps[${i}]`, 'step has no op');
  }
}

/** Decodes engine bytes; refuses anything but a well-formed reference engine of a known version. */
export function decodeEngine(bytes: Uint8Array, opts: EngineLocationOptions = {}): ReferenceEngine {
  if (bytes.length < 8) fail('REF_ENGINE_TRUNCATED', opts, '', `engine has ${bytes.length} bytes; a reference engine needs at least 8`);
  if (!isReferenceEngine(bytes)) {
    const id = Array.from(bytes.subarray(4, 8), (c) => (c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '.')).join('');
    const plan = String.fromCharCode(...bytes.subarray(0, 4)) === 'ftrt' ? ' (this looks like a TensorRT plan)' : '';
    fail('REF_ENGINE_IDENTIFIER', opts, 'identifier', `identifier ${JSON.stringify(id)} is not "${REFERENCE_ENGINE_IDENTIFIER}"${plan}`);
  }
  const root = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  verifyFlatBuffer(bytes, root, engineFormat(opts));

  const e = FbEngine.getRootAsEngine(new flatbuffers.ByteBuffer(bytes));
  const version = e.version();
  if (!REFERENCE_ENGINE_VERSIONS.includes(version)) {
    fail(
      'REF_ENGINE_VERSION',
      opts,
      'version',
      `version ${version} is not one this reader knows (${REFERENCE_ENGINE_VERSIONS.join(', ')})`,
    );
  }
  const steps: RefStep[] = [];
  for (let i = 0; i < e.stepsLength(); i++) steps.push(readStep(e.steps(i)!, i, opts));
  const sc = e.scratch();
  return {
    version,
    steps,
    scratch: sc
      ? { baseBytes: sc.baseBytes(), perUnitBytes: sc.perUnitBytes(), unitBinding: sc.unitBinding(), unitDim: sc.unitDim() }
      : null,
    streamableWeightBytes: e.streamableWeightBytes(),
    weightStreaming: e.weightStreaming(),
  };
}

// ---------------------------------------------------------------------------
// Engine against its blob's bindings

/** The part of a blob io binding an engine is checked against. */
export interface EngineBinding {
  name: string;
  is_input: boolean;
  dtype: string;
  shape: number[];
}

const DATA_DTYPES = new Set(['float32', 'float16', 'bfloat16']);
const POSITION_DTYPES = new Set(['int64', 'int32']);

/**
 * Checks every binding index the engine names against the blob's io_bindings
 * (inputs first, then outputs): writes go to output bindings, except KvWrite,
 * which writes through its cache input; positions are one-element integers;
 * data bindings are floating point. Dtype and shape checks apply only where
 * the blob declares them.
 */
export function checkEngineBindings(engine: ReferenceEngine, bindings: readonly EngineBinding[], opts: EngineLocationOptions = {}): void {
  const n = bindings.length;
  const bad = (rel: string, message: string): never => fail('REF_ENGINE_BINDING', opts, rel, message);
  const get = (idx: number, rel: string) => {
    if (idx >= n) bad(rel, `binding ${idx} does not exist (the blob has ${n} io_bindings)`);
    return bindings[idx];
  };
  const label = (b: EngineBinding, idx: number) => `binding ${idx} (${b.name})`;
  const wantInput = (idx: number, rel: string, role: string) => {
    const b = get(idx, rel);
    if (!b.is_input) bad(rel, `${role} ${label(b, idx)} must be an input binding`);
    return b;
  };
  const wantOutput = (idx: number, rel: string, role: string) => {
    const b = get(idx, rel);
    if (b.is_input) bad(rel, `${role} ${label(b, idx)} must be an output binding`);
    return b;
  };
  const wantData = (b: EngineBinding, idx: number, rel: string) => {
    if (b.dtype !== '' && !DATA_DTYPES.has(b.dtype))
      bad(rel, `${label(b, idx)} has dtype ${b.dtype}; data must be float32, float16 or bfloat16`);
  };
  const numel = (b: EngineBinding) => b.shape.reduce((p, d) => p * d, 1);

  engine.steps.forEach((s, i) => {
    const at = `steps[${i}] (${s.op})`;
    switch (s.op) {
      case 'Affine': {
        const inp = get(s.input, `${at}.input`);
        const out = wantOutput(s.output, `${at}.output`, 'output');
        wantData(inp, s.input, `${at}.input`);
        wantData(out, s.output, `${at}.output`);
        if (inp.shape.length && out.shape.length && numel(inp) !== numel(out)) {
          bad(at, `input has ${numel(inp)} elements and output ${numel(out)}; Affine needs equal counts`);
        }
        break;
      }
      case 'KvWrite': {
        const cache = wantInput(s.cache, `${at}.cache`, 'cache');
        const pos = wantInput(s.position, `${at}.position`, 'position');
        wantData(cache, s.cache, `${at}.cache`);
        wantData(get(s.source, `${at}.source`), s.source, `${at}.source`);
        if (pos.dtype !== '' && !POSITION_DTYPES.has(pos.dtype))
          bad(`${at}.position`, `${label(pos, s.position)} has dtype ${pos.dtype}; a position is int64 or int32`);
        if (pos.shape.length && numel(pos) !== 1)
          bad(`${at}.position`, `${label(pos, s.position)} has ${numel(pos)} elements; a position has exactly one`);
        if (cache.shape.length && s.seqDim >= cache.shape.length)
          bad(`${at}.seq_dim`, `seq_dim ${s.seqDim} is past the ${cache.shape.length} dimensions of ${label(cache, s.cache)}`);
        break;
      }
      case 'Attend':
        if (s.caches.length === 0) bad(`${at}.caches`, 'Attend names no cache');
        s.caches.forEach((c, k) => wantData(wantInput(c, `${at}.caches[${k}]`, 'cache'), c, `${at}.caches[${k}]`));
        wantData(get(s.query, `${at}.query`), s.query, `${at}.query`);
        wantData(wantOutput(s.output, `${at}.output`, 'output'), s.output, `${at}.output`);
        break;
      case 'RingShift': {
        const sin = wantInput(s.stateIn, `${at}.state_in`, 'state_in');
        const sout = wantOutput(s.stateOut, `${at}.state_out`, 'state_out');
        wantData(sin, s.stateIn, `${at}.state_in`);
        wantData(sout, s.stateOut, `${at}.state_out`);
        wantData(get(s.source, `${at}.source`), s.source, `${at}.source`);
        if (sin.shape.length && sout.shape.length && sin.shape.join(',') !== sout.shape.join(',')) {
          bad(at, `state_in is [${sin.shape.join(',')}] but state_out is [${sout.shape.join(',')}]`);
        }
        break;
      }
    }
  });
  if (engine.scratch) {
    const b = get(engine.scratch.unitBinding, 'scratch.unit_binding');
    if (engine.scratch.perUnitBytes > 0n && b.shape.length && engine.scratch.unitDim >= b.shape.length) {
      bad(
        'scratch.unit_dim',
        `unit_dim ${engine.scratch.unitDim} is past the ${b.shape.length} dimensions of ${label(b, engine.scratch.unitBinding)}`,
      );
    }
  }
}

/** Scratch bytes one enqueue needs when binding `unitBinding` has `shape`. */
export function scratchBytes(engine: ReferenceEngine, shapes: readonly (readonly number[])[]): bigint {
  const sc = engine.scratch;
  if (!sc) return 0n;
  if (sc.perUnitBytes === 0n) return sc.baseBytes;
  const extent = shapes[sc.unitBinding]?.[sc.unitDim];
  if (extent === undefined) {
    throw new TrtxError('REF_ENGINE_BINDING', 'scratch', `binding ${sc.unitBinding} has no dimension ${sc.unitDim}`);
  }
  return sc.baseBytes + sc.perUnitBytes * BigInt(extent);
}
