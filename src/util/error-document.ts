// The --json error document (schemas/error.schema.json, generated from this
// by scripts/gen-schemas.ts): what every command prints on stdout with --json
// when it refuses or fails before it has a report, written by reportError
// (src/cli/context.ts), which imports its type alone.

import { z } from 'zod';
import { CodeName, FindingJson } from './finding-schema.js';

/** The refusal itself: also what `check A B --json` says of a file it could not check. */
export const ErrorDetail = z.strictObject({
  code: CodeName.describe(
    'Stable identifier a script can match, e.g. INPUT_UNREADABLE, USAGE, BRIDGE_IMPORT_MISSING, REWRITE_CHECK_FAILED; docs/codes.md lists them all.',
  ),
  location: z.string().describe('What the error is about: a path, a flag such as --budget, or empty for a general usage error.'),
  message: z.string().regex(/./).describe('What is wrong, one line.'),
  hint: z.string().nullable().describe('What to do about it, one line; null when there is nothing to add.'),
  diagnostics: z
    .array(FindingJson)
    .optional()
    .describe(
      'Present when a check refused the result (REWRITE_CHECK_FAILED, EXPORT_CHECK_FAILED, DEMO_CHECK_FAILED, PASS_INPUT_UNSOUND): the findings behind the refusal, as `trtx check --json` reports them. Absent otherwise.',
    ),
});
export type ErrorDetail = z.infer<typeof ErrorDetail>;

export const ErrorDocument = z.strictObject({ error: ErrorDetail }).meta({
  title: 'trtx --json error document, version 1',
  description:
    'What every trtx command prints on stdout with --json when it refuses or fails before it has a report to print (usage, a missing or unreadable input, an environment problem such as a missing Python package, a rewrite or export whose result fails a check). The exit code is 2 for usage and environment errors, 1 for a failed check. The same refusal is also printed on stderr as one `error: CODE: location: message` line, followed by a `hint:` line when there is a hint (`rewrite` without --json also prints the findings of a check that refused its result there; with --json they are in `diagnostics`, never on stderr). Written by reportError in src/cli/context.ts from src/util/error-document.ts; test/cli-json-schemas.test.ts validates real outputs against this file.',
});
export type ErrorDocument = z.infer<typeof ErrorDocument>;
