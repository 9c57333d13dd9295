// The bridge protocol, version 2, as zod schemas: the one source of the
// contract. schemas/bridge-protocol.schema.json is generated from them
// (scripts/gen-schemas.ts, `npm run gen`), and the Python side
// (python-bridge/trtx_bridge/request.py) is held to the shared vectors of
// test/vectors/bridge-request.json that these schemas and that file both
// judge. Every line the bridge writes on stdout must parse as `BridgeEvent`;
// anything else is a bridge failure.

import { z } from 'zod';
import { decimalBelowPattern } from '../util/decimal-below.js';

export const PROTOCOL_VERSION = 2;

/** What the delegates carry: TensorRT plans (Torch-TensorRT) or trtx reference engines (python-bridge/trtx_bridge/standin_lowering). */
export const EngineKind = z.enum(['tensorrt', 'reference']);
export type EngineKind = z.infer<typeof EngineKind>;

const BUDGET_LIMIT = 1n << 63n;

const methodName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);
const upperCode = z.string().regex(/^[A-Z][A-Z0-9_]*$/);
const stageName = z.string().regex(/^[a-z][a-z_]*$/);

/**
 * Decimal bytes below 2^63, as a string: JSON numbers lose precision past
 * 2^53. The bound is in the pattern itself, so the generated JSON Schema
 * states it exactly (a refinement would not survive the generation).
 */
export const DecimalBytes = z
  .string()
  .regex(new RegExp(decimalBelowPattern(BUDGET_LIMIT)), { message: 'must be decimal digits below 2^63' })
  .meta({ description: 'A byte count as decimal digits (JSON numbers lose precision past 2^53); below 2^63.' });

/** Most eager steps a request may ask for (request.py MAX_REFERENCE_STEPS, src/export/model-file.ts). */
const MAX_REFERENCE_STEPS = 10_000;

/** The eager reference run (docs/reference-lowering.md §2): where the bridge writes the file, how many steps, the program's final name. */
export const ReferenceRequest = z.strictObject({
  path: z.string().min(1),
  steps: z.number().int().min(1).max(MAX_REFERENCE_STEPS),
  program: z.string().min(1),
});
export type ReferenceRequest = z.infer<typeof ReferenceRequest>;

export const BridgeRequest = z
  .strictObject({
    protocol: z.literal(PROTOCOL_VERSION),
    model: z
      .string()
      .meta({ description: 'An ExportedProgram archive (torch.export.save), or `file.py:factory`. Empty only with check_only.' }),
    output: z.string().meta({
      description: 'Where the bridge writes the finalized .pte (a temporary path the caller renames). Empty only with check_only.',
    }),
    methods: z
      .array(methodName)
      .min(1)
      .refine((names) => new Set(names).size === names.length, { message: 'method names repeat' })
      .meta({ uniqueItems: true })
      .nullable()
      .meta({
        description:
          "null: every method the model has. One name for a one-program model names its method; several pick from a factory's methods.",
      }),
    budget_bytes: DecimalBytes.nullable().meta({
      description: 'Weight streaming budget per engine. Non-null turns on enable_weight_streaming at compile.',
    }),
    zero_copy_kv: z.boolean(),
    allow_pickle: z.boolean(),
    check_only: z.boolean().meta({ description: 'Only check the imports and report versions and capabilities.' }),
    engine: EngineKind.meta({
      description:
        'tensorrt: Torch-TensorRT compiles TensorRT engines (needs torch_tensorrt). reference: the reference lowering of python-bridge/trtx_bridge/standin_lowering writes the same delegates with trtx reference engines (needs torch and executorch only).',
    }),
    /** null: no eager run (check_only, or trtx export --no-reference). */
    reference: ReferenceRequest.nullable().meta({
      description:
        "The eager reference run (docs/reference-lowering.md section 2): the bridge runs every method `steps` times on trtx-step-v1 inputs and writes the reference outputs file (schemas/reference-outputs.schema.json) at `path`, a temporary path the caller renames beside the program; `program` is the program's final file name, which the file records. null: no eager run (always with check_only).",
    }),
  })
  // An export names its model and output; a check names neither file and runs no reference.
  .refine((r) => r.check_only || (r.model !== '' && r.output !== ''), { message: 'model and output must name files' })
  .refine((r) => !r.check_only || r.reference === null, { message: 'reference must be null with check_only' })
  .meta({
    if: { properties: { check_only: { const: false } } },
    then: { properties: { model: { type: 'string', minLength: 1 }, output: { type: 'string', minLength: 1 } } },
    else: { properties: { reference: { type: 'null' } } },
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
  stage: stageName.meta({
    description: 'check, load, trace, compile, lower, order_mutations, finalize, verify, write (new stages may appear).',
  }),
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
  type: upperCode.meta({ description: 'Reported by trtx as TrtxError code BRIDGE_<type>.' }),
  message: z.string(),
  hint: z.string(),
  stage: stageName.optional(),
  errno: z
    .string()
    .regex(/^E[A-Z0-9]+$/)
    .optional()
    .meta({
      description:
        'The errno name of the operating-system error behind the failure, when there is one (ENOSPC); trtx reports ENOSPC and EDQUOT as WRITE_NO_SPACE.',
    }),
});
export type ErrorEvent = z.infer<typeof ErrorEvent>;

