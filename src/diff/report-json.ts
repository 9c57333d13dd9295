// `trtx diff --json` (schemas/diff.schema.json, generated from this by
// scripts/gen-schemas.ts): the report report.ts types as the inferred type.
import { z } from 'zod';
import { DecimalBudget as budgetBytes } from '../util/decimal-json.js';
import { ErrorDocument } from '../util/error-document.js';

const count = z.number().int().min(0);
const text = z.string().nullable();
const change = z.enum(['added', 'removed', 'changed']);
const device = z.string().regex(/^(cpu|cuda:[0-9]+)$/);

export const Scalar = z.union([z.string(), z.number(), z.boolean()]);

export const FieldChange = z
  .strictObject({ field: z.string(), before: Scalar.nullable(), after: Scalar.nullable() })
  .describe('A value that differs; null on the side that has none (an addition or a removal).');

export const InstructionChange = z.strictObject({
  chain: count,
  change: z.enum(['added', 'removed', 'moved']),
  before_index: count.nullable().describe("Index in A's chain; null for an addition."),
  after_index: count.nullable().describe("Index in B's chain; null for a removal."),
  kind: z.string().regex(/^(KernelCall|DelegateCall|MoveCall|JumpFalseCall|FreeCall|None)$/),
  op: text.describe('Operator name and overload of a kernel call, e.g. et_copy::_h2d_copy.out; null otherwise.'),
  text: z
    .string()
    .describe(
      'The instruction described by meaning: a tensor by its fully qualified name, else in#N / out#N (method input/output), else delegateN.BINDING (the delegate argument it is), else dtype[shape]@aARENA(device); scalars by value.',
    ),
});

export const DelegateArgChange = z.strictObject({
  call: count,
  change: z.enum(['added', 'removed', 'rebound']),
  name: z.string().describe('TensorRT binding name, or argN where the binding is not known.'),
  before: text,
  after: text,
});

export const SpecValue = z.strictObject({
  size: count,
  raw: z.string().describe('Printable form of the value bytes.'),
  decoded: z
    .union([
      z.strictObject({ target_device: z.string().regex(/^cuda:[0-9]+$/) }),
      z.strictObject({ budget_bytes: budgetBytes, budget_iec: z.string() }),
      z.strictObject({ zero_copy_kv: z.array(z.string()).min(1) }),
    ])
    .nullable(),
  error: text.describe('Why the value does not decode, for a key trtx owns.'),
});

export const SpecChange = z.strictObject({ key: text, change, before: SpecValue.nullable(), after: SpecValue.nullable() });

const beforeAfterCount = z.strictObject({ before: count, after: count });

export const DelegateDiff = z.strictObject({
  index: count,
  backend_id: text,
  change,
  calls: beforeAfterCount.nullable().describe('DelegateCall instructions calling it, when the count differs.'),
  args: z.array(DelegateArgChange),
  compile_specs: z.array(SpecChange),
  blob: z
    .array(FieldChange)
    .describe(
      'Processed data and TensorRT blob facts that differ: data.location, data.size, blob, magic, engine_size, io_binding, aliased_io, hardware_compatible, device_id, target_platform, serialized_metadata.',
    ),
});

export const ArenaState = z.strictObject({ size: count, device: z.string().regex(/^(reserved|cpu|cuda:[0-9]+)$/) });

export const ArenaChange = z.strictObject({ index: count, before: ArenaState.nullable(), after: ArenaState.nullable() });

export const TensorPlace = z.strictObject({
  dtype: z.string(),
  shape: z.array(z.number().int()),
  arena: count.nullable(),
  offset: count.nullable(),
  device,
  tagged_device: device,
});

export const TensorChange = z.strictObject({
  name: z.string(),
  change,
  moved: z.boolean(),
  retyped: z.boolean(),
  before: TensorPlace.nullable(),
  after: TensorPlace.nullable(),
});

export const IoChange = z.strictObject({ role: z.enum(['input', 'output']), index: count, before: text, after: text });

export const StagingCounts = z.strictObject({ host_to_device_bytes: count, device_to_host_bytes: count, copies: count });

export const MethodDiff = z.strictObject({
  name: z.string(),
  change,
  io: z.array(IoChange).describe('Method inputs and outputs (by position) whose description differs.'),
  instructions: z
    .array(InstructionChange)
    .describe(
      "A minimal edit script per chain (longest common subsequence of the instructions' descriptions); an instruction removed in one place and added in another is `moved`.",
    ),
  delegates: z.array(DelegateDiff),
  arenas: z.array(ArenaChange).describe('Planned arenas (non_const_buffer_sizes index, 0 reserved) whose size or device differs.'),
  tensors: z
    .array(TensorChange)
    .describe(
      'Tensors with a fully qualified name (mutable buffers) added, removed, moved (arena, offset, arena device or tagged device) or retyped (dtype, shape).',
    ),
  staging: z
    .strictObject({ before: StagingCounts, after: StagingCounts })
    .nullable()
    .describe('Bytes the et_copy::_h2d_copy and _d2h_copy kernels move per execution, when they differ.'),
});

export const SegmentChange = z.strictObject({ index: count, before: count.nullable(), after: count.nullable() });

export const DiffReport = z.strictObject({
  schema: z.literal('trtx.diff/1'),
  a: z.string().describe('The program before.'),
  b: z.string().describe('The program after.'),
  method: text.describe(
    'The --method filter, or null for every method. With a filter, header, program and segments are left empty (they speak of every method).',
  ),
  equivalent: z.boolean().describe('No difference of meaning.'),
  changes: count.describe('Number of change entries in the report; a method or delegate added or removed counts once.'),
  header: z.array(FieldChange).describe('Header fields that differ: extended_header (present), extended_header.magic, segment_alignment.'),
  program: z
    .array(FieldChange)
    .describe(
      'Program fields that differ: version, constant_data_bytes, constant_tensors, mutable_data_segments, named_data (a key added or removed), named_data[KEY].size.',
    ),
  segments: z.strictObject({
    count: beforeAfterCount.nullable(),
    sizes: z.array(SegmentChange).describe('Segments (by index) whose size differs; null where the segment does not exist.'),
  }),
  methods: z.array(MethodDiff).describe('Methods with at least one change, matched by name. An added or removed method has empty lists.'),
});

export const DiffOutput = z.union([DiffReport, ErrorDocument]).meta({
  title: 'trtx diff --json, version 1',
  description:
    'What `trtx diff A B --json` prints on stdout: a report, or the error document of schemas/error.schema.json when a file cannot be read as a program (exit 2 for usage or an unreadable, non-.pte or directory input, 1 for a file that fails to decode). The report exits 0 whether or not the programs differ, unless --exit-code is given (then 1 when they differ). Programs are compared by meaning: methods by name, instructions by operator and arguments described by name or role (never by value index), delegates by index and backend id, compile specs by decoded value. Every list holds changes only; `equivalent` is true exactly when `changes` is 0. Layout (offsets, program size, segment base) and segment contents are not compared. Byte counts are JSON numbers (exact below 2^53) except budgets, which are decimal strings. Written by src/diff/ as src/diff/report-json.ts says; test/diff-cli.test.ts validates real outputs against this file.',
});
