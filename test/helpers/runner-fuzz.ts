// The native runner under hostile input: each mutant of test/helpers/fuzz.ts
// (the fixtures and the ExecuTorch corpus, byte and model mutants) through
// `trtx-runner run` on the CPU, and through `trtx check` in process. What a
// run may end in is the runner's documented set (native-runner/README.md:
// exit 0, 1 or 3 with a report whose exit_code agrees); a signal, another
// exit code, no report, a sanitizer report on stderr (AddressSanitizer,
// LeakSanitizer, UndefinedBehaviorSanitizer's "runtime error:") or a run over
// the time bound is a finding.
//
// Each mutant runs in both verification modes (`--verification internal`
// and `minimal`). A crash inside ExecuTorch itself is a finding too: the
// runner's own validation (native-runner/src/integration/program_validation.h)
// refuses every program shape ExecuTorch was seen to crash on before
// ExecuTorch reads it, in either mode. Whether the first frame is
// ExecuTorch's is kept in the result, to say where a new one lies.

import { execa } from 'execa';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './cli.js';
import { fuzzSeeds, mutant, type FuzzSeed } from './fuzz.js';
import { hostileSeeds } from './hostile-seeds.js';

/** The runner's documented exit codes for a run (2 is usage, which these arguments never are). */
export const RUNNER_EXITS = [0, 1, 3];
/** A run taking longer than this is a hang (these programs run in tens of milliseconds, under ASan too). */
export const RUNNER_MS = 20_000;

/**
 * Two steps (a cache written in one is read in the next), and planned host
 * memory capped at 1 GiB: a mutant that plans more is refused before
 * ExecuTorch allocates it (PlannedMemoryLimit), so the campaign's memory stays
 * bounded on any machine (the default cap is the machine's physical memory).
 */
export const DEFAULT_ARGS = ['--steps', '2', '--max-planned-bytes', String(1 << 30)];

/**
 * The runner's verification modes (`--verification`): its own validation
 * runs before ExecuTorch in both, so every mutant runs in each.
 */
export const VERIFICATIONS = ['internal', 'minimal'] as const;
export type Verification = (typeof VERIFICATIONS)[number];

/** Sanitizer reports and crash banners on stderr. */
const SANITIZER =
  /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: |SUMMARY: (Address|Undefined|Leak)Sanitizer|AddressSanitizer:DEADLYSIGNAL/;

export interface RunnerMutantResult {
  mutant: number;
  seed: string;
  kind: string;
  verification: Verification;
  exit: number | null;
  signal: string | null;
  ms: number;
  /** The report's first error code, 'ok', or null without a report. */
  runnerCode: string | null;
  runnerLocation: string | null;
  runnerMessage: string | null;
  /** `trtx check`'s exit code and first error code. */
  checkExit: number;
  checkCode: string | null;
  problem: string | null;
  /** The sanitizer's or crash's first lines, for the record. */
  crash: string | null;
  /** True when the crash's first frame is ExecuTorch's own (a sanitizer stack is needed to tell). */
  insideExecutorch: boolean;
}

export interface RunnerFuzzOptions {
  runner: string;
  seed: number;
  count: number;
  /** A folder this run may write into (mutant.pte, report.json). */
  dir: string;
  seeds?: FuzzSeed[];
  /** Extra runner arguments (default: DEFAULT_ARGS). */
  args?: string[];
  /** The modes each mutant runs in (default: both). */
  verifications?: readonly Verification[];
}

/**
 * Whether the frame a sanitizer's stack names first, past the C library, the
 * sanitizer runtime and the C++ library, is ExecuTorch's (libexecutorch*.so),
 * not trtx's (the runner binary, which links trtx's code statically).
 */
