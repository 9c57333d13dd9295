// `trtx verify --json` (schemas/verify.schema.json, generated from this by
// scripts/gen-schemas.ts; `trtx demo --json` refers to it): the result
// result.ts types as the inferred type. What the runner reported and what
// the check found are stated once, in their own schemas, and referred to.
import { z } from 'zod';
import { CheckSummary, RuntimeRulesJson } from '../checks/report-json.js';
import { EngineCensusJson } from '../tensorrt/engine-census-json.js';
import { EngineKernels, RunnerBackend, RunnerDevice, RunnerError } from '../runner/report.js';
import { DecimalBudget as budgetBytes, DecimalU64 as u64Bytes } from '../util/decimal-json.js';
import { ErrorDocument } from '../util/error-document.js';
import { FindingJson } from '../util/finding-schema.js';

const count = z.number().int().min(0);
const variant = z.enum(['as-is', 'staged', 'zero-copy']);
const standIn = z.strictObject({ h2d_bytes: count, d2h_bytes: count });

export const VerifyRunJson = z.strictObject({
  variant,
  caller_stream: z.boolean(),
  fresh_state: z.boolean().describe('Caches reset before every step (the run a persistent one must differ from).'),
  init_device_buffers: z
    .boolean()
    .describe(
      'The runner zeroed device-resident buffers after each load (the verify option, or the run that tells whether the program reads them before writing).',
    ),
  exit_code: z.number().int().min(0).max(3),
  ok: z.boolean(),
  errors: z.array(RunnerError),
  staging: z
    .array(
      z.strictObject({
        method: z.string(),
        h2d_bytes: count,
        d2h_bytes: count,
        step_median_us: z
          .number()
          .min(0)
          .nullable()
          .describe('Median wall time of a step in microseconds (null from a runner that does not time steps).'),
        engine_stand_in_bytes: standIn
          .nullable()
          .describe(
            "Bytes the stand-in engines moved between device and host to run their partitions on CPU kernels in the first step (a reference engine's artifact, not in h2d_bytes/d2h_bytes); null from a runner that does not count them.",
          ),
      }),
    )
    .describe('Host<->device bytes of one execution of each method (the first step).'),
});

const weightBytes = budgetBytes.nullable();

export const VerifyBudgetJson = z.strictObject({
  method: z.string(),
  delegate: count,
  source: z
    .enum(['option', 'spec', 'automatic'])
    .describe('option: --budget; spec: the baked weight_streaming_budget; automatic: neither.'),
  effective: budgetBytes.nullable().describe('Bytes the engine streams with; null when it does not stream.'),
  clamped: z.boolean().describe('The request exceeded the streamable size and was clamped to it.'),
  ignored: z.string().nullable().describe('Why a requested budget was ignored; null when it was not.'),
  streamable_weight_bytes: weightBytes.describe(
    "The engine's streamable weights as the runner resolved its budget (streamable_bytes) for an engine carrying its partition (the reference-program executor: a version-2 or 3 reference engine); null for a synthetic engine, whose weights are made up.",
  ),
  resident_bytes: weightBytes.describe(
    'Weight bytes on the device under the effective budget: min(effective, streamable), or every weight when the engine does not stream; null as streamable_weight_bytes.',
  ),
  streamed_bytes_per_execute: weightBytes.describe(
    'Weight bytes streamed in on every execute: streamable - resident; null as streamable_weight_bytes.',
  ),
  kernels: EngineKernels.nullable().describe(
    "What computed the engine, from the runner's report: aten-cpu / aten-cuda (libtorch's kernels, as eager PyTorch runs them, on the engine's device), executorch-cpu (ExecuTorch's CPU kernels), synthetic-cpu / synthetic-cuda (a version-1 engine); null from a runner before it.",
  ),
  measured: z
    .strictObject({
      resident_bytes: u64Bytes,
      streamed_bytes_per_execute: u64Bytes,
      window_bytes: u64Bytes,
      streamed_bytes: u64Bytes.describe("Counted: every execute's copies."),
      executes: count,
    })
    .nullable()
    .describe(
      "What the engine's weights did in the first run, as the runner counted it (ATen's kernels place them: resident up to the budget, in order of first use, each whole; the rest copied in per execute through a window): beside the spec's arithmetic above. null where the kernels place no weights.",
    ),
});

