// A seeded mutation fuzzer over the fixture catalogue and the ExecuTorch
// corpus. Two kinds of mutant:
// - byte mutants: flips, interesting 32/64-bit values at aligned offsets,
//   truncations, copied spans and copied offsets (which make the flatbuffer
//   share data), so the container readers see every kind of damage;
// - model mutants: one field of the decoded program changed (an index, a
//   size, a device, a union member, a list shortened or repeated) and the
//   program re-encoded, so the bytes are a sound flatbuffer and the damage
//   reaches the checks and the passes behind the readers.
// Everything is a pure function of the seed: a failure names its seed and
// mutant index, and `TRTX_FUZZ_SEED=... TRTX_FUZZ_MUTANTS=...` replays it.

import { readFileSync } from 'node:fs';
import { buildProgram } from '../../src/examples/builder.js';
import { CATALOGUE } from '../../src/examples/catalogue.js';
import type { Program } from '../../src/pte/model.js';
import { decodePteBytes } from '../../src/pte/open.js';
import type { SegmentSource } from '../../src/pte/write.js';
import { corpusPath, corpusPrograms } from './corpus.js';
import { encodePte } from './memory-pte.js';

export type Rng = () => number;

/** mulberry32: a small, well-known 32-bit seeded generator. */
export function rngOf(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, xs.length)];

export interface FuzzSeed {
  name: string;
  bytes: Uint8Array;
  program: Program;
  segments: SegmentSource[];
}

/** Every sound and broken fixture, and every corpus program. */
export function fuzzSeeds(): FuzzSeed[] {
  const seeds: FuzzSeed[] = [];
  for (const e of CATALOGUE) {
    if (e.file.includes('-seed-')) continue; // the seed-scale programs are large and add no shapes
    const built = buildProgram(e.build());
    seeds.push({ name: e.file, bytes: encodePte(built.program, built.segments), program: built.program, segments: built.segments });
  }
  for (const n of corpusPrograms()) {
    const bytes = new Uint8Array(readFileSync(corpusPath(n)));
    const { program, segments } = decodePteBytes(bytes);
    seeds.push({
      name: `${n}.pte`,
      bytes,
      program,
      segments: segments.map((s) => ({ kind: 'bytes', bytes: bytes.slice(s.offset, s.offset + s.size) })),
    });
  }
  return seeds;
}

