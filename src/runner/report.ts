// The native runner's JSON report, version 2 (the runner on the ExecuTorch
// runtime), as zod schemas: schemas/runner-report.schema.json, the
// language-neutral statement of the contract, is generated from them
// (scripts/gen-schemas.ts), and test/runner-report.test.ts holds the C++
// writer (native-runner/src/cli/run_report.cpp) to it with real reports.

import { z } from 'zod';
import { DecimalBudget, DecimalU64 as u64Bytes } from '../util/decimal-json.js';
import { MemoryReport } from './report-memory.js';

export { CapacityEvent, DeviceArenas, MemoryReport, PoolDevice, ScratchDevice } from './report-memory.js';

export const REPORT_SCHEMA_ID = 'trtx.runner-report/2';

const count = z.number().int().min(0);
/** Decimal bytes below 2^63 (a budget); JSON numbers lose precision past 2^53. */
const budgetBytes = DecimalBudget;
const digest = z.string().regex(/^[0-9a-f]{16}$/);
const sizes = z.array(count);
export const Elision = z
  .enum(['staged', 'zero-copy', 'none'])
  .nullable()
  .describe(
    'How the delegate call binds aliased outputs, read from its arity: staged (every output passed), zero-copy (aliased outputs elided), none (the engine has no aliased outputs); null before the first execute.',
  );
const copyCounters = z.strictObject({ h2d_bytes: count, d2h_bytes: count, d2d_bytes: count });
/** What a stand-in engine moved inside its enqueues; never part of the program's copies. */
export const StandInBytes = z.strictObject({
  h2d_bytes: count.describe('Outputs written from the host into their bindings.'),
  d2h_bytes: count.describe('Bindings read to the host.'),
});
const standIn = StandInBytes.optional().describe(
  "Bytes the stand-in engine moved inside its enqueues (a reference-program engine reads every binding to the host and writes every output back, because it computes on ExecuTorch's CPU kernels; TensorRT would not): never part of h2d_bytes/d2h_bytes or program_copies. Absent from runners before it.",
);
const microseconds = z.number().min(0);
const stepTime = z.strictObject({
  count,
  each: z.array(microseconds),
  median: microseconds.nullable(),
  min: microseconds.nullable(),
  max: microseconds.nullable(),
});

export const BudgetResolution = z
  .strictObject({
    source: z.enum(['option', 'spec', 'automatic']),
    requested: budgetBytes.nullable(),
    effective: budgetBytes.nullable().describe('The budget applied to the engine; null when it does not stream.'),
    clamped: z.boolean(),
    ignored: z.string().nullable().describe('Why a requested budget does not apply.'),
    streaming: z.boolean().describe('The engine was built with weight streaming.'),
    streamable_bytes: u64Bytes,
    resident_bytes: u64Bytes
      .optional()
      .describe(
        'Weight bytes that stay on the device: min(effective, streamable_bytes); all of streamable_bytes when the engine does not stream. Absent from runners before it.',
      ),
    streamed_bytes_per_execute: u64Bytes
      .optional()
      .describe(
        'Weight bytes streamed in every execute: streamable_bytes - resident_bytes (0 when the budget covers the weights). Absent from runners before it.',
      ),
  })
  .describe(
    'Weight-streaming budget resolution: the load-time option, else the baked weight_streaming_budget spec, else automatic; an explicit budget is clamped to streamable_bytes; an engine not built for streaming ignores it and says why.',
  );
export type BudgetResolution = z.infer<typeof BudgetResolution>;

/**
 * What computes a version-2/3 engine: ATen's kernels (libtorch's, on the CPU or the GPU the
 * engine runs on) or ExecuTorch's CPU kernels; a version-1 engine's synthetic steps.
 */
export const EngineKernels = z.enum(['aten-cpu', 'aten-cuda', 'executorch-cpu', 'synthetic-cpu', 'synthetic-cuda']);
export type EngineKernels = z.infer<typeof EngineKernels>;

/** Where an engine's weights are (ATen's kernels): resident up to the budget, the rest streamed, counted. */
export const WeightPlacement = z.strictObject({
  total_bytes: u64Bytes,
  resident_bytes: u64Bytes,
  streamed_bytes_per_execute: u64Bytes.describe('As placed: the bytes copied in per execute.'),
  window_bytes: u64Bytes.describe('The device memory streamed weights are copied into.'),
  streamed_bytes: u64Bytes.describe('Counted: the bytes streaming copied, every execute since load.'),
  streamed_copies: count,
});
export type WeightPlacement = z.infer<typeof WeightPlacement>;

