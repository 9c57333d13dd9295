// The bridge protocol, version 2, as zod schemas. schemas/bridge-protocol.schema.json
// is the language-neutral statement of the same thing; a test checks that both
// accept and refuse the same samples. Every line the bridge writes on stdout
// must parse as `BridgeEvent`; anything else is a bridge failure.

import { z } from 'zod';

export const PROTOCOL_VERSION = 2;

/** What the delegates carry: TensorRT plans (Torch-TensorRT) or trtx reference engines (python-bridge/trtx_bridge/reference). */
export const EngineKind = z.enum(['tensorrt', 'reference']);
export type EngineKind = z.infer<typeof EngineKind>;

const BUDGET_LIMIT = 1n << 63n;

const methodName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);
const upperCode = z.string().regex(/^[A-Z][A-Z0-9_]*$/);
const stageName = z.string().regex(/^[a-z][a-z_]*$/);

/** Decimal bytes below 2^63, as a string: JSON numbers lose precision past 2^53. */
const DECIMAL_BYTES = /^(0|[1-9][0-9]{0,18})$/;
export const DecimalBytes = z
  .string()
  .regex(DECIMAL_BYTES)
  // zod runs every check even after the regex fails; BigInt would throw on "1e9".
  .refine((s) => DECIMAL_BYTES.test(s) && BigInt(s) < BUDGET_LIMIT, { message: 'must be below 2^63' });

/** Most eager steps a request may ask for (request.py MAX_REFERENCE_STEPS, src/export/model-file.ts). */
const MAX_REFERENCE_STEPS = 10_000;

/** The eager reference run (docs/reference-lowering.md §2): where the bridge writes the file, how many steps, the program's final name. */
export const ReferenceRequest = z.strictObject({
  path: z.string().min(1),
  steps: z.number().int().min(1).max(MAX_REFERENCE_STEPS),
  program: z.string().min(1),
});
export type ReferenceRequest = z.infer<typeof ReferenceRequest>;

export const BridgeRequest = z.strictObject({
  protocol: z.literal(PROTOCOL_VERSION),
  model: z.string(),
  output: z.string(),
  methods: z
    .array(methodName)
    .min(1)
    .refine((names) => new Set(names).size === names.length, { message: 'method names repeat' })
    .nullable(),
  budget_bytes: DecimalBytes.nullable(),
  zero_copy_kv: z.boolean(),
  allow_pickle: z.boolean(),
  check_only: z.boolean(),
  engine: EngineKind,
  /** null: no eager run (check_only, or trtx export --no-reference). */
  reference: ReferenceRequest.nullable(),
});
export type BridgeRequest = z.infer<typeof BridgeRequest>;

export const HelloEvent = z.strictObject({
  event: z.literal('hello'),
  protocol: z.literal(PROTOCOL_VERSION),
  bridge_version: z.string(),
  pid: z.number().int().min(1),
});
export type HelloEvent = z.infer<typeof HelloEvent>;

export const ProgressEvent = z.strictObject({
  event: z.literal('progress'),
  stage: stageName,
  fraction: z.number().min(0).max(1),
  message: z.string().optional(),
});
export type ProgressEvent = z.infer<typeof ProgressEvent>;

export const WarningEvent = z.strictObject({
  event: z.literal('warning'),
  message: z.string(),
  code: upperCode.optional(),
});
export type WarningEvent = z.infer<typeof WarningEvent>;

export const ErrorEvent = z.strictObject({
  event: z.literal('error'),
  type: upperCode,
  message: z.string(),
  hint: z.string(),
  stage: stageName.optional(),
});
export type ErrorEvent = z.infer<typeof ErrorEvent>;

export const Versions = z.strictObject({
  python: z.string(),
  torch: z.string(),
  /** null when the request did not need it (engine reference) and it is not installed. */
  torch_tensorrt: z.string().nullable(),
  executorch: z.string(),
});
export type Versions = z.infer<typeof Versions>;

export const Capabilities = z.strictObject({
  zero_copy_kv: z.boolean(),
  check_zero_copy_kv: z.boolean(),
  weight_streaming_budget: z.boolean(),
  upstream_inplace_lineage: z.boolean(),
});
export type Capabilities = z.infer<typeof Capabilities>;

const Spec = z.strictObject({
  kind: z.string(),
  name: z.string().nullable(),
  target: z.string().nullable(),
});

export const MethodSignature = z.strictObject({
  inputs: z.array(Spec),
  outputs: z.array(Spec),
  user_inputs: z.array(z.string()),
  user_outputs: z.array(z.string()),
  /** Output value name -> buffer FQN. */
  buffers_to_mutate: z.record(z.string(), z.string()),
  /** Input placeholder name -> buffer FQN. */
  inputs_to_buffers: z.record(z.string(), z.string()),
});
export type MethodSignature = z.infer<typeof MethodSignature>;

export const ExportedMethod = z.strictObject({
  name: methodName,
  signature: MethodSignature,
  mutations: z.strictObject({
    copy_back: z.array(z.string()),
    in_place: z.array(z.string()),
    reordered: z.number().int().min(0),
  }),
});
export type ExportedMethod = z.infer<typeof ExportedMethod>;

export const CheckResult = z.strictObject({
  event: z.literal('result'),
  mode: z.literal('check'),
  python: z.strictObject({ executable: z.string(), version: z.string() }),
  versions: Versions,
  capabilities: Capabilities,
});
export type CheckResult = z.infer<typeof CheckResult>;

export const ExportResult = z.strictObject({
  event: z.literal('result'),
  mode: z.literal('export'),
  protocol: z.literal(PROTOCOL_VERSION),
  engine: EngineKind,
  program: z.strictObject({
    path: z.string(),
    bytes: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  /** The reference file written (request.reference.path), or null: none asked, or the eager run failed (REFERENCE_EAGER_FAILED). */
  reference: z.string().nullable(),
  methods: z.array(ExportedMethod).min(1),
  zero_copy_kv: z.boolean(),
  /** Who un-stages the KV caches: Torch-TensorRT's zero-copy export, or trtx's rewrite of a staged export; null without zero-copy. */
  zero_copy_kv_path: z.enum(['torch_tensorrt', 'trtx']).nullable(),
  weight_streaming: z.strictObject({
    budget_bytes: DecimalBytes.nullable(),
    enabled_at_compile: z.boolean(),
    budget_baked: z.boolean(),
  }),
  versions: Versions,
  capabilities: Capabilities,
});
export type ExportResult = z.infer<typeof ExportResult>;

export const ResultEvent = z.discriminatedUnion('mode', [CheckResult, ExportResult]);
export type ResultEvent = z.infer<typeof ResultEvent>;

export const BridgeEvent = z.union([HelloEvent, ProgressEvent, WarningEvent, ResultEvent, ErrorEvent]);
export type BridgeEvent = z.infer<typeof BridgeEvent>;

export type LineParse = { ok: true; event: BridgeEvent } | { ok: false; reason: string };

/** Parses one stdout line (without its newline) into an event, or says why not. */
export function parseEventLine(line: string): LineParse {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const parsed = BridgeEvent.safeParse(value);
  if (parsed.success) return { ok: true, event: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') + ': ' : '';
  return { ok: false, reason: `not a protocol event (${where}${issue?.message ?? 'invalid'})` };
}
