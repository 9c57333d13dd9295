// trtx export MODEL [-o OUT] [--force] [--engine tensorrt|reference] [--budget SIZE] [--zero-copy-kv] [--method NAME]... [--reference-steps N | --no-reference] [--python PATH] [--timeout S] [--json]
import type { Command } from 'commander';
import { DEFAULT_REFERENCE_STEPS, MAX_REFERENCE_STEPS, defaultOutput } from '../../export/model-file.js';
import { parseSize } from '../../util/size.js';
import { formatIEC } from '../../util/size.js';
import { EXIT_OK, usage, type Ctx, type GlobalOptions } from '../context.js';
import { action, argAt } from '../action.js';
import type { ExportSummary } from '../../export/export.js';
import type { CliSession } from '../session.js';
import { pythonEnvProgress } from '../python-env-progress.js';
import { budgetWarnings } from '../budget-flag.js';
import { helpAfter } from '../help.js';
import { startProgress } from '../progress.js';

interface ExportCliOptions extends GlobalOptions {
  output?: string;
  force?: boolean;
  budget?: string;
  zeroCopyKv?: boolean;
  shareCache?: boolean;
  method?: string[];
  python?: string;
  engine?: string;
  timeout?: string;
  allowPickle?: boolean;
  referenceSteps?: string;
  /** commander's --no-reference: false when given. */
  reference?: boolean;
  /** commander's --no-memory-check: false when given. */
  memoryCheck?: boolean;
}

const collect = (v: string, acc: string[] = []) => [...acc, v];

export function registerExport(program: Command, session: CliSession): void {
  defineExport(program).action(
    action<ExportCliOptions>(session, async (ctx, opts, args) => exportCommand(ctx, opts, argAt(args, 0, '<model>'))),
  );
}

/** The command, its flags and its help. */
function defineExport(program: Command): Command {
  return program
    .command('export')
    .description('export a PyTorch model with Torch-TensorRT into an ExecuTorch program, finished and checked by trtx')
    .argument('<model>', 'a torch.export archive (.pt2, .pt, .ep) or file.py:factory')
    .option('-o, --output <out>', "the .pte to write, atomically (default: the model's name with .pte, beside it)")
    .option('--force', 'replace the default output when it exists already')
    .option('--budget <size>', 'weight-streaming budget per engine (8GiB, 512MiB, 8GB, 8589934592; 0 streams every weight)')
    .option('--zero-copy-kv', 'engines update their KV caches in place (no staging copies)')
    .option('--share-cache', 'with --zero-copy-kv: allow a cache two engines or methods share')
    .option('--method <name>', 'a method to export (repeat for prefill and decode)', collect)
    .option(
      '--engine <kind>',
      'tensorrt: TensorRT plans built by Torch-TensorRT (default); reference: trtx reference engines, no TensorRT needed',
      'tensorrt',
    )
    .option(
      '--python <path>',
      "the Python with torch, executorch (and torch_tensorrt for --engine tensorrt); default $TRTX_PYTHON, else trtx's managed environment",
    )
    .option('--reference-steps <n>', 'eager PyTorch steps per method recorded in OUT.reference.json for trtx verify (default 5)')
    .option('--no-reference', 'write no OUT.reference.json (and remove a stale one)')
    .option('--timeout <seconds>', 'stop the export after this long')
    .option('--allow-pickle', 'accept a pickled nn.Module (runs its code: only for files you trust)')
    .option('--no-memory-check', 'export even when the model needs more memory than is available (2.5x its weights + 2 GiB)')
    .option('--json', 'machine-readable output (schemas/export.schema.json)')
    .addHelpText(
      'after',
      helpAfter({
        exit: [
          [0, 'written (with OUT.reference.json, eager PyTorch\u2019s outputs for trtx verify)'],
          [
            1,
            'the model is refused (not one export takes, or it fails to load, trace, compile or lower) or the result fails its check: nothing written',
          ],
          [2, 'usage or environment: no Torch-TensorRT, torch or executorch, too little memory, a --method the model lacks, a timeout'],
        ],
        schema: 'schemas/export.schema.json',
        examples: [
          'trtx export model.pt --budget 8GiB            (writes model.pte)',
          'trtx export model.pt --engine reference       (no TensorRT: reference engines)',
          'trtx export model.pt2 -o a100.pte --budget 30GiB',
          'trtx export llm.py:make_decoder -o llm.pte --method prefill --method decode --zero-copy-kv',
          'TRTX_PYTHON=~/venvs/trt/bin/python trtx export model.pt2 -o model.pte --json',
        ],
      }),
    );
}

