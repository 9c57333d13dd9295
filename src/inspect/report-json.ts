// `trtx inspect --json` (schemas/inspect.schema.json, generated from this by
// scripts/gen-schemas.ts): the report summary.ts and delegate-summary.ts
// build, typed as these inferred types.
import { z } from 'zod';
import { EngineCensusJson } from '../tensorrt/engine-census-json.js';
import { DecimalBudget as budgetBytes } from '../util/decimal-json.js';
import { ErrorDocument } from '../util/error-document.js';

const count = z.number().int().min(0);

export const Failure = z
  .strictObject({ error: z.string() })
  .describe("Why a part could not be read: the refusal's one-line form (CODE: location: message).");

export const SpecSummary = z.strictObject({
  key: z.string().nullable(),
  size: count.describe('Bytes in the value.'),
  raw: z.string().describe('The value quoted, non-printable bytes escaped as \\xNN, cut after 48 bytes.'),
  decoded: z
    .strictObject({
      target_device: z
        .string()
        .regex(/^cuda:[0-9]+$/)
        .optional(),
      budget_bytes: budgetBytes.optional(),
      budget_iec: z.string().optional(),
      zero_copy_kv: z.array(z.string()).min(1).optional(),
    })
    .optional()
    .describe('The typed value of a key trtx owns, when it is valid; one member per key.'),
  error: z.string().optional().describe('Why a key trtx owns has an invalid value.'),
});

const nullableCount = count.nullable();

export const EngineStreamingJson = z
  .strictObject({
    weight_streaming: z.boolean(),
    streamable_weight_bytes: count,
    budget_bytes: nullableCount,
    resident_bytes: nullableCount,
    streamed_bytes_per_execute: nullableCount,
  })
  .describe(
    "What the engine keeps on the device and streams under its delegate's baked weight_streaming_budget: an explicit budget is clamped to the streamable weights, min(budget, weights) stays resident and the rest streams in per execute; an engine not built for streaming keeps every weight resident (streamed 0); with no budget (automatic) TensorRT decides at load (resident and streamed null). A synthetic engine's (version 1) weights are made up.",
  );

const TensorrtBlob = z.strictObject({
  magic: z.string().regex(/^TR0[12]$/),
  engine_size: count,
  engine: z
    .enum(['tensorrt', 'reference', 'unknown'])
    .describe(
      'What the engine bytes are: a TensorRT plan (`ftrt`), a trtx reference engine (`TRXE`: made by `trtx export --engine reference` or the example builder (src/examples/); runs in trtx verify, not on TensorRT), or neither.',
    ),
  reference: z
    .strictObject({
      version: z.number().int().min(1),
      synthetic: z.boolean(),
      program: z.strictObject({ instructions: count, operators: count, weight_bytes: count, program_bytes: count }).nullable(),
      streaming: EngineStreamingJson,
    })
    .nullable()
    .describe(
      'A reference engine that decodes: version 2 or 3 (synthetic false, program: the partition as an ExecuTorch program) or version 1 (synthetic true: fixtures and benchmarks, a made-up function, not the model); null for a TensorRT plan, another engine, or one that does not decode.',
    ),
  inputs: z.array(z.string()),
  outputs: z.array(z.string()),
  aliased: z.array(
    z.strictObject({
      output: z.string(),
      input: z.string(),
      kind: z.string().regex(/^(kv_cache_update|user)$/),
    }),
  ),
});

export const DelegateSummary = z.strictObject({
  index: count,
  backend_id: z.string().nullable(),
  data: z.union([z.strictObject({ location: z.enum(['inline', 'segment']), index: count, size: count }), Failure]),
  compile_specs: z.array(SpecSummary),
  tensorrt: z
    .union([TensorrtBlob, Failure])
    .optional()
    .describe("Present on TensorRTBackend delegates: the blob's header and metadata, or why it did not parse."),
});

export const TensorSummary = z.strictObject({
  index: count.describe('Value index in the method.'),
  name: z
    .string()
    .nullable()
    .describe(
      'The fully qualified name, when the tensor has one. A name over 200 characters is shown as its first 200, then `\u2026(N bytes, #hash)` (src/util/display.ts); real names are shorter.',
    ),
  dtype: z.string().describe("Lower-case ScalarType name (float, half, long, ...), or the value's type when it is not a tensor."),
  shape: z.array(z.number().int()),
  device: z
    .string()
    .regex(/^(cpu|cuda:[0-9]+|-)$/)
    .describe('cpu or cuda:N (the arena\'s device when planned, else the tag); "-" for a non-tensor.'),
});

export const Counts = z.record(z.string(), z.number().int().min(1)).describe('How many of each kind (EValue or instruction type).');

export const MethodSummary = z.strictObject({
  name: z.string().nullable(),
  inputs: z.array(TensorSummary),
  outputs: z.array(TensorSummary),
  values: Counts,
  instructions: Counts,
  operators: z.array(z.strictObject({ name: z.string().nullable(), overload: z.string().nullable(), calls: count })),
  arenas: z
    .array(z.strictObject({ index: count, size: z.number().int(), device: z.string().regex(/^(reserved|cpu|cuda:[0-9]+)$/) }))
    .describe('non_const_buffer_sizes with each arena\'s device; arena 0 is "reserved".'),
  delegates: z.array(DelegateSummary),
  staging: z
    .strictObject({ host_to_device_bytes: count, device_to_host_bytes: count, copies: count })
    .describe('Bytes the _h2d_copy and _d2h_copy kernels move in one execution.'),
});

export const InspectHeader = z.strictObject({
  root_offset: count,
  // A pattern, not a literal: the builder passes the header's identifier on as read (it was checked).
  file_identifier: z.string().regex(/^ET12$/),
  extended_header: z
    .strictObject({
      magic: z.string().regex(/^eh[0-9]{2}$/),
      length: z.number().int().min(24),
      program_size: count,
      segment_base_offset: count.describe('0 when the file has no segments.'),
      segment_data_size: count.nullable().describe('null in older files whose header is too short to carry it.'),
    })
    .nullable(),
});

export const InspectProgram = z.strictObject({
  version: count,
  methods: count.describe('How many methods the program has (all of them, whatever --method says).'),
  constant_data_bytes: count.describe("The constant segment's size plus inline constant buffers."),
  segments: z.array(z.strictObject({ index: count, offset: count.describe('Absolute file offset.'), size: count })),
});

export const InspectReport = z.strictObject({
  schema: z.literal('trtx.inspect/1'),
  file: z.string(),
  file_size: count,
  header: InspectHeader,
  program: InspectProgram,
  engines: EngineCensusJson.describe(
    'How many TensorRTBackend delegates of the methods shown hold TensorRT plans, trtx reference engines, or neither (or a blob that does not parse).',
  ),
  methods: z.array(MethodSummary).describe('Every method, or only the one --method names.'),
});

export const InspectOutput = z.union([InspectReport, ErrorDocument]).meta({
  title: 'trtx inspect --json, version 1',
  description:
    'What `trtx inspect FILE --json` prints on stdout: a report (exit 0), or the error document of schemas/error.schema.json when the file cannot be read as a program (exit 1 for a file that fails to decode, 2 for usage or an unreadable file). Only headers, the program and TensorRT blob metadata are read, never segment bodies. Byte counts are JSON numbers (exact below 2^53) except budgets, which are decimal strings. Written by src/inspect/summary.ts as src/inspect/report-json.ts says; test/cli-schemas.test.ts validates real outputs against this file.',
});