function crashedInsideExecutorch(stderr: string): boolean {
  const frames = stderr.split('\n').filter((l) => /^\s*#\d+ 0x/.test(l));
  const first = frames.find((l) => !/(libc\.so|libc-|libasan|libubsan|libstdc\+\+|libgcc|ld-linux|sanitizer_common|compiler-rt)/.test(l));
  return first !== undefined && /libexecutorch[^/]*\.so/.test(first);
}

function crashSummary(stderr: string): string {
  const lines = stderr.split('\n');
  const at = lines.findIndex((l) => SANITIZER.test(l));
  const from = at < 0 ? Math.max(0, lines.length - 12) : at;
  return lines.slice(from, from + 12).join('\n');
}

export interface RunnerOutcome {
  exit: number | null;
  signal: string | null;
  timedOut: boolean;
  ms: number;
  stderr: string;
  /** The report's exit_code, its errors, or null without a (readable) report. */
  report: { exit_code: number; errors: { code: string; location: string; message: string }[] } | null;
  /** A sanitizer report or a crash signal. */
  crashed: boolean;
  /** The crash's first frame is ExecuTorch's own. */
  insideExecutorch: boolean;
}

/** One run of `trtx-runner run FILE --device cpu`, with the sanitizers set to report and exit distinctly. */
export async function runRunnerOn(runner: string, file: string, dir: string, args: string[] = DEFAULT_ARGS): Promise<RunnerOutcome> {
  const reportPath = join(dir, 'report.json');
  rmSync(reportPath, { force: true });
  const t0 = Date.now();
  const r = await execa(runner, ['run', file, '--device', 'cpu', '--report', reportPath, ...args], {
    reject: false,
    timeout: RUNNER_MS,
    stdin: 'ignore',
    // Huge arenas must come back as an allocation error, as without ASan;
    // any sanitizer report ends the run with a distinct status.
    env: {
      ASAN_OPTIONS: 'allocator_may_return_null=1:detect_leaks=1:exitcode=86',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1:exitcode=87',
    },
  });
  const ms = Date.now() - t0;
  const stderr = r.stderr ?? '';
  let report: RunnerOutcome['report'] = null;
  if (existsSync(reportPath)) {
    try {
      report = JSON.parse(readFileSync(reportPath, 'utf8')) as RunnerOutcome['report'];
    } catch {
      report = null;
    }
  }
  const crashed = SANITIZER.test(stderr) || Boolean(r.signal);
  return {
    exit: r.exitCode ?? null,
    signal: r.signal ?? null,
    timedOut: Boolean(r.timedOut),
    ms,
    stderr,
    report,
    crashed,
    insideExecutorch: crashed && crashedInsideExecutorch(stderr),
  };
}

/** Whether a run ended outside the runner's contract, and how. */
function problemOf(run: RunnerOutcome): string | null {
  const { exit, signal } = run;
  if (run.timedOut) return `took over ${RUNNER_MS} ms`;
  if (SANITIZER.test(run.stderr)) return 'sanitizer report';
  if (signal) return `signal ${signal}`;
  if (exit === null || !RUNNER_EXITS.includes(exit)) return `exit ${exit}`;
  if (run.report === null) return 'no report';
  if (run.report.exit_code !== exit) return `report says exit ${run.report.exit_code}, the runner exited ${exit}`;
  return null;
}

/** The `index`-th mutant through `trtx check` once and the runner once per verification mode. */
export async function fuzzRunnerOnce(o: Omit<RunnerFuzzOptions, 'count'>, index: number, seeds: FuzzSeed[]): Promise<RunnerMutantResult[]> {
  const m = mutant(o.seed, index, seeds);
  const file = join(o.dir, 'mutant.pte');
  writeFileSync(file, m.bytes);
  const check = await runCli(['--quiet', 'check', '--json', file]);
  let checkCode: string | null;
  try {
    const j = JSON.parse(check.stdout) as { diagnostics?: { severity: string; code: string }[]; error?: { code: string } };
    checkCode = j.error?.code ?? j.diagnostics?.find((d) => d.severity === 'error')?.code ?? null;
  } catch {
    checkCode = null;
  }
  const out: RunnerMutantResult[] = [];
  for (const verification of o.verifications ?? VERIFICATIONS) {
    const run = await runRunnerOn(o.runner, file, o.dir, [...(o.args ?? DEFAULT_ARGS), '--verification', verification]);
    const first = run.report?.errors[0];
    out.push({
      mutant: index,
      seed: m.seed.name,
      kind: m.kind,
      verification,
      exit: run.exit,
      signal: run.signal,
      ms: run.ms,
      runnerCode: run.report ? (first?.code ?? 'ok') : null,
      runnerLocation: first?.location ?? null,
      runnerMessage: first?.message ?? null,
      checkExit: check.code,
      checkCode,
      problem: problemOf(run),
      crash: run.crashed ? crashSummary(run.stderr) : null,
      insideExecutorch: run.insideExecutorch,
    });
  }
  return out;
}

/** A result that is a finding: any run outside the runner's contract, a crash inside ExecuTorch included. */
export function isFinding(r: RunnerMutantResult): boolean {
  return r.problem !== null;
}

export async function fuzzRunner(o: RunnerFuzzOptions): Promise<RunnerMutantResult[]> {
  const seeds = o.seeds ?? [...fuzzSeeds(), ...hostileSeeds()];
  const out: RunnerMutantResult[] = [];
  for (let i = 0; i < o.count; i++) out.push(...(await fuzzRunnerOnce(o, i, seeds)));
  return out;
}
