// A finding as the --json documents carry it (schemas/check.schema.json
// `$defs/diagnostic`, referred to by every document that lists findings):
// the zod schema the JSON Schema is generated from (scripts/gen-schemas.ts).
// Only the generator and the tests load it at run time; the code that makes
// findings imports its type alone, so no command pays for zod.

import { z } from 'zod';
import type { Code } from '../codes/index.js';

/**
 * A stable identifier of src/codes/ (docs/codes.md). The JSON Schema states
 * its form, not the list (which grows); the type is the list, so a builder
 * typed as a document's inferred type still takes only listed codes.
 */
export const CodeName = z.string().regex(/^[A-Z][A-Z0-9_]*$/) as unknown as z.ZodType<Code>;

export const FindingJson = z
  .strictObject({
    severity: z.enum(['error', 'warning', 'info']),
    code: CodeName.describe(
      'Stable identifier a script can match, e.g. TRT_ARITY, STRUCT_VALUE_INDEX, SPEC_BUDGET_INVALID, TRT_BLOB_MAGIC, PTE_REWRITE_INTERRUPTED.',
    ),
    method: z.string().nullable().describe('The method the finding is in; null for program-level findings.'),
    delegate: z.number().int().min(0).nullable().describe('Index of the delegate within the method, when the finding concerns one.'),
    location: z
      .string()
      .regex(/./)
      .describe(
        'Where, as a path from the method down, e.g. "decode > delegate 0 (TensorRTBackend) > binding k_out"; "program" or a header field for program-level findings.',
      ),
    message: z.string().describe('What is wrong, one line.'),
    hint: z.string().describe('What to do about it, one line.'),
  })
  .describe('A finding of the checks, as `trtx check --json` reports them.');
export type FindingJson = z.infer<typeof FindingJson>;
