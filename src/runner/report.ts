// The native runner's JSON report, version 2 (the runner on the ExecuTorch
// runtime), as zod schemas.
// schemas/runner-report.schema.json is the language-neutral statement of the
// same thing; test/runner-report.test.ts holds both to the same real reports
// and the same damaged ones.

import { z } from 'zod';

export const REPORT_SCHEMA_ID = 'trtx.runner-report/2';

const count = z.number().int().min(0);
/** Decimal bytes below 2^63 (a budget); JSON numbers lose precision past 2^53. */
const budgetBytes = z.string().regex(/^(0|[1-9][0-9]{0,18})$/);
/** Decimal bytes below 2^64. */
const u64Bytes = z.string().regex(/^(0|[1-9][0-9]{0,19})$/);
const digest = z.string().regex(/^[0-9a-f]{16}$/);
const sizes = z.array(count);
const elision = z.enum(['staged', 'zero-copy', 'none']).nullable();
const copyCounters = z.strictObject({ h2d_bytes: count, d2h_bytes: count, d2d_bytes: count });
/**
 * What a stand-in engine moved inside its enqueues (a reference-program engine reads every
 * binding to the host and writes every output back); never part of the program's copies.
 */
const standInBytes = z.strictObject({ h2d_bytes: count, d2h_bytes: count });
const microseconds = z.number().min(0);
const stepTime = z.strictObject({
  count,
  each: z.array(microseconds),
  median: microseconds.nullable(),
  min: microseconds.nullable(),
  max: microseconds.nullable(),
});

export const BudgetResolution = z.strictObject({
  source: z.enum(['option', 'spec', 'automatic']),
  requested: budgetBytes.nullable(),
  effective: budgetBytes.nullable(),
  clamped: z.boolean(),
  ignored: z.string().nullable(),
  streaming: z.boolean(),
  streamable_bytes: u64Bytes,
  /** min(effective, streamable_bytes): weight bytes kept on the device (all of them when the engine does not stream). */
  resident_bytes: u64Bytes.optional(),
  /** streamable_bytes - resident_bytes: weight bytes streamed in every execute. */
  streamed_bytes_per_execute: u64Bytes.optional(),
});
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
  /** As placed: the bytes copied in per execute. */
  streamed_bytes_per_execute: u64Bytes,
  /** The device memory streamed weights are copied into. */
  window_bytes: u64Bytes,
  /** Counted: the bytes streaming copied, every execute since load. */
  streamed_bytes: u64Bytes,
  streamed_copies: count,
});
export type WeightPlacement = z.infer<typeof WeightPlacement>;

export const DelegateReport = z.strictObject({
  index: count,
  backend: z.string(),
  // reference-program: a version-2 engine (the partition's ExecuTorch program); synthetic-*: version 1. reference-* is the name older runners gave version 1.
  engine: z.enum(['reference-program', 'synthetic-cpu', 'synthetic-cuda', 'reference-cpu', 'reference-cuda']),
  /** Absent from runners before it. */
  kernels: EngineKernels.optional(),
  target_device: z.string().regex(/^cuda:[0-9]+$/),
  elision,
  inputs: z.array(z.string()),
  outputs: z.array(z.string()),
  aliased_outputs: z.array(z.string()),
  zero_copy_kv: z.array(z.string()).nullable(),
  budget: BudgetResolution,
  scratch_bytes: count,
  scratch_capacity: count,
  executes: count,
  syncs_performed: count,
  syncs_skipped: count,
  waits: count,
  drains: count,
  h2d_bytes: count,
  d2h_bytes: count,
  d2d_bytes: count,
  engine_stand_in_bytes: standInBytes.optional(),
  /** null where the engine does not place weights (ExecuTorch's kernels, synthetic); absent from runners before it. */
  weights: WeightPlacement.nullable().optional(),
});
export type DelegateReport = z.infer<typeof DelegateReport>;

const placement = z.enum(['host', 'device']);

export const OutputDigest = z.strictObject({
  index: count,
  kind: z.enum(['tensor', 'int', 'double', 'bool', 'none', 'other']),
  dtype: z.string().nullable(),
  sizes: sizes.nullable(),
  /** Tensors: device when the output lives in memory of the registered device allocator. */
  placement: placement.nullable(),
  digest,
});

export const BufferDigest = z.strictObject({
  name: z.string(),
  dtype: z.string(),
  sizes,
  placement,
  digest,
});

export const DelegateStep = z.strictObject({
  index: count,
  elision,
  syncs_performed: count,
  syncs_skipped: count,
  waits: count,
  h2d_bytes: count,
  d2h_bytes: count,
  d2d_bytes: count,
  engine_stand_in_bytes: standInBytes.optional(),
});

export const StepReport = z.strictObject({
  step: count,
  /** Wall time of the execute and its final caller-stream synchronize, in microseconds. */
  step_us: z.number().min(0),
  outputs: z.array(OutputDigest),
  buffers: z.array(BufferDigest),
  h2d_bytes: count,
  d2h_bytes: count,
  d2d_bytes: count,
  /** The part of the above the program's et_copy kernels moved, without the delegates' own staging. */
  program_copies: copyCounters.optional(),
  engine_stand_in_bytes: standInBytes.optional(),
  delegates: z.array(DelegateStep),
});
export type StepReport = z.infer<typeof StepReport>;

