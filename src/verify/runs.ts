// The runner runs of one `trtx verify`: each variant in each caller-stream
// mode, fresh or persistent caches, device buffers initialised or left
// poisoned. What every run shares is fixed once (RunSetup); each run's report
// is kept under its four settings, so the assertions (judge.ts) look up the
// runs they compare, and each persistent run compared with eager PyTorch
// writes its outputs to a file of its own (reference.ts reads them).

import { join } from 'node:path';
import type { RuntimeRules } from '../checks/runtime-rules.js';
import { runRunner } from '../runner/index.js';
import type { RunnerReport } from '../runner/report.js';
import { TrtxError } from '../util/errors.js';
import { present } from '../util/present.js';
import { environmentOf } from './environment.js';
import { runLabel, trackRun } from './progress.js';
import type { VerifyOptions, VerifyRun } from './result.js';
import type { Variant } from './variants.js';

/** What every run of one verify shares. */
export interface RunSetup {
  runner: string;
  /** The temporary folder the outputs files go to. */
  dir: string;
  methods: string[];
  steps: number;
  /** The reference inputs (every run gets them, so runs stay comparable with each other). */
  inputsFile: string | undefined;
  /** Eager PyTorch's outputs are compared with: each persistent run at the default initialisation writes its outputs. */
  comparesReference: boolean;
  /** Whether a run initialises device-resident buffers unless told otherwise. */
  initDeviceBuffers: boolean;
  /** The methods share mutable buffers (state-roles.ts): persistent runs load them into one arena. */
  sharedState: boolean;
  runtime: RuntimeRules;
  backendLib: string | undefined;
  options: Pick<
    VerifyOptions,
    'budget' | 'device' | 'kernels' | 'sharedScratch' | 'coldPool' | 'onProgress' | 'onRunProgress' | 'env' | 'signal'
  >;
  /** How many runs the plan said (a conditional run may add one). */
  plannedRuns: number;
}

/** A run's outputs file, for the comparison with eager PyTorch. */
export interface OutputsFile {
  file: string;
  variant: Variant['name'];
  caller_stream: boolean;
  label: string;
}

export class VerifyRuns {
  /** Every run in the order it ran (the result's `runs`). */
  readonly runs: VerifyRun[] = [];
  /** The outputs files of the runs compared with eager PyTorch, in the order they ran. */
  readonly outputs = new Map<string, OutputsFile>();
  private readonly reports = new Map<string, RunnerReport>();

  constructor(private readonly setup: RunSetup) {}

  private key(v: Variant, callerStream: boolean, freshState: boolean, init: boolean): string {
    return `${v.name}/${callerStream}/${freshState}/${init}`;
  }

  /** Runs `v` once; a program that cannot run here is an environment refusal (exit 2), not a failed run. */
  async run(v: Variant, callerStream: boolean, freshState: boolean, init = this.setup.initDeviceBuffers): Promise<RunnerReport> {
    const s = this.setup;
    s.options.onProgress?.(
      `running ${v.name}${callerStream ? ' with a caller stream' : ''}${freshState ? ', fresh caches' : ''}${init ? ', device buffers initialised' : ''}`,
    );
    const key = this.key(v, callerStream, freshState, init);
    const index = this.runs.length + 1;
    const tracker = s.options.onRunProgress
      ? trackRun(s.options.onRunProgress, {
          index,
          total: Math.max(index, s.plannedRuns),
          label: runLabel(v.name, callerStream, freshState, init, s.initDeviceBuffers),
          steps: s.steps,
        })
      : null;
    try {
      return await this.runOnce(v, callerStream, freshState, init, key, tracker);
    } finally {
      tracker?.stop();
    }
  }

  private async runOnce(
    v: Variant,
    callerStream: boolean,
    freshState: boolean,
    init: boolean,
    key: string,
    tracker: { step: (n: number) => void } | null,
  ): Promise<RunnerReport> {
    const s = this.setup;
    const compared = s.comparesReference && !freshState && init === s.initDeviceBuffers;
    const outputsFile = compared ? join(s.dir, `outputs-${this.outputs.size}.trxt`) : undefined;
    const r = await runRunner(v.runPath ?? v.path, {
      runner: s.runner,
      env: s.options.env,
      signal: s.options.signal,
      inputsFile: s.inputsFile,
      outputsFile,
      methods: s.methods,
      steps: s.steps,
      callerStream,
      freshState,
      // Methods planned to share state share it only through one arena (state-roles.ts); a fresh load has arenas of its own.
      shareArenas: s.sharedState && !freshState,
      budget: s.options.budget,
      device: s.options.device,
      engineKernels: s.options.kernels,
      arenaFill: 'poison',
      initDeviceBuffers: init,
      sharedScratch: s.options.sharedScratch,
      coldPool: s.options.coldPool,
      trtRuntime: s.runtime.delegate === 'stock-trt' ? 'stock' : 'zero-copy',
      backendLib: s.backendLib,
      onStep: tracker ? (n) => tracker.step(n) : undefined,
    });
    if (r.exitCode === 3) throw cannotRunHere(v, r.report);
    this.reports.set(key, r.report);
    if (outputsFile)
      this.outputs.set(key, {
        file: outputsFile,
        variant: v.name,
        caller_stream: callerStream,
        label: `${v.name}, stream ${callerStream ? 'on' : 'off'}`,
      });
    this.runs.push(runOf(v, callerStream, freshState, init, r.exitCode, r.report));
    return r.report;
  }

  /** Every run so far completed (exit 0, ok): only then are runs compared with each other or with eager PyTorch. */
  get completed(): boolean {
    return this.runs.every((r) => r.ok && r.exit_code === 0);
  }

  /** The report of a run that ran (a trtx bug otherwise: INTERNAL). */
  get(v: Variant, callerStream: boolean, freshState = false, init = this.setup.initDeviceBuffers): RunnerReport {
    const key = this.key(v, callerStream, freshState, init);
    return present(this.reports.get(key), `the report of the ${key} run`);
  }
}

/** The runner's exit 3: the environment (no GPU, a TensorRT plan, a backend it lacks), named by its first environment error. */
function cannotRunHere(v: Variant, report: RunnerReport): TrtxError {
  const e = report.errors.find((x) => environmentOf(x.code)) ?? report.errors[0];
  const env = environmentOf(e?.code ?? '') ?? { code: 'VERIFY_CANNOT_RUN_HERE', hint: 'the program cannot run on this machine' };
  return new TrtxError(env.code, v.path, `${e?.message ?? 'the program cannot run here'} (an environment result, not a failed program)`, {
    hint: env.hint,
  });
}

function runOf(v: Variant, callerStream: boolean, freshState: boolean, init: boolean, exitCode: number, report: RunnerReport): VerifyRun {
  return {
    variant: v.name,
    caller_stream: callerStream,
    fresh_state: freshState,
    init_device_buffers: init,
    exit_code: exitCode,
    ok: report.ok,
    errors: report.errors,
    staging: report.methods.map((m) => ({
      method: m.name,
      h2d_bytes: m.steps[0]?.h2d_bytes ?? 0,
      d2h_bytes: m.steps[0]?.d2h_bytes ?? 0,
      step_median_us: m.step_time_us?.median ?? null,
      engine_stand_in_bytes: m.steps[0]?.engine_stand_in_bytes ?? null,
    })),
  };
}
