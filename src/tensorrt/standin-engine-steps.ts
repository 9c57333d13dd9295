// A version-1 (synthetic) engine's steps, read from a verified engine
// through its source, a field at a time. The generated accessors need the
// whole buffer in memory, and the steps may sit anywhere in it: an engine
// of 2 GiB - 1 whose one step is at its end was read whole to take them
// (issue 43). Here only the pages the steps' tables lie on are touched.

import { REFERENCE_ENGINE_LAYOUT } from '../generated/layout/reference-engine.js';
import { deref, fieldPos, type EngineSource } from './standin-engine-read.js';
import { engineFail, type EngineLocationOptions } from './standin-engine-errors.js';

export type StandinStep =
  | { op: 'Affine'; input: number; output: number; scale: number; bias: number }
  | { op: 'KvWrite'; cache: number; position: number; source: number; seqDim: number; salt: number }
  | { op: 'Attend'; caches: number[]; query: number; output: number }
  | { op: 'RingShift'; stateIn: number; source: number; stateOut: number };

export type StandinOp = StandinStep['op'];

type Tables = typeof REFERENCE_ENGINE_LAYOUT.tables;

const f32Bits = new DataView(new ArrayBuffer(4));

/** A table's fields by name, with the schema's defaults where the vtable leaves one out. */
function fieldsOf<T extends keyof Tables>(src: EngineSource, table: number, name: T) {
  const slot = (field: Tables[T][number]['name']) => REFERENCE_ENGINE_LAYOUT.tables[name].find((f) => f.name === field)!.slot;
  const at = (field: Tables[T][number]['name']) => fieldPos(src, table, slot(field));
  return {
    u32: (field: Tables[T][number]['name'], fallback = 0) => {
      const pos = at(field);
      return pos ? src.u32(pos) : fallback;
    },
    f32: (field: Tables[T][number]['name'], fallback: number) => {
      const pos = at(field);
      if (!pos) return fallback;
      f32Bits.setUint32(0, src.u32(pos), true);
      return f32Bits.getFloat32(0, true);
    },
    /** A [uint] vector's items. */
    u32s: (field: Tables[T][number]['name']) => {
      const pos = at(field);
      if (!pos) return [];
      const start = deref(src, pos);
      return Array.from({ length: src.u32(start) }, (_, i) => src.u32(start + 4 + 4 * i));
    },
    table: (field: Tables[T][number]['name']) => {
      const pos = at(field);
      return pos ? deref(src, pos) : 0;
    },
  };
}

const OPS = REFERENCE_ENGINE_LAYOUT.unions.Op;

function readStep(src: EngineSource, step: number, i: number, opts: EngineLocationOptions): StandinStep {
  const tagAt = fieldPos(src, step, 0);
  const tag = tagAt ? src.u8(tagAt) : 0;
  const op = fieldsOf(src, step, 'Step').table('op');
  switch (op ? OPS[tag] : 'NONE') {
    case 'Affine': {
      const a = fieldsOf(src, op, 'Affine');
      return { op: 'Affine', input: a.u32('input'), output: a.u32('output'), scale: a.f32('scale', 1), bias: a.f32('bias', 0) };
    }
    case 'KvWrite': {
      const k = fieldsOf(src, op, 'KvWrite');
      return {
        op: 'KvWrite',
        cache: k.u32('cache'),
        position: k.u32('position'),
        source: k.u32('source'),
        seqDim: k.u32('seq_dim'),
        salt: k.f32('salt', 0.5),
      };
    }
    case 'Attend': {
      const a = fieldsOf(src, op, 'Attend');
      return { op: 'Attend', caches: a.u32s('caches'), query: a.u32('query'), output: a.u32('output') };
    }
    case 'RingShift': {
      const r = fieldsOf(src, op, 'RingShift');
      return { op: 'RingShift', stateIn: r.u32('state_in'), source: r.u32('source'), stateOut: r.u32('state_out') };
    }
    default:
      return engineFail('REF_ENGINE_OP', opts, `steps[${i}]`, 'step has no op');
  }
}

/** The steps of a verified engine whose root table is at `root`. */
export function readSteps(src: EngineSource, root: number, opts: EngineLocationOptions): StandinStep[] {
  const stepsAt = fieldsOf(src, root, 'Engine').table('steps');
  if (!stepsAt) return [];
  const n = src.u32(stepsAt);
  return Array.from({ length: n }, (_, i) => readStep(src, deref(src, stepsAt + 4 + 4 * i), i, opts));
}
