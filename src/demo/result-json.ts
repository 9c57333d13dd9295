// `trtx demo --json` (schemas/demo.schema.json, generated from this by
// scripts/gen-schemas.ts): the result demo.ts types as the inferred type.
// The verify result it embeds is verify's own (src/verify/result-json.ts),
// referred to in the generated schema, not repeated.
import { z } from 'zod';
import { DecimalBudget as budgetBytes } from '../util/decimal-json.js';
import { ErrorDocument } from '../util/error-document.js';
import { CodeName } from '../util/finding-schema.js';
import { VerifyResultJson } from '../verify/result-json.js';

const count = z.number().int().min(0);
const StepBytes = z.strictObject({ h2d: count, d2h: count });

export const DemoResultJson = z.strictObject({
  schema: z.literal('trtx.demo/1'),
  scale: z.enum(['small', 'seed']).describe('--scale: small, or seed (the 30-layer model size of pytorch/TensorRT#4667).'),
  source: z
    .enum(['fixture', 'pytorch'])
    .describe(
      "fixture: the KV decoder built by trtx's example builder (src/examples/); pytorch (--from-pytorch): the bundled PyTorch decoder exported by ExecuTorch with the reference lowering (trtx reference engines, no TensorRT).",
    ),
  staged: z.string().describe('The staged KV decoder the demo built (absolute path under --out).'),
  zero_copy: z.string().describe('The rewritten program: --budget 8GiB --zero-copy-kv (absolute path under --out).'),
  staging: z
    .strictObject({ before: StepBytes, after: StepBytes })
    .describe('Host<->device bytes of one decode step, from the instruction streams of the two programs.'),
  budgets: z
    .array(
      z.strictObject({
        method: z.string(),
        delegate: count,
        bytes: budgetBytes.nullable().describe('Decimal bytes; null when automatic.'),
      }),
    )
    .describe('The weight-streaming budget baked into each TensorRT delegate of the rewritten program.'),
  rewrite: z.array(z.string()).describe('What the rewrite changed, one line per change.'),
  check: z
    .strictObject({
      errors: count,
      warnings: count,
      line: z.string().regex(/^[0-9]+ errors?, [0-9]+ warnings?(, [0-9]+ notes?)?$/),
      diagnostics: z
        .array(
          z.strictObject({
            severity: z.enum(['error', 'warning']),
            code: CodeName,
            location: z.string(),
            message: z.string(),
            hint: z.string(),
          }),
        )
        .describe("The errors and warnings the counts count, in check's report order (schemas/check.schema.json describes each field)."),
    })
    .describe(
      'trtx check --zero-copy-kv on the rewritten program: the counts, the summary line, and each error and warning (notes are left out).',
    ),
  verify: VerifyResultJson.describe(
    'trtx verify --zero-copy-kv of the staged program against the rewritten one, both caller-stream modes: the verify result of schemas/verify.schema.json.',
  ),
  ok: z.boolean().describe('The check found no error and verify held; true exactly when the exit code is 0.'),
});
export type DemoResultJson = z.infer<typeof DemoResultJson>;

export const DemoOutput = z.union([DemoResultJson, ErrorDocument]).meta({
  title: 'trtx demo --json, version 1',
  description:
    'What `trtx demo [--out DIR] [--scale small|seed] --json` prints on stdout: the demo result (exit 0 when `ok`, else 1), or the error document of schemas/error.schema.json when the demo could not run (exit 2) or its rewritten program failed the check (exit 1). Written by src/demo/demo.ts as src/demo/result-json.ts says, and printed by src/cli/commands/demo.ts; test/cli-json-schemas.test.ts validates real outputs against this file.',
});
