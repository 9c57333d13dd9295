// A version-1 (synthetic) reference engine against its blob's io_bindings:
// what each step may name and write (schemas/reference-engine.md, "Bindings
// and types"), and the activation scratch it declares. Version 2 engines are
// checked against their bindings by arity (reference-program.ts).

import type { StandinEngine } from './standin-engine.js';
import { engineFail as fail, type EngineLocationOptions } from './standin-engine-errors.js';
import { TrtxError } from '../util/errors.js';

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
export function checkEngineBindings(engine: StandinEngine, bindings: readonly EngineBinding[], opts: EngineLocationOptions = {}): void {
  const n = bindings.length;
  const bad = (rel: string, message: string): never => fail('REF_ENGINE_BINDING', opts, rel, message);
  const get = (idx: number, rel: string) => {
    const b = bindings[idx];
    if (b === undefined) return bad(rel, `binding ${idx} does not exist (the blob has ${n} io_bindings)`);
    return b;
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
export function scratchBytes(engine: StandinEngine, shapes: readonly (readonly number[])[]): bigint {
  const sc = engine.scratch;
  if (!sc) return 0n;
  if (sc.perUnitBytes === 0n) return sc.baseBytes;
  const extent = shapes[sc.unitBinding]?.[sc.unitDim];
  if (extent === undefined) {
    throw new TrtxError('REF_ENGINE_BINDING', 'scratch', `binding ${sc.unitBinding} has no dimension ${sc.unitDim}`);
  }
  return sc.baseBytes + sc.perUnitBytes * BigInt(extent);
}