const U32S = [0, 1, 2, 3, 4, 7, 8, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
const U64S = [
  0n,
  1n,
  8n,
  4096n,
  0x7fffffffn,
  0x80000000n,
  0xffffffffn,
  1n << 32n,
  3n << 30n,
  1n << 62n,
  0x7fffffffffffffffn,
  0xffffffffffffffffn,
];

function byteMutant(rng: Rng, src: Uint8Array): Uint8Array {
  const b = src.slice();
  const view = new DataView(b.buffer);
  const at4 = () => int(rng, Math.max(1, (b.length - 4) >> 2)) << 2;
  switch (int(rng, 7)) {
    case 0: // flips
      for (let k = 1 + int(rng, 8); k > 0; k--) b[int(rng, b.length)] ^= 1 + int(rng, 255);
      return b;
    case 1: // an interesting u32 at an aligned offset
      view.setUint32(at4(), pick(rng, [...U32S, b.length, b.length - 4, b.length + 4]), true);
      return b;
    case 2: // an interesting u64 in the header
      if (b.length >= 40) view.setBigUint64(pick(rng, [16, 24, 32]), pick(rng, [...U64S, BigInt(b.length), BigInt(b.length) + 1n]), true);
      return b;
    case 3: // truncation
      return b.slice(0, int(rng, b.length));
    case 4: {
      // a span copied over another
      const n = 1 + int(rng, 64);
      const from = int(rng, Math.max(1, b.length - n));
      b.copyWithin(int(rng, Math.max(1, b.length - n)), from, from + n);
      return b;
    }
    case 5: {
      // an offset copied elsewhere, adjusted to reach the same target: shared data
      const from = at4();
      const to = at4();
      const target = from + view.getUint32(from, true);
      if (target > to) view.setUint32(to, target - to, true);
      return b;
    }
    default: // small signed nudges of a u32
      view.setUint32(at4(), (view.getUint32(at4(), true) + pick(rng, [-1, 1, -4, 4, 8, -8, 16])) >>> 0, true);
      return b;
  }
}

type Slot = { obj: Record<string, unknown> | unknown[]; key: string | number; value: unknown };

/** Every scalar and array slot of the model (inline byte data excluded). */
function slots(root: unknown): Slot[] {
  const out: Slot[] = [];
  const walk = (obj: Record<string, unknown> | unknown[]) => {
    for (const key of Object.keys(obj)) {
      if (key === '$absent') continue;
      const value = (obj as Record<string, unknown>)[key];
      const k = Array.isArray(obj) ? Number(key) : key;
      if (value instanceof Uint8Array) continue;
      out.push({ obj, key: k, value });
      if (value && typeof value === 'object') walk(value as Record<string, unknown>);
    }
  };
  walk(root as Record<string, unknown>);
  return out;
}

const NUMBERS = [-1, 0, 1, 2, 3, 4, 5, 7, 8, 11, 12, 16, 63, 64, 255, 1000, 4096, 65535, 0x7fffffff, -0x80000000];
const BIGINTS = [0n, 1n, -1n, 2n, 16n, 4095n, 4096n, 1n << 32n, 1n << 40n, 0x7fffffffffffffffn, -(1n << 63n)];

/**
 * An edit of one instruction's arguments, the fields the dataflow checks
 * and the passes follow by position: an argument dropped, added, pointed
 * past the values or at another value.
 */
function instructionMutant(rng: Rng, program: Program): boolean {
  const calls = program.executionPlan.flatMap((plan) =>
    plan.chains.flatMap((c) =>
      c.instructions.filter((i) => i.type === 'KernelCall' || i.type === 'DelegateCall').map((ins) => ({ plan, ins })),
    ),
  );
  if (calls.length === 0) return false;
  const { plan, ins } = pick(rng, calls);
  if (ins.type !== 'KernelCall' && ins.type !== 'DelegateCall') return false;
  const a = ins.args;
  switch (int(rng, 5)) {
    case 0:
      a.length = Math.max(0, a.length - 1 - int(rng, 2));
      break;
    case 1:
      a.push(int(rng, plan.values.length));
      break;
    case 2:
      if (a.length) a[int(rng, a.length)] = pick(rng, [plan.values.length, 255, -1, 0x7fffffff]);
      break;
    case 3:
      if (a.length) a[int(rng, a.length)] = int(rng, plan.values.length);
      break;
    default:
      if (a.length > 1) a.splice(int(rng, a.length), 1);
  }
  return true;
}

function modelMutant(rng: Rng, seed: FuzzSeed): Uint8Array | null {
  const program = structuredClone(seed.program);
  if (rng() < 0.3 && instructionMutant(rng, program)) {
    try {
      return encodePte(program, seed.segments);
    } catch {
      return null;
    }
  }
  const all = slots(program);
  for (let k = 1 + int(rng, 3); k > 0; k--) {
    const s = pick(rng, all);
    const set = (v: unknown) => ((s.obj as Record<string | number, unknown>)[s.key] = v);
    if (typeof s.value === 'number') set(s.key === 'type' ? s.value : pick(rng, NUMBERS));
    else if (typeof s.value === 'bigint') set(pick(rng, BIGINTS));
    else if (typeof s.value === 'boolean') set(!s.value);
    else if (typeof s.value === 'string')
      set(pick(rng, ['', 'x', s.value + s.value, 'TensorRTBackend', 'cuda:1', 'aten::copy_', 'et_copy::_d2h_copy', 'et_copy::_h2d_copy']));
    else if (Array.isArray(s.value) && s.value.length > 0) {
      const a = s.value as unknown[];
      const i = int(rng, a.length);
      switch (int(rng, 4)) {
        case 0:
          a.splice(i, 1);
          break;
        case 1:
          a.splice(i, 0, structuredClone(a[i]));
          break;
        case 2:
          a.length = 0;
          break;
        default:
          a.reverse();
      }
    } else if (s.value && typeof s.value === 'object' && 'type' in s.value) {
      // A union member swapped for another value of the same list.
      const same = all.filter((o) => o.value && typeof o.value === 'object' && 'type' in o.value);
      set(structuredClone(pick(rng, same).value));
    } else if (s.value !== null && typeof s.value === 'object') set(null);
  }
  try {
    return encodePte(program, seed.segments);
  } catch {
    return null; // a model the encoder cannot write (a number out of its field's range)
  }
}

/** The `index`-th mutant of the run `runSeed`. */
export function mutant(runSeed: number, index: number, seeds: FuzzSeed[]): { seed: FuzzSeed; bytes: Uint8Array; kind: 'byte' | 'model' } {
  const rng = rngOf((runSeed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const seed = pick(rng, seeds);
  if (rng() < 0.5) {
    const bytes = modelMutant(rng, seed);
    if (bytes) return { seed, bytes, kind: 'model' };
  }
  return { seed, bytes: byteMutant(rng, seed.bytes), kind: 'byte' };
}
