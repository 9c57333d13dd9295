// Structure-heavy mutants (issue 27): sound FlatBuffers whose structure is
// large, the shapes random mutation does not reach and that found the
// stack overflows, the report amplification and the quadratic renderers:
// - a wide shape (thousands of dimensions) named by many references;
// - indices repeated: a method input, an output, a kernel argument or a
//   list item naming one value thousands of times;
// - many planned buffers (copies of a planned tensor);
// - many out-of-range method inputs;
// - many instructions and operators (the diff's edit script).
// Scale and shape are a pure function of (run seed, index): a failure names
// both, and replays with structureMutant(seed, index, seeds).

import type { EValue, Program } from '../../src/pte/model.js';
import { buildProgram } from '../../src/examples/builder.js';
import { catalogueEntry } from '../../src/examples/catalogue.js';
import type { SegmentSource } from '../../src/pte/write.js';
import { rngOf, type Rng } from './fuzz.js';
import { encodePte } from './memory-pte.js';

export interface StructureSeed {
  name: string;
  program: Program;
  segments: SegmentSource[];
  bytes: Uint8Array;
}

const SEED_FILES = ['trt-single.pte', 'kv-decode-staged.pte', 'mixed-conv-state-split-zero-copy.pte'];

export function structureSeeds(): StructureSeed[] {
  return SEED_FILES.map((name) => {
    const built = buildProgram(catalogueEntry(name).build());
    return { name, program: built.program, segments: built.segments, bytes: encodePte(built.program, built.segments) };
  });
}

const int = (rng: Rng, n: number) => Math.floor(rng() * n);
/** A count between 1,000 and `max`, spread over orders of magnitude. */
const scale = (rng: Rng, max: number) => Math.floor(1000 * Math.pow(max / 1000, rng()));

type Shape = (rng: Rng, p: Program) => string;

const planned = (p: Program) => {
  const plan = p.executionPlan[0];
  const index = plan.values.findIndex((v) => v.type === 'Tensor' && v.tensor.allocationInfo !== null);
  return { plan, index: index < 0 ? 0 : index };
};

const SHAPES: Record<string, Shape> = {
  'wide shape, many references': (rng, p) => {
    const { plan, index } = planned(p);
    const v = plan.values[index];
    const dims = scale(rng, 50_000);
    if (v?.type === 'Tensor') {
      v.tensor.sizes = new Array<number>(dims).fill(1);
      v.tensor.dimOrder = Array.from({ length: dims }, (_, i) => i);
    }
    const refs = scale(rng, 200_000);
    for (let i = 0; i < refs; i++) (i % 2 ? plan.outputs : plan.inputs).push(index);
    return `${dims} dims x ${refs} refs`;
  },
  'repeated kernel arguments': (rng, p) => {
    const { plan, index } = planned(p);
    const n = scale(rng, 200_000);
    const call = plan.chains.flatMap((c) => c.instructions).find((i) => i.type === 'KernelCall' || i.type === 'DelegateCall');
    if (call && (call.type === 'KernelCall' || call.type === 'DelegateCall')) for (let i = 0; i < n; i++) call.args.push(index);
    return `${n} args`;
  },
  'a list naming one value many times': (rng, p) => {
    const { plan, index } = planned(p);
    const n = scale(rng, 200_000);
    const list: EValue = { type: 'IntList', items: new Array<bigint>(n).fill(BigInt(index)) };
    plan.values.push(list);
    const listIndex = plan.values.length - 1;
    for (let i = 0; i < 1000; i++) plan.inputs.push(listIndex);
    return `${n} items x 1000 refs`;
  },
  'many planned buffers': (rng, p) => {
    const { plan, index } = planned(p);
    const n = scale(rng, 60_000);
    for (let i = 0; i < n; i++) plan.values.push(structuredClone(plan.values[index]));
    return `${n} buffers`;
  },
  'many out-of-range inputs': (rng, p) => {
    const plan = p.executionPlan[0];
    const n = scale(rng, 150_000);
    for (let i = 0; i < n; i++) plan.inputs.push(plan.values.length + i * (1 + int(rng, 3)));
    return `${n} inputs`;
  },
  'many instructions and operators': (rng, p) => {
    const plan = p.executionPlan[0];
    const n = scale(rng, 60_000);
    const ins = plan.chains[0]?.instructions ?? [];
    const first = ins[0];
    if (!first) return 'no instruction';
    for (let i = 0; i < n; i++) {
      plan.operators.push({ name: `op${i % 977}`, overload: null });
      ins.push(
        first.type === 'KernelCall' ? { ...first, opIndex: plan.operators.length - 1, args: [...first.args] } : structuredClone(first),
      );
    }
    return `${n} instructions`;
  },
};

export const SHAPE_NAMES = Object.keys(SHAPES);

/** The `index`-th structure mutant of run `runSeed`: every shape on every seed in turn, at a scale the rng picks. */
export function structureMutant(
  runSeed: number,
  index: number,
  seeds: StructureSeed[],
): { seed: StructureSeed; shape: string; detail: string; bytes: Uint8Array } {
  const rng = rngOf((runSeed ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
  // Every shape on every seed program in turn; the scale is the rng's.
  const shape = SHAPE_NAMES[index % SHAPE_NAMES.length];
  const seed = seeds[Math.floor(index / SHAPE_NAMES.length) % seeds.length];
  const program = structuredClone(seed.program);
  const detail = SHAPES[shape](rng, program);
  return { seed, shape, detail, bytes: encodePte(program, seed.segments) };
}
