// `trtx export --json` (schemas/export.schema.json, generated from this by
// scripts/gen-schemas.ts): the summary export.ts builds (and imports the
// type of alone). What the bridge reported is stated once, in the bridge
// protocol (schemas/bridge-protocol.schema.json), and referred to here.
import { z } from 'zod';
import { DecimalBytes, EngineKind, ExportedMethod, ExportResult, Versions } from '../bridge/protocol.js';
import { ErrorDocument } from '../util/error-document.js';
import { FindingJson } from '../util/finding-schema.js';

export const ExportSummary = z.strictObject({
  schema: z.literal('trtx.export/1'),
  model: z.string().describe('MODEL as given on the command line.'),
  output: z.string().describe('The absolute path of the written program.'),
  python: z
    .strictObject({ command: z.string(), source: z.enum(['--python', 'TRTX_PYTHON', 'managed']), version: z.string() })
    .describe(
      "The interpreter that ran the bridge and where it came from: --python, TRTX_PYTHON, or trtx's managed environment (made from python-bridge/requirements.lock).",
    ),
  engine: EngineKind.describe(
    'What the TensorRTBackend delegates carry: TensorRT plans built by Torch-TensorRT, or trtx reference engines (`--engine reference`, no TensorRT; the program runs in trtx verify, not on TensorRT).',
  ),
  versions: Versions.describe('The packages the bridge exported with (torch_tensorrt null when the reference lowering ran without it).'),
  methods: z.array(ExportedMethod).min(1),
  bridge: z
    .strictObject({
      zero_copy_kv: z.boolean().describe('--zero-copy-kv was asked of the bridge.'),
      zero_copy_kv_path: ExportResult.shape.zero_copy_kv_path.describe(
        "Which path un-staged the KV caches: torch_tensorrt (its zero-copy export, pytorch/TensorRT#4667) or trtx (a staged export, then trtx's rewrite, as `trtx rewrite --zero-copy-kv` does); null without --zero-copy-kv.",
      ),
      weight_streaming: z.strictObject({
        budget_bytes: DecimalBytes.nullable(),
        enabled_at_compile: z.boolean(),
        budget_baked: z.boolean(),
      }),
    })
    .describe('What the bridge itself did before trtx finished the program.'),
  passes: z
    .array(z.strictObject({ pass: z.enum(['budget', 'zero-copy-kv']), changed: z.boolean(), lines: z.array(z.string()) }))
    .describe("The passes trtx ran on the bridge's program (budget, zero-copy-kv), in order."),
  warnings: z.array(z.string()).describe('Bridge and pass warnings.'),
  diagnostics: z.array(FindingJson).describe('Every finding of the checks on the result; none is an error (an error refuses the export).'),
  file_size: z.number().int().min(0),
  reference: z
    .strictObject({ path: z.string(), steps: z.number().int().min(1) })
    .nullable()
    .describe(
      'OUT.reference.json (docs/reference-lowering.md section 2: the model run eagerly in PyTorch, schemas/reference-outputs.schema.json), renamed beside OUT once OUT is written; null when --no-reference was given or the eager run failed (warning REFERENCE_EAGER_FAILED).',
    ),
  reference_removed: z
    .string()
    .nullable()
    .describe(
      'An OUT.reference.json of an earlier export that this export, written without a reference, removed (it would describe another program); null when there was none.',
    ),
});
export type ExportSummary = z.infer<typeof ExportSummary>;

export const ExportOutput = z.union([ExportSummary, ErrorDocument]).meta({
  title: 'trtx export --json, version 1',
  description:
    "What `trtx export MODEL [-o OUT] --json` prints on stdout once OUT (default: MODEL's name with .pte, beside it) is written (exit 0): what the Python bridge exported, what trtx finished (passes), and the checks on the result. A refusal (usage, a missing, unreadable or unaccepted model file, an existing default OUT without --force, a missing Python or package, a bridge failure, a result that fails a check: nothing written) prints the error document of schemas/error.schema.json instead. Budgets are decimal strings. Written by src/export/export.ts as src/export/summary-json.ts says, and printed by src/cli/commands/export.ts; test/cli-json-schemas.test.ts validates real outputs against this file.",
});
