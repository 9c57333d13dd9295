// `trtx check --json` (schemas/check.schema.json, generated from this by
// scripts/gen-schemas.ts): trtx.check/1 for one file, trtx.check-files/1 for
// several. files.ts builds them and imports their types alone.
import { z } from 'zod';
import { ErrorDetail, ErrorDocument } from '../util/error-document.js';
import { FindingJson } from '../util/finding-schema.js';
import { EngineCensusJson } from '../tensorrt/engine-census-json.js';

export { EngineCensusJson };

const count = z.number().int().min(0);

export const CheckSummary = z.strictObject({
  errors: count,
  warnings: count,
  infos: count,
  line: z
    .string()
    .regex(/^[0-9]+ errors?, [0-9]+ warnings?(, [0-9]+ notes?)?$/)
    .describe('The summary line the human output ends with, e.g. "2 errors, 1 warning" (", 1 note" is added when there are infos).'),
});

export const RuntimeRulesJson = z
  .strictObject({ delegate: z.enum(['zero-copy-trt', 'stock-trt']), memory: z.enum(['et-module', 'custom-memory']) })
  .describe(
    "--runtime: whose rules applied. delegate: zero-copy-trt (Torch-TensorRT with the zero-copy KV contract, the default) or stock-trt; memory: et-module (ExecuTorch's Module, the default) or custom-memory.",
  );

export const CheckReport = z.strictObject({
  schema: z.literal('trtx.check/1'),
  file: z.string().describe('The path as given on the command line.'),
  ok: z.boolean().describe('True exactly when the exit code is 0: no error, and no warning under --strict.'),
  strict: z.boolean().describe('--strict was given: warnings fail the check.'),
  zero_copy_kv: z.boolean().describe('--zero-copy-kv was given: every KV cache must be zero-copy.'),
  runtime: RuntimeRulesJson,
  summary: CheckSummary,
  engines: EngineCensusJson.nullable().describe(
    'How many TensorRTBackend delegates hold TensorRT plans, trtx reference engines (made by `trtx export --engine reference` or the example builder (src/examples/): the program runs in trtx verify, not on TensorRT), or neither. null when the file is not a sound container.',
  ),
  diagnostics: z.array(FindingJson),
});
export type CheckReport = z.infer<typeof CheckReport>;

export const CheckRefusal = z
  .strictObject({ file: z.string(), ok: z.literal(false), error: ErrorDetail })
  .describe('One of several files that could not be checked at all (alone it would have exited 2).');
export type CheckRefusal = z.infer<typeof CheckRefusal>;

export const CheckFilesReport = z
  .strictObject({
    schema: z.literal('trtx.check-files/1'),
    ok: z.boolean().describe('True exactly when the exit code is 0: every file was checked and passed.'),
    strict: z.boolean(),
    zero_copy_kv: z.boolean(),
    summary: z.strictObject({
      files: z.number().int().min(2),
      passed: count,
      failed: count.describe('Checked, with errors (or warnings under --strict).'),
      unreadable: count.describe('Not checked: missing, unreadable or not an ExecuTorch program.'),
      errors: count.describe('Error diagnostics over every checked file.'),
      warnings: count,
      line: z
        .string()
        .regex(/^[0-9]+ files: [0-9]+ passed, [0-9]+ failed(, [0-9]+ not checked)?; [0-9]+ errors?, [0-9]+ warnings? in all$/)
        .describe('The summary line the human output ends with, e.g. "3 files: 2 passed, 1 failed; 4 errors, 1 warning in all".'),
    }),
    files: z.array(z.union([CheckReport, CheckRefusal])).min(2),
  })
  .describe('`trtx check A B ... --json`: more than one file.');
export type CheckFilesReport = z.infer<typeof CheckFilesReport>;

export const CheckOutput = z.union([CheckReport, CheckFilesReport, ErrorDocument]).meta({
  title: 'trtx check --json, version 1',
  description:
    "What `trtx check FILE... --json` prints on stdout. One file: a report when the file could be read (exit 0 when `ok`, else 1), or the error document of schemas/error.schema.json when it could not (exit 2: usage, missing or unreadable file, not an ExecuTorch program). Several files: one document of schema trtx.check-files/1 holding a report or a refusal per file, in the order given, and a summary; the exit code is the worst of the files' (2 over 1 over 0). A file that is an ExecuTorch program but not a sound one is a report with error diagnostics, never an error object. Diagnostics come in report order: program-level first, then by method in file order, then by delegate (method-level first), then by location. Written by src/checks/files.ts as src/checks/report-json.ts says, and printed by src/cli/commands/check.ts; test/cli-schemas.test.ts validates real outputs against this file.",
});
