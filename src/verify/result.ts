// What `trtx verify` answers (schemas/verify.schema.json, `trtx.verify/3`):
// the options it runs under, the check it ran first, every runner run, the
// assertions proved on them and the comparison with eager PyTorch's outputs.
// Each stage returns its part (the check, the runs, the assertions, the
// comparison) and verify.ts assembles them, in this schema's key order.

import type { z } from 'zod';
import type { Env } from '../util/env.js';
import type { ReportBudget } from '../util/report-budget.js';
import type { VerifyProgress } from './progress.js';
import type { RuntimeRules } from '../checks/runtime-rules.js';
import type { RunnerProgress } from '../runner/index.js';
import type { RunnerReport } from '../runner/report.js';
import type { ReferenceOptions } from './reference.js';
import type { VerifyMemoryJson, VerifyResultJson, VerifyRunJson } from './result-json.js';

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

/** One runner run as the result reports it. */
export type VerifyRun = z.infer<typeof VerifyRunJson>;

export type VerifyMemory = z.infer<typeof VerifyMemoryJson>;

/** The result, as schemas/verify.schema.json states it (result-json.ts). */
export type VerifyResult = z.infer<typeof VerifyResultJson>;

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
