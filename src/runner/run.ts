// Runs the native runner on one program and returns its validated report.
// The runner writes the report to a file (stdout stays free for it to print
// nothing); its stderr is returned for the caller to show or not.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { makeTempDir } from '../util/cleanup.js';
import { childEnvOptions, settingsOf, tempRootOf, type Env } from '../util/env.js';
import type { RunnerCode } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';
import { RunnerReport } from './report.js';

/** The runner's temporary folder in TMPDIR (makeTempDir adds the owner's pid; verify sweeps dead owners' ones). */
export const RUNNER_TEMP_PREFIX = 'trtx-runner-';

export interface RunRunnerOptions {
  /** The runner binary (ensureRunner().path). */
  runner: string;
  /** The run's environment (util/env.ts): the runner gets it, its ASAN_OPTIONS defaulting as below. */
  env?: Env;
  /** Methods to run, in order; default every method of the program. */
  methods?: readonly string[];
  /** Decode steps; default 1. */
  steps?: number;
  /** Run every execute under one caller stream (non-blocking on CUDA). */
  callerStream?: boolean;
  /** Load-time weight_streaming_budget in bytes. */
  budget?: bigint | number | string;
  /** Reload the method before every step (caches back at their initial state). */
  freshState?: boolean;
  /** Leave the device pool's release threshold alone (`--cold-pool`); default: kept warm on CUDA. */
  coldPool?: boolean;
  /** One activation scratch buffer per device for every engine (`--shared-scratch`); default: private per engine. */
  sharedScratch?: boolean;
  /** Force the CPU or a CUDA device; default a GPU when the build and machine have one. */
  device?: 'cpu' | 'cuda';
  /** What computes version-2/3 reference engines (`--engine-kernels`); default ATen's where the runner has libtorch for the device. */
  engineKernels?: 'aten' | 'executorch';
  /** Device arenas: poison (0xFF, the runner's default) or none (as the allocator returns them, as ExecuTorch leaves them). */
  arenaFill?: 'poison' | 'none';
  /** Zero every named buffer in device memory after each method load, as a correct application does. */
  initDeviceBuffers?: boolean;
  /** A TRXT file (tensor-file.ts) of recorded inputs the runner feeds instead of its pattern (`--inputs`). */
  inputsFile?: string;
  /** Where the runner writes every output of every executed step, as a TRXT file (`--outputs`). */
  outputsFile?: string;
  /** Module with share_memory_arenas (ExecuTorch refuses device arenas then). */
  shareArenas?: boolean;
  /** The Torch-TensorRT runtime the delegate behaves as: with the zero-copy contract (default) or stock. */
  trtRuntime?: 'zero-copy' | 'stock';
  /** A shared library whose TensorRTBackend runs instead of the runner's own (`--backend-lib`, docs/backend-plugin.md). */
  backendLib?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called as each step finishes (the runner's `--progress` lines on stderr); the runner is asked for them only when given. */
  onStep?: (step: number, steps: number) => void;
}

/** `trtx-runner progress: step N of S` (native-runner/src/cli/step_loop.cpp, --progress). */
const PROGRESS_LINE = /^trtx-runner progress: step (\d+) of (\d+)$/;

export interface RunnerResult {
  /** 0 ok, 1 program invalid or execution failed, 3 the program cannot run here (a TensorRT plan, a missing backend, no GPU for --device cuda). */
  exitCode: number;
  report: RunnerReport;
  stderr: string;
  /** The command line, for messages. */
  argv: string[];
}

export function runnerArgs(program: string, o: Omit<RunRunnerOptions, 'runner'>, reportPath: string): string[] {
  const args = ['run', program, '--report', reportPath];
  for (const m of o.methods ?? []) args.push('--method', m);
  if (o.steps !== undefined) args.push('--steps', String(o.steps));
  if (o.callerStream !== undefined) args.push('--caller-stream', o.callerStream ? 'on' : 'off');
  if (o.budget !== undefined) args.push('--budget', String(o.budget));
  if (o.freshState) args.push('--fresh-state');
  if (o.coldPool) args.push('--cold-pool');
  if (o.sharedScratch) args.push('--shared-scratch');
  if (o.device !== undefined) args.push('--device', o.device);
  if (o.engineKernels !== undefined) args.push('--engine-kernels', o.engineKernels);
  if (o.arenaFill !== undefined) args.push('--arena-fill', o.arenaFill);
  if (o.initDeviceBuffers) args.push('--init-device-buffers');
  if (o.shareArenas) args.push('--share-arenas');
  if (o.trtRuntime !== undefined) args.push('--trt-runtime', o.trtRuntime);
  if (o.inputsFile !== undefined) args.push('--inputs', o.inputsFile);
  if (o.outputsFile !== undefined) args.push('--outputs', o.outputsFile);
  if (o.backendLib !== undefined) args.push('--backend-lib', o.backendLib);
  if (o.onStep) args.push('--progress');
  return args;
}

export async function runRunner(program: string, options: RunRunnerOptions): Promise<RunnerResult> {
  const temp = await makeTempDir(RUNNER_TEMP_PREFIX, tempRootOf(options.env));
  const dir = temp.path;
  const reportPath = join(dir, 'report.json');
  const argv = runnerArgs(program, options, reportPath);
  try {
    const child = execa(options.runner, argv, {
      reject: false,
      timeout: options.timeoutMs,
      cancelSignal: options.signal,
      stdin: 'ignore',
      // Hostile programs ask for huge arenas: under AddressSanitizer that must
      // come back as an allocation error, which is what the runner reports.
      ...childEnvOptions(options.env, { ASAN_OPTIONS: settingsOf(options.env).ASAN_OPTIONS ?? 'allocator_may_return_null=1' }),
    });
    if (options.onStep) watchProgress(child.stderr, options.onStep);
    const r = await child;
    const stderr = r.stderr ?? '';
    if (r.isCanceled || r.timedOut) {
      throw new TrtxError(
        'RUNNER_INTERRUPTED',
        program,
        r.timedOut ? `the native runner timed out after ${options.timeoutMs} ms` : 'the native runner was cancelled',
      );
    }
    if (r.signal || r.exitCode === undefined) {
      throw new TrtxError('RUNNER_CRASHED', program, `the native runner died (${r.signal ?? 'no exit code'}): ${lastLine(stderr)}`);
    }
    let text: string;
    try {
      text = await readFile(reportPath, 'utf8');
    } catch {
      // No report: a usage error (exit 2) or a failure before the runner could write one.
      const lib = r.exitCode === 2 ? backendLibRefusal(stderr) : null;
      if (lib) throw lib;
      throw new TrtxError(
        r.exitCode === 2 ? 'RUNNER_USAGE' : 'RUNNER_NO_REPORT',
        program,
        `the native runner wrote no report (exit ${r.exitCode}): ${lastLine(stderr)}`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new TrtxError('RUNNER_REPORT_INVALID', reportPath, `the runner's report is not JSON: ${(e as Error).message}`);
    }
    const parsed = RunnerReport.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = issue ? `$.${issue.path.join('.')}` : '$';
      throw new TrtxError('RUNNER_REPORT_INVALID', at, `the runner's report does not match its schema: ${issue?.message ?? 'invalid'}`);
    }
    if (parsed.data.exit_code !== r.exitCode) {
      throw new TrtxError(
        'RUNNER_REPORT_INVALID',
        '$.exit_code',
        `the report says exit ${parsed.data.exit_code} but the runner exited ${r.exitCode}`,
      );
    }
    return { exitCode: r.exitCode, report: parsed.data, stderr, argv };
  } finally {
    await temp.remove();
  }
}

/**
 * The runner's refusal of a --backend-lib library: one line
 * `RUNNER_BACKEND_LIB_<WHY>: PATH: message` (native-runner/src/integration/backend_plugin.h),
 * an environment error.
 */
const BACKEND_LIB_CODES: readonly RunnerCode[] = [
  'RUNNER_BACKEND_LIB_MISSING',
  'RUNNER_BACKEND_LIB_LOAD',
  'RUNNER_BACKEND_LIB_ABI',
  'RUNNER_BACKEND_LIB_EMPTY',
];

function backendLibRefusal(stderr: string): TrtxError | null {
  const m = /^(RUNNER_BACKEND_LIB_[A-Z]+): (.*?): (.*)$/m.exec(stderr);
  const code = BACKEND_LIB_CODES.find((c) => c === m?.[1]);
  if (!m || !code) return null;
  return new TrtxError(code, m[2] ?? '', m[3] ?? '', {
    hint: 'build the library against the ExecuTorch `trtx env` prints, linking its shared libexecutorch (docs/backend-plugin.md)',
  });
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines[lines.length - 1] ?? '(no output)';
}

/** Calls `onStep` for each progress line the runner writes to `stream`, as it comes (execa still collects the whole stderr). */
function watchProgress(stream: NodeJS.ReadableStream | null, onStep: (step: number, steps: number) => void): void {
  if (!stream) return;
  let pending = '';
  stream.on('data', (chunk: Buffer | string) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const m = PROGRESS_LINE.exec(line.trim());
      if (m) onStep(Number(m[1]), Number(m[2]));
    }
  });
}