export const DelegateReport = z.strictObject({
  index: count,
  backend: z.string(),
  engine: z
    .enum(['reference-program', 'synthetic-cpu', 'synthetic-cuda', 'reference-cpu', 'reference-cuda'])
    .describe(
      'The executor that ran the engine: reference-program (a version-2 reference engine: the partition as an ExecuTorch program), synthetic-cpu or synthetic-cuda (version 1, synthetic: a made-up function, not the model); reference-cpu and reference-cuda are what runners before version 2 called the synthetic executors.',
    ),
  kernels: EngineKernels.optional().describe(
    "What computes a version-2/3 engine: aten-cpu / aten-cuda (libtorch's kernels, as eager PyTorch runs them, on the engine's device) or executorch-cpu (ExecuTorch's CPU kernels); a version-1 engine's synthetic steps. Absent from runners before it.",
  ),
  target_device: z.string().regex(/^cuda:[0-9]+$/),
  elision: Elision,
  inputs: z.array(z.string()).describe('Input binding names in delegate-argument order.'),
  outputs: z.array(z.string()),
  aliased_outputs: z.array(z.string()).describe('Output bindings aliased to an input (aliased_io).'),
  zero_copy_kv: z.array(z.string()).nullable(),
  budget: BudgetResolution,
  scratch_bytes: count.describe('Activation scratch the last enqueue needed.'),
  scratch_capacity: count.describe('Scratch its provider held after the last enqueue.'),
  executes: count,
  syncs_performed: count,
  syncs_skipped: count.describe('Executes that returned without synchronizing (zero-copy under a caller stream), each recording an event.'),
  waits: count.describe("Executes that first waited on the previous execute's event."),
  drains: count.describe('Teardowns that waited for an enqueue still in flight.'),
  h2d_bytes: count.describe('Host-staged inputs, since load.'),
  d2h_bytes: count.describe('Host-staged outputs and staged reflects into host memory, since load.'),
  d2d_bytes: count.describe('Staged reflects of aliased outputs, since load.'),
  engine_stand_in_bytes: standIn,
  weights: WeightPlacement.nullable()
    .optional()
    .describe(
      "Where the engine's weights are (ATen's kernels): resident up to the budget, the rest streamed per execute into a window; streamed_bytes counts what streaming copied since load. null where the engine places no weights; absent from runners before it.",
    ),
});
export type DelegateReport = z.infer<typeof DelegateReport>;

const placement = z.enum(['host', 'device']);

export const OutputDigest = z.strictObject({
  index: count,
  kind: z.enum(['tensor', 'int', 'double', 'bool', 'none', 'other']),
  dtype: z.string().nullable(),
  sizes: sizes.nullable(),
  placement: placement.nullable().describe('Tensors: device when the output lives in memory of the registered device allocator.'),
  digest,
});

export const BufferDigest = z.strictObject({
  name: z.string(),
  dtype: z.string(),
  sizes,
  placement: placement.describe('device: in memory of the registered device allocator (a CUDA arena).'),
  digest,
});

export const DelegateStep = z.strictObject({
  index: count,
  elision: Elision,
  syncs_performed: count,
  syncs_skipped: count,
  waits: count,
  h2d_bytes: count,
  d2h_bytes: count,
  d2d_bytes: count,
  engine_stand_in_bytes: standIn,
});

export const StepReport = z.strictObject({
  step: count,
  step_us: z
    .number()
    .min(0)
    .describe(
      "Wall time of the method's execute, including the final synchronize of the caller stream when there is one, in microseconds (host clock). Setting inputs and reading results are outside it.",
    ),
  outputs: z.array(OutputDigest),
  buffers: z.array(BufferDigest).describe('Every named mutable buffer (extra_tensor_info.fully_qualified_name), after the step.'),
  h2d_bytes: count.describe('Host to device bytes the execute copied (kernels and delegates).'),
  d2h_bytes: count,
  d2d_bytes: count,
  program_copies: copyCounters
    .optional()
    .describe(
      "The part of h2d_bytes/d2h_bytes/d2d_bytes the program's copy kernels moved (et_copy::_h2d_copy.out and _d2h_copy.out through the registered device allocator), without the delegates' own staging. Absent from runners before it.",
    ),
  engine_stand_in_bytes: standIn,
  delegates: z.array(DelegateStep),
});
export type StepReport = z.infer<typeof StepReport>;

export const MethodReport = z.strictObject({
  name: z.string(),
  initialised_buffers: count.describe(
    'With --init-device-buffers: named buffers in device memory the runner zeroed at the last load of the method.',
  ),
  delegates: z.array(DelegateReport).describe('Every delegate of the method, as it stood at teardown (the last load with --fresh-state).'),
  steps: z.array(StepReport).describe('The steps that completed, in order.'),
  step_time_us: stepTime
    .optional()
    .describe(
      "Every completed step's step_us in order (each) and their count, median (the mean of the middle two for an even count), min and max; null summary values when no step completed. Absent from runners before it.",
    ),
});
export type MethodReport = z.infer<typeof MethodReport>;

export const RunnerError = z.strictObject({
  code: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
  location: z.string(),
  message: z.string(),
});
export type RunnerError = z.infer<typeof RunnerError>;