export const AssertionJson = z.strictObject({
  name: z.string().regex(/./),
  ok: z.boolean(),
  detail: z.string().describe('What was compared, or why it failed; may be empty.'),
});

const tolerance = z.number().min(0).nullable();

export const RunComparisonJson = z.strictObject({
  run: z.string().describe('The run: variant and caller-stream mode.'),
  variant,
  caller_stream: z.boolean(),
  method: z.string(),
  output: count,
  dtype: z.string().describe("The recorded dtype (torch's name), or int, float, bool, none for a non-tensor output."),
  shape: z.array(count).nullable(),
  steps: count,
  elements: count.describe('Elements compared over all steps.'),
  atol: z.number().min(0),
  rtol: z.number().min(0),
  max_abs: tolerance.describe('Largest |a - r|; null when not finite (NaN or infinity on one side only) or not compared.'),
  max_rel: tolerance.describe('Largest |a - r| / |r|; null when not finite or not compared.'),
  mismatched: count.describe('Elements over the tolerance.'),
  worst: z
    .strictObject({
      step: count,
      index: count,
      actual: z.union([z.number(), z.string()]),
      expected: z.union([z.number(), z.string()]),
    })
    .nullable()
    .describe("The element furthest past (or nearest to) its tolerance: step, flat index, the program's value and PyTorch's."),
  error: z
    .string()
    .nullable()
    .describe('Why the output could not be compared element by element (a dtype, shape or kind mismatch, a missing output).'),
  ok: z.boolean(),
});

export const VerifyReferenceJson = z
  .strictObject({
    status: z.enum(['compared', 'none', 'skipped', 'synthetic']),
    file: z.string().nullable(),
    note: z.string(),
    atol: tolerance.describe('--atol as given; null: the per-dtype defaults (float32/float64 1e-4, float16 1e-2, bfloat16 5e-2).'),
    rtol: tolerance.describe('--rtol as given; null: the per-dtype defaults.'),
    comparisons: z.array(RunComparisonJson),
    worst: z.string().nullable().describe('The failed comparison furthest from PyTorch, for people; null when all pass.'),
    ok: z.boolean(),
  })
  .describe(
    "The comparison with eager PyTorch's outputs (docs/reference-lowering.md section 4). status: compared (the reference outputs file beside the program, PROGRAM.reference.json, or --reference), none (no such file: the program is compared with itself only), skipped (--no-reference), synthetic (every engine is a synthetic version-1 reference engine: its numbers are not a model's). Every persistent run (each variant and caller-stream mode) is fed the recorded inputs and compared, per method and output over the steps: an element passes when |a - r| <= atol + rtol * |r|.",
  );

export const VerifyMemoryJson = z.strictObject({
  pool: z.strictObject({ mode: z.enum(['warm', 'cold', 'unavailable']), api_calls: count }),
  scratch: z.strictObject({ mode: z.enum(['private', 'shared']), peak_bytes: count, peak_buffers: count }),
  device_arenas: z.strictObject({
    allocator: z.enum(['cuda', 'host']),
    fill: z.enum(['poison', 'none']),
    allocations: count,
    peak_bytes: count,
    zeroed_bytes: count,
  }),
});

