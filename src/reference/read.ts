// Reads a reference outputs file (docs/reference-lowering.md §2): JSON of
// trtx.reference/1, every tensor's base64 decoded and held to exactly
// numel x itemsize bytes. Each refusal is a coded TrtxError at a JSON path.

import { readFile } from 'node:fs/promises';
import { ITEM_SIZE, numelOf, type DType } from '../util/dtype.js';
import { TrtxError } from '../util/errors.js';
import { ReferenceFile, type RefValue } from './schema.js';

/** A recorded value with its tensor bytes decoded. */
export type Value =
  | { kind: 'tensor'; dtype: DType; shape: number[]; data: Uint8Array }
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'none' };

export interface RecordedStep {
  inputs: Value[];
  outputs: Value[];
}

export interface RecordedMethod {
  name: string;
  steps: RecordedStep[];
}

export interface Reference {
  /** The file it was read from. */
  file: string;
  producer: { torch: string; executorch: string };
  model: string;
  program: string;
  steps: number;
  methods: RecordedMethod[];
}

const HINT =
  're-export the program with `trtx export` to record eager PyTorch\u2019s outputs again, or verify without them (--no-reference)';

/** The file `trtx export` writes beside `program`. */
export const referencePathOf = (program: string): string => `${program}.reference.json`;

function decodeValue(v: RefValue, at: string, file: string): Value {
  if (v.kind !== 'tensor') return v;
  const numel = numelOf(v.shape);
  const want = numel === null ? null : numel * ITEM_SIZE[v.dtype];
  const data = Buffer.from(v.data, 'base64');
  if (want === null || data.length !== want) {
    throw new TrtxError(
      'REFERENCE_DATA',
      `${file}: ${at}.data`,
      `${v.dtype} [${v.shape.join(', ')}] needs ${want ?? 'an impossible number of'} bytes; its data holds ${data.length}`,
      { hint: HINT },
    );
  }
  return { kind: 'tensor', dtype: v.dtype, shape: v.shape, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

/** Parses the text of a reference outputs file. */
export function parseReference(text: string, file: string): Reference {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new TrtxError('REFERENCE_JSON', file, `the reference outputs file is not JSON: ${(e as Error).message}`, { hint: HINT });
  }
  const parsed = ReferenceFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue ? `$${issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}` : '$';
    throw new TrtxError(
      'REFERENCE_SCHEMA',
      `${file}: ${at}`,
      `the reference outputs file does not match trtx.reference/1: ${issue?.message ?? 'invalid'}`,
      {
        hint: HINT,
      },
    );
  }
  const r = parsed.data;
  const methods = r.methods.map((m, mi) => {
    if (m.steps.length !== r.steps) {
      throw new TrtxError(
        'REFERENCE_SCHEMA',
        `${file}: $.methods[${mi}].steps`,
        `method ${m.name} records ${m.steps.length} steps; the file says ${r.steps}`,
        {
          hint: HINT,
        },
      );
    }
    return {
      name: m.name,
      steps: m.steps.map((s, si) => ({
        inputs: s.inputs.map((v, k) => decodeValue(v, `$.methods[${mi}].steps[${si}].inputs[${k}]`, file)),
        outputs: s.outputs.map((v, k) => decodeValue(v, `$.methods[${mi}].steps[${si}].outputs[${k}]`, file)),
      })),
    };
  });
  const names = new Set<string>();
  for (const m of methods) {
    if (names.has(m.name))
      throw new TrtxError('REFERENCE_SCHEMA', `${file}: $.methods`, `method ${m.name} is recorded twice`, { hint: HINT });
    names.add(m.name);
  }
  return { file, producer: r.producer, model: r.model, program: r.program, steps: r.steps, methods };
}

/** Reads and parses a reference outputs file; REFERENCE_MISSING when it cannot be read. */
export async function readReference(file: string): Promise<Reference> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new TrtxError(
      'REFERENCE_MISSING',
      file,
      `cannot read the reference outputs file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      {
        hint: 'name the file `trtx export` wrote (PROGRAM.pte.reference.json) with --reference, or verify without it (--no-reference)',
      },
    );
  }
  return parseReference(text, file);
}
