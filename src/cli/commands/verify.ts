// trtx verify FILE [--zero-copy-kv] [--steps N] [--reference FILE | --no-reference] [--atol X] [--rtol X] [--caller-stream on|off|both] [--budget SIZE] [--device cpu|cuda]
//   [--runtime NAME ...] [--init-device-buffers | --no-init-device-buffers] [--shared-scratch] [--cold-pool] [--json | --format text|json|junit]
import { readdir } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { hostname } from 'node:os';
import { parseRuntimes, describeRuntime } from '../../checks/runtime-rules.js';
import { formatIEC, parseSize } from '../../util/size.js';
import { shortList, shortenNameLists } from '../../util/display.js';
import { toJunit } from '../../report/junit.js';
import { renderDiagnostics } from '../render-diagnostics.js';
import { renderMemory } from '../render-memory.js';
import { renderReference } from '../render-reference.js';
import { EXIT_CHECK, EXIT_OK, usage, type Ctx, type GlobalOptions } from '../context.js';
import { action } from '../action.js';
import type { VerifyOptions as VerifyJobOptions } from '../../verify/verify.js';
import type { CliSession } from '../session.js';
import { runnerBuildProgress } from '../runner-progress.js';
import { budgetWarnings } from '../budget-flag.js';
import { helpAfter } from '../help.js';
import { styler } from '../style.js';
import type { VerifyResult } from '../../verify/verify.js';
import type { VerifyProgress } from '../../verify/progress.js';
import { formatElapsed } from '../../util/ticker.js';
import { backendLibAsked } from '../../verify/backend-lib.js';
import { standinEngineLines } from '../../tensorrt/engine-kind.js';

interface VerifyOptions extends GlobalOptions {
  zeroCopyKv?: boolean;
  strict?: boolean;
  steps?: string;
  reference?: string | false;
  atol?: string;
  rtol?: string;
  callerStream?: 'on' | 'off' | 'both';
  budget?: string;
  device?: 'cpu' | 'cuda';
  kernels?: 'aten' | 'executorch';
  runtime?: string[];
  initDeviceBuffers?: boolean;
  sharedScratch?: boolean;
  coldPool?: boolean;
  backendLib?: string;
  format?: 'text' | 'json' | 'junit';
}

const bytes = (n: number) => formatIEC(BigInt(n));

/** The plan, then a run's place, step and time: on stderr (the log), never under --json. */
function sayProgress(ctx: Ctx, p: VerifyProgress): void {
  if (p.kind === 'plan') {
    const more = p.conditional ? `; then, if the caches are in device memory, ${p.conditional}` : '';
    ctx.log.info(
      `verify plan: ${p.runs.length}${p.conditional ? ' or ' + (p.runs.length + 1) : ''} runs of ${p.steps} steps of ${p.methods.join(', ')}: ${p.runs.join('; ')}${more}`,
    );
    return;
  }
  // A run that ends within the first second says nothing: the plan said it.
  if (p.elapsedMs < 1000) return;
  const where = `run ${p.index} of ${p.total} (${p.label})`;
  ctx.log.info(
    p.done
      ? `${where}: ${p.step} of ${p.steps} steps in ${formatElapsed(p.elapsedMs)}`
      : `${where}: step ${Math.min(p.step + 1, p.steps)} of ${p.steps}, ${formatElapsed(p.elapsedMs)}`,
  );
}

/** Which kernels computed the engines: ATen's are eager PyTorch's own; ExecuTorch's CPU kernels round differently (docs/reference-lowering.md, "Kernel sets"). */
function kernelsLine(all: (string | null)[]): string | null {
  const sets = [...new Set(all.filter((k): k is string => k !== null && !k.startsWith('synthetic')))];
  if (!sets.length) return null;
  const say: Record<string, string> = {
    'aten-cpu': "ATen's CPU kernels (libtorch's, as eager PyTorch runs them)",
    'aten-cuda': "ATen's CUDA kernels on the GPU (libtorch's, as eager PyTorch runs them)",
    'executorch-cpu':
      "ExecuTorch's CPU kernels (--kernels executorch, or a runner without libtorch for the device: the engines' bindings are copied to the host and back)",
  };
  return `engines computed by ${sets.map((k) => say[k] ?? k).join('; ')}`;
}

