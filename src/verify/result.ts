// What `trtx verify` answers (schemas/verify.schema.json, `trtx.verify/3`):
// the options it runs under, the check it ran first, every runner run, the
// assertions proved on them and the comparison with eager PyTorch's outputs.
// verify.ts fills it in; runs.ts, judge.ts and reference.ts each add their part.

import type { Env } from '../util/env.js';
import type { ReportBudget } from '../util/report-budget.js';
import type { BudgetStreaming, MeasuredStreaming } from './budget-streaming.js';
import type { VerifyProgress } from './progress.js';
import type { Diagnostic } from '../checks/diagnostic.js';
import type { CheckSummary } from '../checks/run.js';
import type { RuntimeRules } from '../checks/runtime-rules.js';
import type { RunnerProgress } from '../runner/index.js';
import type { RunnerReport } from '../runner/report.js';
import type { EngineCensus } from '../tensorrt/engine-kind.js';
import type { Assertion } from './assertions.js';
import type { VerifyBackend } from './backend-lib.js';
import type { ReferenceOptions, VerifyReference } from './reference.js';
import type { Variant, VerifyMode } from './variants.js';

export type StreamMode = 'on' | 'off' | 'both';

export interface VerifyOptions extends ReferenceOptions {
  zeroCopyKv?: boolean;
  /** Steps per run; default the reference outputs' steps, else 4. */
  steps?: number;
  callerStream?: StreamMode;
  budget?: bigint;
  device?: 'cpu' | 'cuda';
  /** What computes the reference engines' programs (the runner's --engine-kernels); default the runner's choice. */
  kernels?: 'aten' | 'executorch';
  /** Whose runtime rules the check applies and the runner follows; default DEFAULT_RUNTIME. */
  runtime?: RuntimeRules;
  /**
   * true: zero device-resident buffers after each load, as a correct
   * application does; false: leave them poisoned, as an application that
   * does not; absent: as the program's contract says (contract.ts: a
   * zero-copy program, derived or given, runs initialised, and once more
   * poisoned to show whether that is needed; any other runs poisoned).
   */
  initDeviceBuffers?: boolean;
  /** One activation scratch buffer per device for every engine. */
  sharedScratch?: boolean;
  /** Leave the device pool's release threshold alone. */
  coldPool?: boolean;
  /** With zeroCopyKv on a staged program: compare against this file instead of deriving the twin. */
  zeroCopyTwin?: string;
  /** With zeroCopyKv: refuse a program without KV caches (ZC_REWRITE_NO_ALIASED_CACHE) instead of running it as it is. */
  strict?: boolean;
  /** A runner binary to use instead of the cached build. */
  runner?: string;
  /** A shared library whose TensorRTBackend runs instead of trtx's (backend-lib.ts). */
  backendLib?: string;
  /** The prebuilt runner ensureRunner uses (its `binary`: default the run's $TRTX_RUNNER_BIN; null: build); the CLI passes its run's. */
  runnerBinary?: string | null;
  /** The run's environment (util/env.ts): the runner's build and the runner itself get it. */
  env?: Env;
  /** The run's folder: what a relative path means (the prebuilt runner, TRTX_* settings that name files). */
  cwd?: string;
  /** Aborting it stops the runner's build and the runner. */
  signal?: AbortSignal;
  /** The command's report budget: every program verify opens adds to it (src/util/report-budget.ts); unbounded when absent. */
  reportBudget?: ReportBudget;
  onProgress?: (message: string) => void;
  /** The plan, then each run's step and elapsed time (progress.ts). */
  onRunProgress?: (p: VerifyProgress) => void;
  onRunnerBuild?: (p: RunnerProgress) => void;
}

export interface VerifyRun {
  variant: Variant['name'];
  caller_stream: boolean;
  fresh_state: boolean;
  init_device_buffers: boolean;
  exit_code: number;
  ok: boolean;
  errors: RunnerReport['errors'];
  /**
   * Host<->device bytes of one execution of each method (from the first
   * step), its median wall time per step (null from a runner that does not
   * time them), and the bytes the stand-in engine itself moved between the
   * device and the host to run the partition on CPU kernels: a reference
   * engine's artifact, which a TensorRT engine does not do, never counted in
   * the staging bytes (docs/reference-lowering.md section 1).
   */
  staging: {
    method: string;
    h2d_bytes: number;
    d2h_bytes: number;
    step_median_us: number | null;
    engine_stand_in_bytes: { h2d_bytes: number; d2h_bytes: number } | null;
  }[];
}

export interface VerifyMemory {
  pool: { mode: RunnerReport['memory']['pool']['mode']; api_calls: number };
  scratch: { mode: 'private' | 'shared'; peak_bytes: number; peak_buffers: number };
  device_arenas: { allocator: 'cuda' | 'host'; fill: 'poison' | 'none'; allocations: number; peak_bytes: number; zeroed_bytes: number };
}

export interface VerifyResult {
  schema: 'trtx.verify/3';
  file: string;
  device: RunnerReport['device'] | null;
  steps: number;
  methods: string[];
  mode: VerifyMode;
  /** What verify did that the command line did not say: --zero-copy-kv on a program without KV caches, a copy naming unnamed buffers. */
  notes: string[];
  /** What the TensorRTBackend delegates hold (the runner executes reference engines only). */
  engines: EngineCensus;
  /** Whose TensorRTBackend ran (trtx's own, or a --backend-lib library); null when nothing ran. */
  backend: VerifyBackend | null;
  caches: string[];
  runtime: RuntimeRules;
  /**
   * twin_contract: the zero-copy contract applied (named for its first case,
   * a derived twin): the program's device-resident caches ran initialised, as
   * the contract makes the application do, and once more poisoned (contract.ts).
   */
  options: { init_device_buffers: boolean; twin_contract: boolean; arena_fill: 'poison'; shared_scratch: boolean; cold_pool: boolean };
  /** The check run first; `refused`: it found errors and nothing ran. */
  check: { refused: boolean; summary: CheckSummary; diagnostics: (Diagnostic & { file: string })[] };
  runs: VerifyRun[];
  /** Each delegate's resolved budget and, for an engine carrying its partition, what stays resident and streams per execute (budget-streaming.ts). */
  budgets: ({
    method: string;
    delegate: number;
    source: string;
    effective: string | null;
    clamped: boolean;
    ignored: string | null;
  } & BudgetStreaming &
    MeasuredStreaming)[];
  /** Device memory of the primary run (the last variant, no caller stream). */
  memory: VerifyMemory | null;
  /** The comparison with eager PyTorch's outputs (docs/reference-lowering.md §4). */
  reference: VerifyReference;
  assertions: Assertion[];
  ok: boolean;
}

/** The device memory of a run as the result reports it (the runner report's fields that verify passes on). */
export function memoryOf(r: RunnerReport): VerifyMemory {
  const m = r.memory;
  return {
    pool: { mode: m.pool.mode, api_calls: m.pool.api_calls },
    scratch: { mode: m.scratch.mode, peak_bytes: m.scratch.peak_bytes, peak_buffers: m.scratch.peak_buffers },
    device_arenas: {
      allocator: m.device_arenas.allocator,
      fill: m.device_arenas.fill,
      allocations: m.device_arenas.allocations,
      peak_bytes: m.device_arenas.peak_bytes,
      zeroed_bytes: m.device_arenas.zeroed_bytes,
    },
  };
}