export const RunnerBackend = z
  .strictObject({
    source: z.enum(['builtin', 'plugin']),
    path: z.string().nullable().describe('The library as given; null for the builtin backend.'),
    executorch: z
      .string()
      .describe("The ExecuTorch the backend was built against (a plugin's trtx_backend_abi(); the runner's own for builtin)."),
  })
  .describe(
    "Whose TensorRTBackend ran: the runner's own (builtin) or a library given with --backend-lib (plugin, docs/backend-plugin.md). A plugin's delegates report nothing of their own: methods[].delegates stays empty.",
  );

export const RunnerDevice = z
  .strictObject({
    kind: z.enum(['cpu', 'cuda']),
    name: z.string().describe('The device name as the driver reports it; "cpu" on the CPU.'),
    index: count.nullable(),
  })
  .describe(
    'Where the program ran: the CPU (CUDA arenas stood in for by host memory from the allocator registered for the CUDA device type) or a CUDA device.',
  );

export const RunnerOptions = z.strictObject({
  methods: z.array(z.string()).describe('--method values; empty means every method.'),
  steps: z.number().int().min(1),
  caller_stream: z.boolean(),
  budget: budgetBytes.nullable().describe('--budget, the load-time weight_streaming_budget option.'),
  fresh_state: z.boolean().describe('Each step ran on a freshly loaded method (caches back at their initial state).'),
  cold_pool: z.boolean().describe('--cold-pool: the device pool was not kept warm.'),
  shared_scratch: z.boolean().describe('--shared-scratch: one activation scratch buffer per device backed every engine.'),
  arena_fill: z
    .enum(['poison', 'none'])
    .describe(
      '--arena-fill: poison (every byte of a device arena set to 0xFF at allocation, stricter than ExecuTorch, which leaves device memory as cudaMalloc returns it) or none.',
    ),
  init_device_buffers: z
    .boolean()
    .describe(
      '--init-device-buffers: after each method load the runner zeroed every named buffer in device memory, as a correct application must.',
    ),
  share_arenas: z.boolean().describe('--share-arenas: Module was built with share_memory_arenas (it refuses device arenas).'),
  trt_runtime: z
    .enum(['zero-copy', 'stock'])
    .describe(
      '--trt-runtime: zero-copy (the Torch-TensorRT runtime with the zero-copy KV contract) or stock (without it: a zero-copy call fails its first execute).',
    ),
  loader: z
    .enum(['mmap', 'file'])
    .optional()
    .describe(
      "--loader: mmap (ExecuTorch's MmapDataLoader, no mlock: segments and named data are the mapped file) or file (FileDataLoader: each segment read into memory of its own). Absent from runners before it.",
    ),
});

export const RunnerReport = z
  .strictObject({
    schema: z.literal(REPORT_SCHEMA_ID),
    runner: z.strictObject({
      version: z.string(),
      cuda_built: z.boolean().describe('The build has the CUDA executors.'),
      executorch: z.string().describe('The ExecuTorch runtime version the runner is linked against (the SDK of the Python environment).'),
    }),
    backend: RunnerBackend,
    program: z.strictObject({
      path: z.string().describe('The path as given.'),
      bytes: count,
      methods: z.array(z.string()).describe('Every method of the program, in file order (empty when it did not load).'),
    }),
    device: RunnerDevice,
    options: RunnerOptions,
    memory: MemoryReport,
    methods: z.array(MethodReport),
    errors: z.array(RunnerError),
    ok: z.boolean().describe('True exactly when exit_code is 0.'),
    exit_code: z
      .number()
      .int()
      .min(0)
      .max(3)
      .describe(
        '0 ok, 1 program invalid or execution failed, 3 the program cannot run here (a TensorRT plan, a backend this runner lacks, --device cuda without a GPU, planned host memory over --max-planned-bytes). Usage errors exit 2 without a report.',
      ),
  })
  .meta({
    title: 'trtx-runner report, version 2',
    description:
      "What `trtx-runner run PROGRAM --report FILE` writes (stdout without --report): where the program ran, and per method and step a digest of every output and every named mutable buffer, the host<->device traffic, and per TensorRT delegate its elision mode, budget resolution and stream synchronizations. The program runs on the ExecuTorch runtime (Module); the report also says how its device arenas were allocated (the registered device allocator, poisoned or not). Written also when the run stops on an error (exit 1; exit 3 when the program cannot run here: a TensorRT plan, a backend this runner lacks, --device cuda without a GPU); the steps that completed are kept. Digests are FNV-1a 64 over the tensor's bytes as 16 lowercase hex digits. Byte sizes that may exceed 2^53 are decimal strings. Version 2 (ExecuTorch runtime) drops the value indices of outputs and buffers (ExecuTorch's Method does not expose them), adds output placement, runner.executorch, the options arena_fill, init_device_buffers, share_arenas and trt_runtime, methods[].initialised_buffers and memory.device_arenas. Written by native-runner/src/cli/run_report.cpp; generated from src/runner/report.ts (zod, which also validates the report trtx reads), and test/runner-report.test.ts holds the writer to it with real reports.",
  });
export type RunnerReport = z.infer<typeof RunnerReport>;
