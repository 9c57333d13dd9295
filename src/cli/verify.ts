// trtx verify FILE [--zero-copy-kv] [--steps N] [--caller-stream on|off|both] [--budget SIZE] [--json | --format text|json|junit]
import { Option, type Command } from 'commander';
import { hostname } from 'node:os';
import { formatIEC, parseSize } from '../util/size.js';
import { toJunit } from '../report/junit.js';
import { EXIT_CHECK, EXIT_OK, usage, type Ctx, type GlobalOptions } from './context.js';
import { action } from './main.js';
import { styler } from './style.js';
import type { VerifyResult } from '../verify/verify.js';
import { referenceEngineLine } from '../tensorrt/engine-kind.js';

interface VerifyOptions extends GlobalOptions {
  zeroCopyKv?: boolean;
  steps?: string;
  callerStream?: 'on' | 'off' | 'both';
  budget?: string;
  device?: 'cpu' | 'cuda';
  format?: 'text' | 'json' | 'junit';
}

const bytes = (n: number) => formatIEC(BigInt(n));

export function renderVerify(r: VerifyResult, ctx: Pick<Ctx, 'color'>): string[] {
  const s = styler(ctx);
  const where = r.device.kind === 'cuda' ? `GPU ${r.device.name}` : 'CPU (no GPU used)';
  const lines = [`${s('bold', r.file)}: ${r.mode}, ${r.steps} steps of ${r.methods.join(', ')} on ${where}`];
  const reference = referenceEngineLine(r.engines);
  if (reference) lines.push(`  ${reference}`);
  if (r.caches.length) lines.push(`  caches: ${r.caches.join(', ')}`);
  for (const run of r.runs.filter((x) => !x.fresh_state && x.caller_stream === r.runs[0].caller_stream)) {
    const st = run.staging.map((m) => `${m.method} host->device ${bytes(m.h2d_bytes)}, device->host ${bytes(m.d2h_bytes)}`).join('; ');
    lines.push(`  ${run.variant}: ${st} per step`);
  }
  for (const b of r.budgets) {
    const eff = b.effective === null ? 'automatic' : formatIEC(BigInt(b.effective));
    lines.push(`  budget ${b.method} delegate ${b.delegate}: ${eff} (${b.source}${b.clamped ? ', clamped to the streamable size' : ''}${b.ignored ? `, ignored: ${b.ignored}` : ''})`);
  }
  for (const a of r.assertions) lines.push(`  ${a.ok ? s('green', 'ok  ') : s('red', 'FAIL')} ${a.name}${a.detail ? s('dim', ` (${a.detail})`) : ''}`);
  const failed = r.assertions.filter((a) => !a.ok).length;
  lines.push(failed ? s('red', `${failed} of ${r.assertions.length} checks failed`) : s('green', `verified: ${r.assertions.length} checks passed on ${where}`));
  return lines;
}

export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description('run the program in the bundled reference runner and prove the delegate runtime contract')
    .argument('<file>', 'the .pte program')
    .option('--zero-copy-kv', 'prove zero-copy KV: derive the zero-copy twin of a staged program and compare both, step by step')
    .option('--steps <n>', 'decode steps per run', '4')
    .addOption(new Option('--caller-stream <mode>', 'execute with a caller stream, without, or both').choices(['on', 'off', 'both']).default('both'))
    .option('--budget <size>', 'load-time weight-streaming budget (overrides the baked spec)')
    .addOption(new Option('--device <kind>', 'force the CPU or the GPU (default: the GPU when there is one)').choices(['cpu', 'cuda']))
    .option('--json', 'machine-readable output (schemas/verify.schema.json); the same as --format json')
    .addOption(new Option('--format <format>', 'text, json (schemas/verify.schema.json) or junit (JUnit XML, one test case per check)').choices(['text', 'json', 'junit']))
    .addHelpText('after', '\nExamples:\n  trtx verify model.pte\n  trtx verify kv-decode-staged.pte --zero-copy-kv --steps 6\n  trtx verify model.pte --budget 8GiB --caller-stream on --json\n  trtx verify kv-decode-staged.pte --zero-copy-kv --format junit > trtx-verify.xml')
    // --format json is --json: the same document, and the error document on a refusal.
    .hook('preAction', (cmd) => {
      if (cmd.opts().format === 'json') cmd.setOptionValue('json', true);
    })
    .action(
      action<VerifyOptions>(async (ctx, opts, [file]) => {
        if (opts.json && opts.format !== undefined && opts.format !== 'json') throw usage(`--json and --format ${opts.format} ask for two outputs`, 'keep one of them');
        const started = new Date();
        const t0 = process.hrtime.bigint();
        const steps = Number(opts.steps);
        if (!/^[0-9]+$/.test(opts.steps ?? '')) throw usage(`--steps ${JSON.stringify(opts.steps)} is not a whole number`);
        const budget = opts.budget === undefined ? undefined : parseSize(opts.budget, { location: '--budget' });
        // zod and execa come with the runner: loaded only when verify runs.
        const { verifyProgram } = await import('../verify/verify.js');
        const result = await verifyProgram(file, {
          zeroCopyKv: opts.zeroCopyKv,
          steps,
          callerStream: opts.callerStream,
          budget,
          device: opts.device,
          onProgress: (m) => ctx.log.debug(m),
          onRunnerBuild: (p) => {
            if (p.phase === 'configure' || p.phase === 'build' || p.phase === 'waiting') ctx.log.info(p.message);
          },
        });
        if (opts.format === 'junit') ctx.print(toJunit(result, { started, seconds: Number(process.hrtime.bigint() - t0) / 1e9, hostname: hostname() }).trimEnd());
        else if (ctx.json) ctx.emitJson(result);
        else for (const l of renderVerify(result, ctx)) ctx.print(l);
        return result.ok ? EXIT_OK : EXIT_CHECK;
      }),
    );
}