interface ExportFlags {
  engine: 'tensorrt' | 'reference';
  budget: bigint | undefined;
  referenceSteps: number;
  timeoutMs: number | undefined;
}

/** The flags checked and parsed first: a usage error needs no file. */
function exportFlags(opts: ExportCliOptions): ExportFlags {
  if (opts.shareCache && !opts.zeroCopyKv) throw usage('--share-cache goes with --zero-copy-kv');
  const engine = opts.engine ?? 'tensorrt';
  if (engine !== 'tensorrt' && engine !== 'reference') throw usage(`--engine ${JSON.stringify(engine)}: use tensorrt or reference`);
  const budget = opts.budget === undefined ? undefined : parseSize(opts.budget, { location: '--budget' });
  let referenceSteps = opts.reference === false ? 0 : DEFAULT_REFERENCE_STEPS;
  if (opts.referenceSteps !== undefined) {
    if (opts.reference === false) throw usage('--reference-steps goes without --no-reference');
    const n = opts.referenceSteps;
    if (!/^[1-9][0-9]*$/.test(n) || Number(n) > MAX_REFERENCE_STEPS)
      throw usage(`--reference-steps ${JSON.stringify(n)} is not a whole number from 1 to ${MAX_REFERENCE_STEPS}`);
    referenceSteps = Number(n);
  }
  let timeoutMs: number | undefined;
  if (opts.timeout !== undefined) {
    if (!/^[0-9]+(\.[0-9]+)?$/.test(opts.timeout) || Number(opts.timeout) <= 0)
      throw usage(`--timeout ${JSON.stringify(opts.timeout)} is not a number of seconds`);
    timeoutMs = Math.round(Number(opts.timeout) * 1000);
  }
  return { engine, budget, referenceSteps, timeoutMs };
}

/** The handler: the flags, then exportModel (which checks the model file, then OUT, then starts Python), then the report. */
async function exportCommand(ctx: Ctx, opts: ExportCliOptions, model: string): Promise<number> {
  const { engine, budget, referenceSteps, timeoutMs } = exportFlags(opts);
  // Before the long run, not in its summary: --budget 0, and a decimal unit with its binary equivalent.
  if (opts.budget !== undefined && budget !== undefined) for (const w of budgetWarnings(opts.budget, budget, 'export')) ctx.log.warn(w);
  // OUT: -o as given (replaced atomically, as rewrite -o does), else
  // MODEL's name with .pte beside it, replaced only with --force.
  const output = opts.output ?? defaultOutput(model);
  const bar = startProgress(ctx, 'exporting');
  const { exportModel } = await import('../../export/export.js');
  const summary = await exportModel({
    model: ctx.at(model),
    output: ctx.at(output, 'output'),
    refuseExisting: opts.output === undefined && !opts.force,
    budget,
    zeroCopyKv: opts.zeroCopyKv,
    shareCache: opts.shareCache,
    methods: opts.method,
    allowPickle: opts.allowPickle,
    memoryCheck: opts.memoryCheck,
    // An interpreter's path means the run's folder; a bare name is looked up on PATH.
    python: opts.python?.includes('/') ? ctx.at(opts.python) : opts.python,
    engine,
    referenceSteps,
    // Making the environment takes minutes once: say so on every line of it.
    onPythonEnv: pythonEnvProgress(ctx),
    timeoutMs,
    // Ctrl-C reaches trtx, not the bridge (it runs in its own process group): the run's signal (src/cli/signals.ts) stops it.
    signal: ctx.signal,
    env: ctx.env,
    cwd: ctx.cwd,
    onEvent: (e) => {
      if (e.event === 'progress') bar.update(Math.round(e.fraction * 100), 100, e.stage + (e.message ? `: ${e.message}` : ''));
      if (e.event === 'progress' && !ctx.stderrIsTTY)
        ctx.log.info(`${e.stage} ${Math.round(e.fraction * 100)}%${e.message ? ': ' + e.message : ''}`);
      if (e.event === 'warning') ctx.log.warn(`${e.code ? e.code + ': ' : ''}${e.message}`);
    },
    onStderr: (t) => ctx.log.debug(t.trimEnd()),
    reportBudget: ctx.budget,
  });
  bar.done();
  if (ctx.json) {
    ctx.emitJson(summary);
    return EXIT_OK;
  }
  printExport(ctx, summary, { model, output, referenceSteps });
  return EXIT_OK;
}

