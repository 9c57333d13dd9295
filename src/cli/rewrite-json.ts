// `trtx rewrite --json` (schemas/rewrite.schema.json, generated from this by
// scripts/gen-schemas.ts): the trtx.rewrite/1 document rewrite.ts builds
// (typed as the inferred type); each pass's details are the pass's own
// (src/passes/details-json.ts, through src/pipeline/pass-details-json.ts).
import { z } from 'zod';
import { PassJson } from '../pipeline/pass-details-json.js';
import { ErrorDocument } from '../util/error-document.js';

const count = z.number().int().min(0);

export const RewriteReport = z.strictObject({
  schema: z.literal('trtx.rewrite/1'),
  input: z.string().describe('IN as given on the command line.'),
  output: z.string().describe('Where the program was written: OUT, or IN with --in-place.'),
  mode: z
    .enum(['unchanged', 'in-place', 'atomic'])
    .describe(
      'unchanged: nothing changed and the file was left untouched; in-place: only the program head was rewritten; atomic: a full rewrite to a temporary file renamed over OUT.',
    ),
  fallback: z.string().nullable().describe('With mode atomic after --in-place: why the head could not be rewritten in place; else null.'),
  hard_links_broken: count.describe(
    'With a fallback under --break-hard-links: how many other hard links of IN still name the old program (the file was replaced by a new one); else 0. Without the flag such a fallback is refused (REWRITE_HARD_LINKS).',
  ),
  recovered_interrupted_rewrite: z.boolean().describe('An interrupted --in-place rewrite of IN was finished from its journal first.'),
  changes: z.array(z.string()).describe('One line per change, for people (the lines of passes that changed something).'),
  passes: z.array(PassJson).describe('The passes the flags asked for, in the order they ran.'),
  warnings: z.array(z.string()).describe('Pass warnings and check warnings on the result, as `CODE: message` lines.'),
  file_size: count.describe('Size of the written (or untouched) file.'),
  segment_alignment: z.number().int().min(1).nullable().describe('Segment alignment of an atomic rewrite; null otherwise.'),
  stale_temporary_files: z
    .strictObject({
      removed: z.array(z.string()),
      left: z.array(z.strictObject({ path: z.string(), why: z.string(), remove: z.string() })),
    })
    .describe(
      "Temporary files of trtx's own naming beside OUT that a killed writer left (docs/reliability.md): removed when their writer process is gone, else left with why and the command that removes them.",
    ),
  reference: z
    .strictObject({
      path: z.string().describe('OUT.reference.json as written.'),
      source: z.string().describe('IN.reference.json, which it copies.'),
    })
    .nullable()
    .describe(
      "With -o OUT: eager PyTorch's reference outputs (IN.reference.json, written by trtx export) copied to OUT.reference.json, atomically, right after OUT, so that trtx verify OUT compares with them (a rewrite does not change what the program computes). null when IN has none beside it, and with --in-place (the file beside IN already belongs to the program).",
    ),
  reference_removed: z
    .string()
    .nullable()
    .describe(
      'With -o OUT when IN has no reference outputs beside it: the stale OUT.reference.json of the program OUT held before, removed (as trtx export removes one); else null.',
    ),
});
export type RewriteReport = z.infer<typeof RewriteReport>;

export const RewriteOutput = z.union([RewriteReport, ErrorDocument]).meta({
  title: 'trtx rewrite --json, version 1',
  description:
    'What `trtx rewrite IN (-o OUT | --in-place) [flags] --json` prints on stdout after writing (exit 0). A refusal (usage, unreadable input, a result that fails a check: nothing written) prints the error document of schemas/error.schema.json instead. Byte counts that may pass 2^53 (budgets, cache and arena sizes) are decimal strings. Written by src/cli/commands/rewrite.ts (the pass reports of src/pipeline/) as src/cli/rewrite-json.ts says; test/cli-json-schemas.test.ts validates real outputs against this file.',
});