export const MethodReport = z.strictObject({
  name: z.string(),
  /** --init-device-buffers: named buffers in device memory zeroed at the last load. */
  initialised_buffers: count,
  delegates: z.array(DelegateReport),
  steps: z.array(StepReport),
  /** Every step's step_us in order, with count, median, min and max. */
  step_time_us: stepTime.optional(),
});
export type MethodReport = z.infer<typeof MethodReport>;

const poolState = z.enum(['disabled', 'raised', 'already_max', 'failed', 'restored']);
const memoryError = z.strictObject({
  code: z.enum(['invalid_argument', 'out_of_memory', 'device_error', 'busy']),
  message: z.string(),
});

export const PoolDevice = z.strictObject({
  device: count,
  state_at_load: poolState,
  state: poolState,
  /** Decimal strings: the maximum threshold, 2^64 - 1, does not survive a JSON number. */
  previous_release_threshold: u64Bytes.nullable(),
  raised_to: u64Bytes.nullable(),
  restored: z.boolean(),
  trimmed: z.boolean(),
  configure_error: memoryError.nullable(),
  release_error: memoryError.nullable(),
});
export type PoolDevice = z.infer<typeof PoolDevice>;

export const ScratchDevice = z.strictObject({
  device: count,
  capacity: count,
  peak_capacity: count,
  floor: count.nullable(),
  executes: count,
});

export const CapacityEvent = z.strictObject({
  device: count,
  execute_index: count,
  from: count,
  to: count,
  reason: z.enum(['grow', 'shrink', 'grow_failed', 'shrink_failed']),
  detail: z.string().nullable(),
});
export type CapacityEvent = z.infer<typeof CapacityEvent>;

/** The device allocator trtx registers with ExecuTorch for the CUDA device type. */
export const DeviceArenas = z.strictObject({
  allocator: z.enum(['cuda', 'host']),
  fill: z.enum(['poison', 'none']),
  init_device_buffers: z.boolean(),
  allocations: count,
  deallocations: count,
  peak_bytes: count,
  filled_bytes: count,
  zeroed_bytes: count,
  refused_copies: count,
  allocate_call_us: z.strictObject({ count, median: z.number().min(0).nullable(), max: z.number().min(0).nullable() }),
});
export type DeviceArenas = z.infer<typeof DeviceArenas>;

export const MemoryReport = z.strictObject({
  pool: z.strictObject({
    mode: z.enum(['warm', 'cold', 'unavailable']),
    unavailable_reason: z.string().nullable(),
    api_calls: count,
    devices: z.array(PoolDevice),
  }),
  scratch: z.strictObject({
    mode: z.enum(['private', 'shared']),
    reclaim: z.boolean(),
    warmup_executes: count.nullable(),
    shrink_after: count.nullable(),
    peak_bytes: count,
    peak_buffers: count,
    devices: z.array(ScratchDevice),
    capacity_events: z.array(CapacityEvent),
    handoff_failures: count,
  }),
  device_arenas: DeviceArenas,
});
export type MemoryReport = z.infer<typeof MemoryReport>;

export const RunnerError = z.strictObject({
  code: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
  location: z.string(),
  message: z.string(),
});
export type RunnerError = z.infer<typeof RunnerError>;

export const RunnerReport = z.strictObject({
  schema: z.literal(REPORT_SCHEMA_ID),
  runner: z.strictObject({ version: z.string(), cuda_built: z.boolean(), executorch: z.string() }),
  /** Whose TensorRTBackend ran: the runner's own, or a --backend-lib library's, and the ExecuTorch it was built against. */
  backend: z.strictObject({ source: z.enum(['builtin', 'plugin']), path: z.string().nullable(), executorch: z.string() }),
  program: z.strictObject({ path: z.string(), bytes: count, methods: z.array(z.string()) }),
  device: z.strictObject({
    kind: z.enum(['cpu', 'cuda']),
    name: z.string(),
    index: count.nullable(),
  }),
  options: z.strictObject({
    methods: z.array(z.string()),
    steps: z.number().int().min(1),
    caller_stream: z.boolean(),
    budget: budgetBytes.nullable(),
    fresh_state: z.boolean(),
    cold_pool: z.boolean(),
    shared_scratch: z.boolean(),
    arena_fill: z.enum(['poison', 'none']),
    init_device_buffers: z.boolean(),
    share_arenas: z.boolean(),
    trt_runtime: z.enum(['zero-copy', 'stock']),
    /** --loader: mmap (ExecuTorch's MmapDataLoader) or file (FileDataLoader). */
    loader: z.enum(['mmap', 'file']).optional(),
  }),
  memory: MemoryReport,
  methods: z.array(MethodReport),
  errors: z.array(RunnerError),
  ok: z.boolean(),
  exit_code: z.number().int().min(0).max(3),
});
export type RunnerReport = z.infer<typeof RunnerReport>;