export const VerifyResultJson = z.strictObject({
  schema: z.literal('trtx.verify/3'),
  file: z.string().describe('The program as given.'),
  device: RunnerDevice.nullable().describe(
    'Where the runner executed: the CPU, or a CUDA device by name and index; null when the check refused the program.',
  ),
  steps: z.number().int().min(2).describe('Executions of each method per run.'),
  methods: z.array(z.string()).describe('The methods run step after step (decode, when the program has one).'),
  mode: z
    .enum(['as-is', 'staged-vs-zero-copy', 'zero-copy'])
    .describe(
      'as-is: the program alone (no --zero-copy-kv); staged-vs-zero-copy: a staged program against its zero-copy twin; zero-copy: a program that is zero-copy already.',
    ),
  notes: z
    .array(z.string())
    .describe(
      'What verify did that the command line did not say: with --zero-copy-kv on a program whose engines declare no KV cache, that nothing was made zero-copy and the program ran as it is (--strict refuses it instead); for a program whose mutable buffers carry no names, that the runner ran a copy naming them after the engine inputs they feed.',
    ),
  engines: EngineCensusJson.describe(
    'How many TensorRTBackend delegates hold TensorRT plans, trtx reference engines (the ones the runner executes), or neither.',
  ),
  backend: RunnerBackend.nullable().describe(
    "Whose TensorRTBackend ran: trtx's own (builtin) or a library given with --backend-lib or TRTX_BACKEND_LIB (plugin; docs/backend-plugin.md), with the ExecuTorch it was built against; null when nothing ran. With a plugin, budgets stay empty and a note says which checks were skipped.",
  ),
  caches: z.array(z.string()).describe('KV cache buffers by fully qualified name (with --zero-copy-kv).'),
  runtime: RuntimeRulesJson.describe('--runtime: whose rules the check applied and the runner followed (as trtx check --json).'),
  options: z.strictObject({
    init_device_buffers: z
      .boolean()
      .describe(
        '--init-device-buffers: the runner zeroed device-resident buffers after each load, as an application must (no poisoned run). false with --no-init-device-buffers and by default; see twin_contract for what the default runs.',
      ),
    twin_contract: z
      .boolean()
      .describe(
        "The zero-copy contract applied (named for its first case): a zero-copy twin derived by verify, or a program given zero-copy (its caches in device memory, check's RT_DEVICE_STATE_UNINITIALIZED), ran as its contract requires (its application initialises the caches in device memory), with one more run left poisoned to show whether that obligation is real. Never with --init-device-buffers or --no-init-device-buffers.",
      ),
    arena_fill: z
      .literal('poison')
      .describe(
        'Device arenas are filled with 0xFF at allocation (stricter than ExecuTorch, which leaves them as cudaMalloc returns them).',
      ),
    shared_scratch: z.boolean(),
    cold_pool: z.boolean(),
  }),
  check: z
    .strictObject({
      refused: z.boolean().describe('The check found an error: nothing ran.'),
      summary: CheckSummary,
      diagnostics: z.array(
        FindingJson.extend({
          file: z.enum(['program', 'zero-copy twin']).describe('program, or zero-copy twin (the derived program).'),
        }),
      ),
    })
    .describe('The check run before anything ran.'),
  runs: z.array(VerifyRunJson),
  budgets: z.array(VerifyBudgetJson).describe('The weight-streaming budget each delegate resolved to in the first run.'),
  memory: VerifyMemoryJson.nullable().describe(
    'Device memory of the primary run (the last variant, no caller stream): pool, scratch, and the arenas ExecuTorch allocated through the registered device allocator; null when nothing ran.',
  ),
  reference: VerifyReferenceJson,
  assertions: z.array(AssertionJson).describe('Empty when the check refused the program.'),
  ok: z.boolean().describe('Every assertion holds; true exactly when the exit code is 0.'),
});
export type VerifyResultJson = z.infer<typeof VerifyResultJson>;

export const VerifyOutput = z.union([VerifyResultJson, ErrorDocument]).meta({
  title: 'trtx verify --json, version 3',
  description:
    "What `trtx verify FILE --json` prints on stdout: the result (exit 0 when `ok`, else 1: the check refused the program, or a runtime check failed), or the error document of schemas/error.schema.json when it could not run at all (exit 2: usage, an unreadable input, no runner, or a program that cannot run here: a real TensorRT plan, a backend the runner lacks, --device cuda without a GPU, codes VERIFY_TENSORRT_PLAN, VERIFY_BACKEND_MISSING, VERIFY_NO_GPU; a --backend-lib library that is missing, does not load, was built against another ExecuTorch or registers no TensorRTBackend, codes RUNNER_BACKEND_LIB_*). The program (and its zero-copy twin) is checked first under the rules of --runtime; a program with an error is refused and nothing runs (`check.refused`, no runs). The runner is the ExecuTorch runtime with trtx's TensorRTBackend and device allocator; device arenas are filled with 0xFF at allocation. `trtx demo --json` embeds the same result (schemas/demo.schema.json refers to this file's result). Budgets are decimal strings (JSON numbers lose precision past 2^53). Version 2 adds runtime, options, check, memory, runs[].init_device_buffers, and a null device when nothing ran. Version 3 adds reference (the comparison with eager PyTorch's recorded outputs) and engines.synthetic and engines.programs, and later backend (whose TensorRTBackend ran). Written by src/verify/verify.ts as src/verify/result-json.ts says, and printed by src/cli/commands/verify.ts; test/cli-json-schemas.test.ts validates real outputs against this file.",
});
