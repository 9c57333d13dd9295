// trtx export MODEL -o OUT [--engine tensorrt|reference] [--budget SIZE] [--zero-copy-kv] [--method NAME]... [--python PATH] [--timeout S] [--json]
import { join, parse, resolve } from 'node:path';
import type { Command } from 'commander';
import { parseSize } from '../util/size.js';
import { formatIEC } from '../util/size.js';
import { EXIT_OK, usage, type GlobalOptions } from './context.js';
import { action } from './main.js';
import { startProgress } from './progress.js';

interface ExportCliOptions extends GlobalOptions {
  output?: string;
  budget?: string;
  zeroCopyKv?: boolean;
  shareCache?: boolean;
  method?: string[];
  python?: string;
  engine?: string;
  timeout?: string;
  allowPickle?: boolean;
}

const collect = (v: string, acc: string[] = []) => [...acc, v];

/** MODEL's path (a factory's file) with its extension replaced by .pte; never the model itself. */
function defaultOutput(model: string): string {
  const path = model.replace(/:[A-Za-z_][A-Za-z0-9_.]*$/, '');
  const { dir, name } = parse(path);
  const out = join(dir, `${name}.pte`);
  if (resolve(out) === resolve(path)) throw usage(`${model} is a .pte already; name the output with -o OUT`);
  return out;
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description('export a PyTorch model with Torch-TensorRT into an ExecuTorch program, finished and checked by trtx')
    .argument('<model>', 'a torch.export archive (.pt2, .pt, .ep) or file.py:factory')
    .option('-o, --output <out>', "the .pte to write, atomically (default: the model's name with .pte, beside it)")
    .option('--budget <size>', 'weight-streaming budget per engine (8GiB, 512MiB, 8GB, 8589934592)')
    .option('--zero-copy-kv', 'engines update their KV caches in place (no staging copies)')
    .option('--share-cache', 'with --zero-copy-kv: allow a cache two engines or methods share')
    .option('--method <name>', 'a method to export (repeat for prefill and decode)', collect)
    .option('--engine <kind>', 'tensorrt: TensorRT plans built by Torch-TensorRT (default); reference: trtx reference engines, no TensorRT needed', 'tensorrt')
    .option('--python <path>', "the Python with torch, executorch (and torch_tensorrt for --engine tensorrt); default $TRTX_PYTHON, else trtx's managed environment")
    .option('--timeout <seconds>', 'stop the export after this long')
    .option('--allow-pickle', 'accept a pickled nn.Module (runs its code: only for files you trust)')
    .option('--json', 'machine-readable output')
    .addHelpText(
      'after',
      '\nExamples:\n  trtx export model.pt2 -o model.pte --budget 8GiB\n  trtx export model.pt2 -o model.pte --engine reference   # no TensorRT: reference engines\n  trtx export llm.py:make_decoder -o llm.pte --method prefill --method decode --zero-copy-kv\n  TRTX_PYTHON=~/venvs/trt/bin/python trtx export model.pt2 -o model.pte --json',
    )
    .action(
      action<ExportCliOptions>(async (ctx, opts, [model]) => {
        const output = opts.output ?? defaultOutput(model);
        if (opts.shareCache && !opts.zeroCopyKv) throw usage('--share-cache goes with --zero-copy-kv');
        const engine = opts.engine ?? 'tensorrt';
        if (engine !== 'tensorrt' && engine !== 'reference') throw usage(`--engine ${JSON.stringify(engine)}: use tensorrt or reference`);
        const budget = opts.budget === undefined ? undefined : parseSize(opts.budget, { location: '--budget' });
        let timeoutMs: number | undefined;
        if (opts.timeout !== undefined) {
          if (!/^[0-9]+(\.[0-9]+)?$/.test(opts.timeout) || Number(opts.timeout) <= 0) throw usage(`--timeout ${JSON.stringify(opts.timeout)} is not a number of seconds`);
          timeoutMs = Math.round(Number(opts.timeout) * 1000);
        }
        // Ctrl-C reaches trtx, not the bridge (it runs in its own process group): forward it.
        const ac = new AbortController();
        const stop = () => ac.abort();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        const bar = startProgress(ctx, 'exporting');
        try {
          const { exportModel } = await import('../export/export.js');
          const summary = await exportModel({
            model,
            output,
            budget,
            zeroCopyKv: opts.zeroCopyKv,
            shareCache: opts.shareCache,
            methods: opts.method,
            allowPickle: opts.allowPickle,
            python: opts.python,
            engine,
            onPythonEnv: (p) => {
              // Making the environment takes minutes once: say so on every line of it.
              if (p.phase === 'cached') ctx.log.debug(p.message);
              else ctx.log.info(p.message);
            },
            timeoutMs,
            signal: ac.signal,
            onEvent: (e) => {
              if (e.event === 'progress') bar.update(Math.round(e.fraction * 100), 100, e.stage + (e.message ? `: ${e.message}` : ''));
              if (e.event === 'progress' && !ctx.stderrIsTTY) ctx.log.info(`${e.stage} ${Math.round(e.fraction * 100)}%${e.message ? ': ' + e.message : ''}`);
              if (e.event === 'warning') ctx.log.warn(`${e.code ? e.code + ': ' : ''}${e.message}`);
            },
            onStderr: (t) => ctx.log.debug(t.trimEnd()),
          });
          bar.done();
          if (ctx.json) {
            ctx.emitJson(summary);
            return EXIT_OK;
          }
          ctx.print(`wrote ${summary.output} (${formatIEC(BigInt(summary.file_size))}) from ${model}`);
          if (summary.engine === 'reference') ctx.print('  engines: trtx reference engines (--engine reference), not TensorRT plans: the program runs in trtx verify, not on TensorRT');
          ctx.print(
            `  python ${summary.python.version} (${summary.python.source}): torch ${summary.versions.torch ?? '?'}, ` +
              `${summary.engine === 'reference' ? '' : `torch_tensorrt ${summary.versions.torch_tensorrt ?? '?'}, `}executorch ${summary.versions.executorch ?? '?'}`,
          );
          for (const m of summary.methods) ctx.print(`  method ${m.name}`);
          for (const p of summary.passes) for (const l of p.lines) ctx.print(`  ${l}`);
          const warnings = summary.diagnostics.filter((d) => d.severity === 'warning');
          ctx.print(`  checks: ${warnings.length ? `${warnings.length} warning(s)` : 'clean'}`);
          for (const w of summary.warnings) ctx.log.warn(w);
          return EXIT_OK;
        } finally {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
        }
      }),
    );
}
