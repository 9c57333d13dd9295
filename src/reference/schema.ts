// The reference outputs file `trtx export` writes beside a program
// (`MODEL.pte.reference.json`, docs/reference-lowering.md §2): eager
// PyTorch's inputs and outputs of every method, step by step, as zod
// schemas. schemas/reference-outputs.schema.json is generated from them
// (`npm run gen`, scripts/gen-schemas.ts).

import { z } from 'zod';
import { DTYPES } from '../util/dtype.js';

export const REFERENCE_SCHEMA_ID = 'trtx.reference/1';
/** The inputs every step is fed: the runner's own pattern (native-runner/src/cli/step_io.h). */
export const REFERENCE_INPUTS = 'trtx-step-v1';

const dim = z.number().int().min(0);

export const RefTensor = z.strictObject({
  kind: z.literal('tensor'),
  dtype: z.enum(DTYPES).describe("torch's dtype name"),
  shape: z.array(dim).max(16),
  data: z
    .string()
    .regex(/^[A-Za-z0-9+/]*={0,2}$/)
    .describe("the tensor's bytes, contiguous, little-endian, base64; numel x itemsize of them"),
});
export type RefTensor = z.infer<typeof RefTensor>;

export const RefValue = z.discriminatedUnion('kind', [
  RefTensor,
  z.strictObject({ kind: z.literal('int'), value: z.number().int() }),
  z.strictObject({ kind: z.literal('float'), value: z.number() }),
  z.strictObject({ kind: z.literal('bool'), value: z.boolean() }),
  z.strictObject({ kind: z.literal('none') }),
]);
export type RefValue = z.infer<typeof RefValue>;

export const RefStep = z.strictObject({ inputs: z.array(RefValue), outputs: z.array(RefValue) });

export const RefMethod = z.strictObject({
  name: z.string().min(1),
  steps: z.array(RefStep).describe("one per step, in the runner's order"),
});

export const ReferenceFile = z
  .strictObject({
    schema: z.literal(REFERENCE_SCHEMA_ID),
    producer: z.strictObject({ torch: z.string(), executorch: z.string() }).describe('the packages the eager run used'),
    model: z.string().describe('the model file exported'),
    program: z.string().describe('the program file these outputs belong to'),
    steps: z.number().int().min(1).describe('executions of each method'),
    inputs: z.literal(REFERENCE_INPUTS).describe('the inputs each step was fed'),
    methods: z.array(RefMethod).min(1),
  })
  .meta({
    title: 'trtx reference outputs, version 1',
    description:
      "Eager PyTorch's inputs and outputs of every method of an exported model, step by step, written by `trtx export` beside the program (MODEL.pte.reference.json) and compared by `trtx verify` (docs/reference-lowering.md). Generated from src/reference/schema.ts by `npm run gen`.",
  });
export type ReferenceFile = z.infer<typeof ReferenceFile>;
