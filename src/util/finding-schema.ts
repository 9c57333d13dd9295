// A finding as the --json documents carry it (schemas/error.schema.json
// `$defs/diagnostic`, referred to by every document that lists findings):
// the zod schema the JSON Schema is generated from (scripts/gen-schemas.ts).
// Only the generator and the tests load it at run time; the code that makes
// findings imports its type alone, so no command pays for zod.

import { z } from 'zod';

/** A stable identifier of src/codes/ (docs/codes.md). */
export const CodeName = z.string().regex(/^[A-Z][A-Z0-9_]*$/);

export const FindingJson = z
  .strictObject({
    severity: z.enum(['error', 'warning', 'info']),
    code: CodeName.describe('Stable identifier (docs/codes.md).'),
    method: z.string().nullable().describe('The method the finding is in; null for program-level findings.'),
    delegate: z.number().int().min(0).nullable().describe('Index of the delegate within the method, when the finding concerns one.'),
    location: z.string().regex(/./).describe('Where, as a path from the method down.'),
    message: z.string().describe('What is wrong, one line.'),
    hint: z.string().describe('What to do about it, one line.'),
  })
  .describe('A finding of the checks, as `trtx check --json` reports them.');
export type FindingJson = z.infer<typeof FindingJson>;