export const Versions = z.strictObject({
  python: z.string(),
  torch: z.string(),
  /** null when the request did not need it (engine reference) and it is not installed. */
  torch_tensorrt: z
    .string()
    .nullable()
    .meta({ description: 'null when the request did not need it (engine reference) and it is not installed.' }),
  executorch: z.string(),
});
export type Versions = z.infer<typeof Versions>;

export const Capabilities = z
  .strictObject({
    zero_copy_kv: z.boolean(),
    check_zero_copy_kv: z.boolean(),
    weight_streaming_budget: z.boolean(),
    upstream_inplace_lineage: z.boolean(),
  })
  .meta({ description: 'Read off the installed API, not its version.' });
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
  buffers_to_mutate: z.record(z.string(), z.string()).meta({ description: 'Output value name -> buffer fully qualified name.' }),
  inputs_to_buffers: z.record(z.string(), z.string()).meta({ description: 'Input placeholder name -> buffer fully qualified name.' }),
});
export type MethodSignature = z.infer<typeof MethodSignature>;

export const ExportedMethod = z.strictObject({
  name: methodName,
  signature: MethodSignature,
  mutations: z
    .strictObject({
      copy_back: z.array(z.string()),
      in_place: z.array(z.string()),
      reordered: z.number().int().min(0),
    })
    .meta({
      description:
        'Buffers written back by a copy (copy_back) and buffers the engine writes in place (in_place), as ordered on the Edge program before finalization; reordered counts the output slots the ordering pass changed.',
    }),
});
export type ExportedMethod = z.infer<typeof ExportedMethod>;

// The check_only answer: the Python environment and what it can lower (not the
// program checks of src/checks, whose result is CheckResult).
export const EnvironmentCheckResult = z.strictObject({
  event: z.literal('result'),
  mode: z.literal('check'),
  python: z.strictObject({ executable: z.string(), version: z.string() }),
  versions: Versions,
  capabilities: Capabilities,
});
export type EnvironmentCheckResult = z.infer<typeof EnvironmentCheckResult>;

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
  reference: z.string().nullable().meta({
    description:
      'The reference outputs file written (request.reference.path), or null: none was asked, or the eager run failed (warning REFERENCE_EAGER_FAILED).',
  }),
  methods: z.array(ExportedMethod).min(1),
  zero_copy_kv: z.boolean(),
  zero_copy_kv_path: z.enum(['torch_tensorrt', 'trtx']).nullable().meta({
    description:
      "Who un-stages the KV caches when zero_copy_kv was asked: Torch-TensorRT's own zero-copy export (torch_tensorrt), or a staged export that trtx rewrites (trtx); null otherwise.",
  }),
  weight_streaming: z.strictObject({
    budget_bytes: DecimalBytes.nullable(),
    enabled_at_compile: z.boolean(),
    budget_baked: z.boolean().meta({ description: 'Torch-TensorRT wrote the weight_streaming_budget compile spec itself.' }),
  }),
  versions: Versions,
  capabilities: Capabilities,
});
export type ExportResult = z.infer<typeof ExportResult>;

export const ResultEvent = z.discriminatedUnion('mode', [EnvironmentCheckResult, ExportResult]);
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
