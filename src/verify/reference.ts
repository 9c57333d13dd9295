// `trtx verify` against eager PyTorch (docs/reference-lowering.md §4): find
// the reference outputs file `trtx export` wrote beside the program (or the
// one --reference names), feed every run its recorded inputs through a TRXT
// file, read each persistent run's outputs back and compare them, per method,
// output and step, with what PyTorch computed.

import { access } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { writeFile, readFile } from 'node:fs/promises';
import { compareMethods, describeComparison, type OutputComparison, type Tolerance } from '../reference/compare.js';
import { readReference, referencePathOf, type Reference, type Value } from '../reference/read.js';
import { decodeTensorFile, encodeTensorFile, type TensorRecord } from '../runner/tensor-file.js';
import type { EngineCensus } from '../tensorrt/engine-kind.js';
import { TrtxError } from '../util/errors.js';
import { itemAt } from '../util/present.js';
import type { Assertion } from './assertions.js';
import type { VerifyReferenceJson } from './result-json.js';
import type { Variant } from './variants.js';
import type { z } from 'zod';

export interface ReferenceOptions {
  /** A reference outputs file; false: compare with none (--no-reference); default PROGRAM.reference.json when it exists. */
  reference?: string | false;
  /** Overrides of the floating types' tolerances (--atol, --rtol). */
  atol?: number;
  rtol?: number;
}

export type ReferenceStatus = 'compared' | 'none' | 'skipped' | 'synthetic';

/** One output of one run against PyTorch's. */
export type RunComparison = OutputComparison & { run: string; variant: Variant['name']; caller_stream: boolean };

/** The comparison as the result reports it (result-json.ts). */
export type VerifyReference = z.infer<typeof VerifyReferenceJson>;

export interface LoadedReference {
  reference: Reference | null;
  result: VerifyReference;
}

const base = (o: ReferenceOptions): Omit<VerifyReference, 'status' | 'file' | 'note'> => ({
  atol: o.atol ?? null,
  rtol: o.rtol ?? null,
  comparisons: [],
  worst: null,
  ok: true,
});

function checkTolerance(v: number | undefined, flag: string): void {
  if (v !== undefined && !(Number.isFinite(v) && v >= 0))
    throw new TrtxError('VERIFY_TOLERANCE', flag, `${v} is not a finite number of at least 0`);
}

/** Finds and reads the reference outputs, or says why there are none to compare with. */
export async function loadReference(program: string, engines: EngineCensus, o: ReferenceOptions): Promise<LoadedReference> {
  checkTolerance(o.atol, '--atol');
  checkTolerance(o.rtol, '--rtol');
  if (o.reference === false)
    return {
      reference: null,
      result: { status: 'skipped', file: null, note: 'reference outputs not compared (--no-reference)', ...base(o) },
    };
  if (engines.reference > 0 && engines.programs.engines === 0) {
    return {
      reference: null,
      result: {
        status: 'synthetic',
        file: null,
        note: "no comparison with PyTorch: every engine is a synthetic reference engine (a made-up function, not the model), so the program's numbers are synthetic",
        ...base(o),
      },
    };
  }
  const file = o.reference ?? referencePathOf(program);
  if (o.reference === undefined) {
    try {
      await access(file);
    } catch {
      return {
        reference: null,
        result: { status: 'none', file: null, note: 'no reference outputs: the program is compared with itself only', ...base(o) },
      };
    }
  }
  const reference = await readReference(file);
  return { reference, result: { status: 'compared', file, note: `outputs compared with eager PyTorch (${file})`, ...base(o) } };
}

/** The steps verify runs: the file's, or --steps when it asks for at most as many. */
export function referenceSteps(reference: Reference | null, asked: number | undefined, fallback: number): number {
  if (!reference) return asked ?? fallback;
  if (asked === undefined) return reference.steps;
  if (asked > reference.steps)
    throw new TrtxError('VERIFY_REFERENCE_STEPS', '--steps', `--steps ${asked}: the reference outputs record ${reference.steps} steps`, {
      hint: `ask for at most ${reference.steps} steps, re-export with more (--reference-steps), or verify without them (--no-reference)`,
    });
  return asked;
}

/** Writes the recorded inputs of `methods` for `steps` steps as a TRXT file in `dir`. */
export async function writeReferenceInputs(reference: Reference, methods: readonly string[], steps: number, dir: string): Promise<string> {
  const records: TensorRecord[] = [];
  for (const name of methods) {
    const m = reference.methods.find((x) => x.name === name);
    if (!m)
      throw new TrtxError(
        'REFERENCE_PROGRAM',
        reference.file,
        `the program's method ${name} is not recorded (recorded: ${reference.methods.map((x) => x.name).join(', ')})`,
        {
          hint: 're-export the program with `trtx export`: the reference outputs belong to another program',
        },
      );
    // The reader holds every method to the file's step count (src/reference/read.ts), and steps is at most that (referenceSteps).
    for (let s = 0; s < steps; s++)
      itemAt(m.steps, s, `${reference.file} > ${name} step ${s}`).inputs.forEach((value, index) =>
        records.push({ method: name, step: s, index, value }),
      );
  }
  const path = join(dir, 'reference-inputs.trxt');
  await writeFile(path, encodeTensorFile(records));
  return path;
}

/** Reads a run's outputs file and compares it with the recorded outputs. */
export async function compareRunOutputs(
  reference: Reference,
  methods: readonly string[],
  steps: number,
  outputsFile: string,
  run: { label: string; variant: Variant['name']; caller_stream: boolean },
  tolerance: Partial<Tolerance>,
): Promise<RunComparison[]> {
  const records = decodeTensorFile(new Uint8Array(await readFile(outputsFile)), basename(outputsFile));
  const byKey = new Map<string, Value>(records.map((r) => [`${r.method}\u0000${r.step}\u0000${r.index}`, r.value]));
  const recorded = reference.methods.filter((m) => methods.includes(m.name));
  return compareMethods(recorded, steps, (m, s, k) => byKey.get(`${m}\u0000${s}\u0000${k}`), tolerance).map((c) => ({
    ...c,
    run: run.label,
    variant: run.variant,
    caller_stream: run.caller_stream,
  }));
}

/** One assertion per comparison: "outputs match eager PyTorch (FILE): METHOD output K: max abs X, max rel Y over N steps (RUN)". */
export function referenceAssertions(r: VerifyReference): Assertion[] {
  const file = r.file ? basename(r.file) : '';
  return r.comparisons.map((c) => ({
    name: `outputs match eager PyTorch (${file}): ${c.method} output ${c.output}: ${describeComparison(c).split(';')[0]} (${c.run})`,
    ok: c.ok,
    detail: c.ok ? '' : describeComparison(c),
  }));
}

/** The comparison furthest past its tolerance, named for the failure line; null when all pass. */
export function worstComparison(comparisons: readonly RunComparison[]): string | null {
  const failed = comparisons.filter((c) => !c.ok);
  if (!failed.length) return null;
  const score = (c: RunComparison) =>
    c.error ? Infinity : c.max_abs === null ? Infinity : c.max_abs / Math.max(c.atol + c.rtol, Number.MIN_VALUE);
  const w = failed.reduce((a, b) => (score(b) > score(a) ? b : a));
  return `${w.method} output ${w.output} (${w.run}): ${describeComparison(w)}`;
}
