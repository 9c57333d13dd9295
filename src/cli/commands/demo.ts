// trtx demo [--out DIR] [--scale small|seed] [--from-pytorch] [--json]
import { isAbsolute, relative } from 'node:path';
import { helpAfter } from '../help.js';
import { Option, type Command } from 'commander';
import { formatIEC } from '../../util/size.js';
import { EXIT_CHECK, EXIT_OK, type Ctx, type GlobalOptions } from '../context.js';
import { action } from '../action.js';
import type { CliSession } from '../session.js';
import { pythonEnvProgress } from '../python-env-progress.js';
import { runnerBuildProgress } from '../runner-progress.js';
import { styler } from '../style.js';
import { renderMemory } from '../render-memory.js';
import type { DemoResult } from '../../demo/demo.js';

interface DemoCliOptions extends GlobalOptions {
  out: string;
  scale: 'small' | 'seed';
  fromPytorch?: boolean;
}

const b = (n: number) => formatIEC(BigInt(n));

/** A path under the working folder as a relative one (what the user typed, or can), else as it is. */
export function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/**
 * "95.2% less": rounded down, so that it never claims more than happened;
 * 100% only when nothing is left.
 */
export function percentLess(before: number, after: number): string {
  if (before <= 0) return '0% less';
  if (after <= 0) return '100% less';
  if (after > before) return `${(Math.ceil((1000 * (after - before)) / before) / 10).toFixed(1)}% more`;
  return `${(Math.floor((1000 * (before - after)) / before) / 10).toFixed(1)}% less`;
}

export function renderDemo(r: DemoResult, ctx: Pick<Ctx, 'color' | 'cwd'>): string[] {
  const s = styler(ctx);
  const v = r.verify;
  const where =
    v.device === null
      ? 'nowhere (the check refused it)'
      : v.device.kind === 'cuda'
        ? `on the GPU (${v.device.name})`
        : 'on the CPU (no GPU here)';
  const before = r.staging.before.h2d + r.staging.before.d2h;
  const after = r.staging.after.h2d + r.staging.after.d2h;
  const title =
    r.source === 'pytorch'
      ? 'trtx demo (from PyTorch): a Llama-style decoder exported by ExecuTorch with trtx reference engines, made zero-copy with an 8 GiB weight-streaming budget'
      : `trtx demo (${r.scale} scale): a staged KV decoder made zero-copy with an 8 GiB weight-streaming budget (synthetic reference engines: a made-up function, not a model; --from-pytorch exports a real one)`;
  const lines = [
    s('bold', title),
    `  staged program     ${shownPath(r.staged, ctx.cwd)}`,
    `  rewritten program  ${shownPath(r.zero_copy, ctx.cwd)}`,
    '',
    s('bold', 'what changed'),
    ...r.rewrite.map((l) => `  ${l}`),
    `  staging per decode step: ${b(r.staging.before.h2d)} in + ${b(r.staging.before.d2h)} out -> ${b(r.staging.after.h2d)} in + ${b(r.staging.after.d2h)} out (${percentLess(before, after)})`,
    ...r.budgets.map(
      (x) => `  budget ${x.method} delegate ${x.delegate}: ${x.bytes === null ? 'automatic' : formatIEC(BigInt(x.bytes))} per engine`,
    ),
    '',
    s('bold', 'check'),
    `  ${r.check.errors === 0 ? s('green', 'clean') : s('red', 'FAILED')}: ${r.check.line}`,
    ...r.check.diagnostics.flatMap((d) => [
      `  ${s(d.severity === 'error' ? 'red' : 'yellow', d.severity)} ${s('bold', d.code)}  ${d.location}`,
      `    ${d.message}`,
    ]),
    '',
    s('bold', `verify ${where}`),
    `  the zero-copy caches live in device memory, which ExecuTorch does not clear: the demo initialises them after each load, as an application must (--init-device-buffers)`,
    ...(v.memory ? renderMemory(v.memory, v.options.init_device_buffers) : []),
    ...v.assertions.map((a) => `  ${a.ok ? s('green', 'ok  ') : s('red', 'FAIL')} ${a.name}`),
    '',
    r.ok
      ? s('green', `done: the zero-copy program computes what the staged one does, ${where}, without the cache copies`)
      : s('red', 'the demo found a problem (see FAIL above)'),
    s(
      'dim',
      `next: trtx inspect ${shownPath(r.zero_copy, ctx.cwd)}   trtx diff ${shownPath(r.staged, ctx.cwd)} ${shownPath(r.zero_copy, ctx.cwd)}`,
    ),
  ];
  return lines;
}

export function registerDemo(program: Command, session: CliSession): void {
  program
    .command('demo')
    .description('the main job end to end on a bundled example: rewrite a staged KV decoder, check it, verify it')
    .option('--out <dir>', 'where to write the example programs', 'trtx-demo')
    .addOption(
      new Option('--scale <scale>', "'small', or 'seed' for the 30-layer model of pytorch/TensorRT#4667 (577 MB of cache per step)")
        .choices(['small', 'seed'])
        .default('small'),
    )
    .option(
      '--from-pytorch',
      "start from the bundled PyTorch decoder: export it with ExecuTorch and the reference lowering (trtx's managed Python environment, made on first use), then rewrite, check and verify",
    )
    .option('--json', 'machine-readable output (schemas/demo.schema.json)')
    .addHelpText(
      'after',
      helpAfter({
        exit: [
          [0, 'done: the zero-copy program computes what the staged one does'],
          [1, 'the rewritten program fails its check, or a verify assertion failed'],
          [2, 'usage or environment: the SDK cannot be fetched, the runner cannot be built, --from-pytorch without Python'],
        ],
        schema: 'schemas/demo.schema.json',
        examples: ['npx trtx demo', 'npx trtx demo --scale seed --out /tmp/demo', 'npx trtx demo --from-pytorch'],
      }),
    )
    .action(
      action<DemoCliOptions>(session, async (ctx, opts) => {
        const { runDemo } = await import('../../demo/demo.js');
        const result = await runDemo({
          out: ctx.at(opts.out, 'output'),
          scale: opts.scale,
          fromPytorch: opts.fromPytorch,
          onStage: (stage) => ctx.log.info(stage),
          onPythonEnv: pythonEnvProgress(ctx),
          onRunnerBuild: runnerBuildProgress(ctx),
          runnerBinary: ctx.env.TRTX_RUNNER_BIN ?? null,
          reportBudget: ctx.budget,
          env: ctx.env,
          cwd: ctx.cwd,
          signal: ctx.signal,
        });
        if (ctx.json) ctx.emitJson(result);
        else for (const l of renderDemo(result, ctx)) ctx.print(l);
        return result.ok ? EXIT_OK : EXIT_CHECK;
      }),
    );
}