/** What streaming did, as the runner counted it, beside the spec's arithmetic. */
function measuredLine(m: NonNullable<VerifyResult['budgets'][number]['measured']>): string {
  const perStep = m.executes > 0 ? BigInt(m.streamed_bytes) / BigInt(m.executes) : 0n;
  const window = BigInt(m.window_bytes) > 0n ? ` through a ${formatIEC(BigInt(m.window_bytes))} window` : '';
  return `measured: ${formatIEC(BigInt(m.resident_bytes))} resident, ${formatIEC(perStep)} copied in per execute${window} (${formatIEC(BigInt(m.streamed_bytes))} over ${m.executes} executes)`;
}

export function renderVerify(r: VerifyResult, ctx: Pick<Ctx, 'color'>): string[] {
  const s = styler(ctx);
  const where = r.device === null ? 'nothing ran' : r.device.kind === 'cuda' ? `GPU ${r.device.name}` : 'CPU (no GPU used)';
  const lines = [
    `${s('bold', r.file)}: ${r.mode}, ${r.steps} steps of ${r.methods.join(', ')}; runtime rules ${describeRuntime(r.runtime)}`,
  ];
  for (const n of r.notes) lines.push(`  note: ${n}`);
  if (r.check.refused) {
    lines.push(`  check: ${r.check.summary.line}`);
    for (const file of [...new Set(r.check.diagnostics.map((d) => d.file))]) {
      lines.push(`  ${s('bold', file)}`);
      lines.push(
        ...renderDiagnostics(
          r.check.diagnostics.filter((d) => d.file === file),
          null,
          ctx,
        ).map((l) => `    ${l}`),
      );
    }
    lines.push(s('red', `refused: the check found ${r.check.summary.line}; nothing was run`));
    return lines;
  }
  if (r.check.diagnostics.length) {
    // What the deployment must provide; `trtx check` explains each.
    const byFile = new Map<string, Map<string, number>>();
    for (const d of r.check.diagnostics) {
      const codes = byFile.get(d.file) ?? new Map<string, number>();
      codes.set(d.code, (codes.get(d.code) ?? 0) + 1);
      byFile.set(d.file, codes);
    }
    const found = [...byFile].map(([file, codes]) => `${file}: ${[...codes].map(([c, n]) => (n > 1 ? `${c} x${n}` : c)).join(', ')}`);
    lines.push(`  check: ${r.check.summary.line} (${found.join('; ')}; trtx check explains each)`);
  }
  lines.push(`  ran on ${where}`);
  for (const l of standinEngineLines(r.engines)) lines.push(`  ${l}`);
  const kernels = kernelsLine(r.budgets.map((b) => b.kernels));
  if (kernels) lines.push(`  ${kernels}`);
  if (r.caches.length) lines.push(`  caches: ${shortList(r.caches)}`);
  if (r.options.twin_contract) {
    const subject = r.mode === 'staged-vs-zero-copy' ? 'the zero-copy twin' : 'the program';
    lines.push(
      `  ${subject} keeps its caches in device memory, which ExecuTorch does not clear: it runs initialised after each load, as the zero-copy contract makes the application do (docs/zero-copy-kv.md); one more run leaves them poisoned to show whether that is needed${subject === 'the program' ? ' (--no-init-device-buffers: verify it as an application that does not initialise them)' : ''}`,
    );
  }
  const mainRun = (x: (typeof r.runs)[number]) => x.init_device_buffers === (r.options.init_device_buffers || r.options.twin_contract);
  // The runs of the first caller-stream mode (none when nothing ran).
  const firstStream = r.runs[0]?.caller_stream;
  for (const run of r.runs.filter((x) => !x.fresh_state && x.caller_stream === firstStream && mainRun(x)))
    lines.push(...runTrafficLines(run));
  for (const b of r.budgets) {
    const eff = b.effective === null ? 'automatic' : formatIEC(BigInt(b.effective));
    lines.push(
      `  budget ${b.method} delegate ${b.delegate}: ${eff} (${b.source}${b.clamped ? ', clamped to the streamable size' : ''}${b.ignored ? `, ignored: ${b.ignored}` : ''})`,
    );
    // Only an engine carrying its partition has weights to tell (a synthetic engine's are made up).
    if (b.streamable_weight_bytes !== null && b.resident_bytes !== null && b.streamed_bytes_per_execute !== null)
      lines.push(
        `    weights ${formatIEC(BigInt(b.streamable_weight_bytes))}: ${formatIEC(BigInt(b.resident_bytes))} resident, ${formatIEC(BigInt(b.streamed_bytes_per_execute))} streamed per execute`,
      );
    if (b.measured) lines.push(`    ${measuredLine(b.measured)}`);
  }
  if (r.memory) lines.push(...renderMemory(r.memory, r.options.init_device_buffers || r.options.twin_contract));
  lines.push(...renderReference(r.reference, s));
  // The names and details spell out every buffer (--json keeps them whole); a line here names a few.
  for (const a of r.assertions)
    lines.push(
      `  ${a.ok ? s('green', 'ok  ') : s('red', 'FAIL')} ${shortenNameLists(a.name)}${a.detail ? s('dim', ` (${shortenNameLists(a.detail)})`) : ''}`,
    );
  const failed = r.assertions.filter((a) => !a.ok).length;
  lines.push(
    failed
      ? s(
          'red',
          `${failed} of ${r.assertions.length} checks failed${r.reference.worst ? `; furthest from PyTorch: ${r.reference.worst}` : ''}`,
        )
      : s('green', `verified: ${r.assertions.length} checks passed on ${where}`),
  );
  return lines;
}