/** The checks on the written program in a word, each warning named by its code (`trtx check OUT` explains each): "1 warning (TRT_BUDGET_STREAMS_NOTHING)". */
export function checksLine(diagnostics: ExportSummary['diagnostics']): string {
  const counts = new Map<string, number>();
  for (const d of diagnostics) if (d.severity === 'warning') counts.set(d.code, (counts.get(d.code) ?? 0) + 1);
  const n = [...counts.values()].reduce((a, b) => a + b, 0);
  if (n === 0) return 'clean';
  return `${n} warning${n === 1 ? '' : 's'} (${[...counts].map(([c, k]) => (k > 1 ? `${c} x${k}` : c)).join(', ')})`;
}

/** What an export wrote, for people. */
function printExport(ctx: Ctx, summary: ExportSummary, at: { model: string; output: string; referenceSteps: number }): void {
  ctx.print(`wrote ${at.output} (${formatIEC(BigInt(summary.file_size))}) from ${at.model}`);
  if (summary.engine === 'reference')
    ctx.print(
      '  engines: trtx reference engines (--engine reference), not TensorRT plans: the program runs in trtx verify, not on TensorRT',
    );
  ctx.print(
    `  python ${summary.python.version} (${summary.python.source}): torch ${summary.versions.torch ?? '?'}, ` +
      `${summary.engine === 'reference' ? '' : `torch_tensorrt ${summary.versions.torch_tensorrt ?? '?'}, `}executorch ${summary.versions.executorch ?? '?'}`,
  );
  for (const m of summary.methods) ctx.print(`  method ${m.name}`);
  if (summary.reference)
    ctx.print(`  reference: ${summary.reference.path} (eager PyTorch, ${summary.reference.steps} steps per method, for trtx verify)`);
  else ctx.print(`  reference: none${at.referenceSteps === 0 ? ' (--no-reference)' : ' (the eager run failed: REFERENCE_EAGER_FAILED)'}`);
  if (summary.reference_removed) ctx.print(`  removed ${summary.reference_removed}: it belonged to an earlier export`);
  if (summary.bridge.zero_copy_kv_path === 'torch_tensorrt') ctx.print('  zero-copy KV: Torch-TensorRT exported it (zero_copy_kv)');
  if (summary.bridge.zero_copy_kv_path === 'trtx')
    ctx.print('  zero-copy KV: exported staged (this Torch-TensorRT has no zero-copy export), un-staged by trtx');
  for (const p of summary.passes) for (const l of p.lines) ctx.print(`  ${l}`);
  ctx.print(`  checks: ${checksLine(summary.diagnostics)}`);
  for (const w of summary.warnings) ctx.log.warn(w);
}