/**
 * `trtx verify --zero-copy-kv` with no file, as a CI step after `trtx export
 * model.pt` in the same folder: the one program there. Two or none is a
 * usage error that lists what it found, never a guess.
 */
async function soleProgramHere(ctx: Ctx): Promise<string> {
  const found = (await readdir(ctx.cwd, { withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.endsWith('.pte'))
    .map((e) => e.name)
    .sort();
  const [only, ...others] = found;
  if (only !== undefined && others.length === 0) return ctx.at(only);
  if (found.length === 0) throw usage('no file named and no .pte in the current folder', 'name the program: trtx verify FILE');
  throw usage(
    `no file named and ${found.length} .pte files in the current folder (${found.slice(0, 5).join(', ')}${found.length > 5 ? ', ...' : ''})`,
    'name the program: trtx verify FILE',
  );
}

const VERIFY_HELP = helpAfter({
  about: `Device arenas are filled with 0xFF (a NaN in every float type) when they are allocated, so a program that reads a
device buffer before writing it fails visibly; ExecuTorch itself leaves them as cudaMalloc returns them. A zero-copy
program (derived by --zero-copy-kv, or given) runs initialised, as its contract makes the application do, and once more
poisoned to show whether that is needed; --init-device-buffers and --no-init-device-buffers decide otherwise.

With PROGRAM.reference.json beside the program (written by trtx export, carried by trtx rewrite -o), every persistent
run is fed its recorded inputs and its outputs are compared with eager PyTorch\u2019s:
|program - pytorch| <= atol + rtol * |pytorch| per element.`,
  exit: [
    [0, 'verified'],
    [1, 'the check refused the program, or a runtime check failed (outputs over the tolerance against eager PyTorch included)'],
    [
      2,
      'usage, or the program cannot run here (a TensorRT plan, a backend or kernel the runner lacks, --device cuda without a GPU, a GPU the program targets missing)',
    ],
  ],
  schema: 'schemas/verify.schema.json',
  examples: [
    'trtx verify model.pte',
    'trtx verify model.pte --steps 3 --atol 1e-3 --rtol 1e-3',
    'trtx verify --zero-copy-kv                      (the one .pte in this folder)',
    'trtx verify kv-decode-staged.pte --zero-copy-kv --init-device-buffers --steps 6',
    'trtx verify model.pte --budget 8GiB --caller-stream on --shared-scratch --json',
    'trtx verify kv-decode-staged.pte --zero-copy-kv --format junit > trtx-verify.xml',
  ],
});

export function registerVerify(program: Command, session: CliSession): void {
  defineVerify(program).action(action<VerifyOptions>(session, async (ctx, opts, args) => verifyCommand(ctx, opts, args[0])));
}

/** The command, its flags and its help. */
function defineVerify(program: Command): Command {
  return (
    program
      .command('verify')
      .description('check the program, run it on the ExecuTorch runtime in the bundled runner and prove the delegate runtime contract')
      .argument('[file]', 'the .pte program (default: the one .pte in the current folder)')
      .option('--zero-copy-kv', 'prove zero-copy KV: derive the zero-copy twin of a staged program and compare both, step by step')
      .option(
        '--strict',
        'with --zero-copy-kv: refuse a program without KV caches (ZC_REWRITE_NO_ALIASED_CACHE) instead of running it as it is',
      )
      .option(
        '--steps <n>',
        "steps per run, at least 2 (a cache must persist from one step to the next); default the reference outputs' steps, else 4; at most the reference's",
      )
      .option(
        '--reference <file>',
        'eager PyTorch outputs to compare with (default: PROGRAM.reference.json beside the program, when there)',
      )
      .option('--no-reference', 'compare the program with itself only, not with eager PyTorch')
      .option(
        '--atol <x>',
        'absolute tolerance of floating outputs against PyTorch (default per dtype: 1e-4 float32/float64, 1e-2 float16, 5e-2 bfloat16)',
      )
      .option('--rtol <x>', 'relative tolerance of floating outputs against PyTorch (default per dtype, as --atol)')
      .addOption(
        new Option('--caller-stream <mode>', 'execute with a caller stream, without, or both')
          .choices(['on', 'off', 'both'])
          .default('both'),
      )
      .option('--budget <size>', 'load-time weight-streaming budget (overrides the baked spec)')
      .addOption(new Option('--device <kind>', 'force the CPU or the GPU (default: the GPU when there is one)').choices(['cpu', 'cuda']))
      .addOption(
        new Option(
          '--kernels <set>',
          "what computes the reference engines' programs: aten (libtorch's kernels, as eager PyTorch runs them, on the engine's device) or executorch (ExecuTorch's CPU kernels) (default: aten where the runner has libtorch for the device)",
        ).choices(['aten', 'executorch']),
      )
      .option('--runtime <name...>', 'whose rules apply (as trtx check --runtime): zero-copy-trt|stock-trt, et-module|custom-memory')
      .option(
        '--init-device-buffers',
        'zero device-resident buffers after each load, as a correct application must, and skip the poisoned run (default: a zero-copy program runs initialised as its contract says, and once more poisoned to show whether that is needed; any other runs poisoned)',
      )
      .option(
        '--no-init-device-buffers',
        'leave device-resident buffers poisoned in every run, as an application that does not initialise them: a program that reads its caches before writing them fails',
      )
      .option('--shared-scratch', 'one activation scratch buffer per device backs every engine (default: private per engine)')
      .option('--cold-pool', 'leave the device pool cold (default: its release threshold is raised while the program is loaded)')
      .option(
        '--backend-lib <path>',
        "a shared library registering TensorRTBackend, run instead of trtx's (default: $TRTX_BACKEND_LIB; docs/backend-plugin.md)",
      )
      .option('--json', 'machine-readable output (schemas/verify.schema.json); the same as --format json')
      .addOption(
        new Option('--format <format>', 'text, json (schemas/verify.schema.json) or junit (JUnit XML, one test case per check)').choices([
          'text',
          'json',
          'junit',
        ]),
      )
      .addHelpText('after', VERIFY_HELP)
      // --format json is --json: the same document, and the error document on a refusal.
      .hook('preAction', (cmd) => {
        if (cmd.opts().format === 'json') cmd.setOptionValue('json', true);
      })
  );
}

/** The handler: the flags, then verifyProgram, then the result in the format asked. */
async function verifyCommand(ctx: Ctx, opts: VerifyOptions, named: string | undefined): Promise<number> {
  const file = named === undefined ? await soleProgramHere(ctx) : ctx.at(named);
  if (opts.json && opts.format !== undefined && opts.format !== 'json')
    throw usage(`--json and --format ${opts.format} ask for two outputs`, 'keep one of them');
  const started = new Date();
  const t0 = process.hrtime.bigint();
  const flags = verifyFlags(opts);
  if (opts.budget !== undefined && flags.budget !== undefined)
    for (const w of budgetWarnings(opts.budget, flags.budget, 'verify')) ctx.log.warn(w);
  const backendLib = backendLibAsked(opts.backendLib, ctx.env);
  // zod and execa come with the runner: loaded only when verify runs.
  const { verifyProgram } = await import('../../verify/verify.js');
  const result = await verifyProgram(file, {
    ...flags,
    zeroCopyKv: opts.zeroCopyKv,
    strict: opts.strict,
    reference: typeof opts.reference === 'string' ? ctx.at(opts.reference) : opts.reference,
    callerStream: opts.callerStream,
    device: opts.device,
    kernels: opts.kernels,
    initDeviceBuffers: opts.initDeviceBuffers,
    sharedScratch: opts.sharedScratch,
    coldPool: opts.coldPool,
    backendLib: backendLib === undefined ? undefined : ctx.at(backendLib),
    onProgress: (m) => ctx.log.debug(m),
    onRunProgress: ctx.json || ctx.quiet ? undefined : (p) => sayProgress(ctx, p),
    onRunnerBuild: runnerBuildProgress(ctx),
    // A prebuilt runner only as the run's environment names it.
    runnerBinary: ctx.env.TRTX_RUNNER_BIN ?? null,
    reportBudget: ctx.budget,
    env: ctx.env,
    cwd: ctx.cwd,
    signal: ctx.signal,
  });
  if (opts.format === 'junit')
    ctx.printDocument(toJunit(result, { started, seconds: Number(process.hrtime.bigint() - t0) / 1e9, hostname: hostname() }).trimEnd());
  else if (ctx.json) ctx.emitJson(result);
  else for (const l of renderVerify(result, ctx)) ctx.print(l);
  return result.ok ? EXIT_OK : EXIT_CHECK;
}

/** The numeric flags, checked: usage errors before anything is read. */
function verifyFlags(opts: VerifyOptions): Pick<VerifyJobOptions, 'steps' | 'atol' | 'rtol' | 'budget' | 'runtime'> {
  if (opts.steps !== undefined && !/^[0-9]+$/.test(opts.steps)) throw usage(`--steps ${JSON.stringify(opts.steps)} is not a whole number`);
  const steps = opts.steps === undefined ? undefined : Number(opts.steps);
  const tolerance = (flag: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    const x = Number(v);
    if (v.trim() === '' || !Number.isFinite(x) || x < 0) throw usage(`${flag} ${JSON.stringify(v)} is not a number of at least 0`);
    return x;
  };
  const atol = tolerance('--atol', opts.atol);
  const rtol = tolerance('--rtol', opts.rtol);
  const budget = opts.budget === undefined ? undefined : parseSize(opts.budget, { location: '--budget' });
  const runtime = parseRuntimes(opts.runtime);
  return { steps, atol, rtol, budget, runtime };
}

/** A run's staging bytes and median step per method, and apart from them what its stand-in engines copied to run on CPU kernels. */
function runTrafficLines(run: VerifyResult['runs'][number]): string[] {
  const st = run.staging.map((m) => `${m.method} host->device ${bytes(m.h2d_bytes)}, device->host ${bytes(m.d2h_bytes)}`).join('; ');
  const time = run.staging
    .filter((m) => m.step_median_us !== null)
    .map((m) => `${m.method} ${((m.step_median_us ?? 0) / 1000).toFixed(2)} ms`)
    .join('; ');
  const lines = [`  ${run.variant}: ${st} per step${time ? `; median step ${time}` : ''}`];
  const standIn = run.staging.filter(
    (m) => m.engine_stand_in_bytes && m.engine_stand_in_bytes.h2d_bytes + m.engine_stand_in_bytes.d2h_bytes > 0,
  );
  if (standIn.length)
    lines.push(
      `    and the stand-in engines' own copies to run on CPU kernels (not the program's, not TensorRT's): ${standIn.map((m) => `${m.method} ${bytes(m.engine_stand_in_bytes?.d2h_bytes ?? 0)} read, ${bytes(m.engine_stand_in_bytes?.h2d_bytes ?? 0)} written`).join('; ')} per step`,
    );
  return lines;
}
