// trtx check FILE... [--json | --format text|json|sarif|github] [--strict] [--zero-copy-kv] [--runtime NAME ...]
// Exit 0 clean (warnings allowed unless --strict), 1 on any error, 2 on usage
// or unreadable input. A file that is not a sound container is an error
// diagnostic like any other (exit 1), not a crash. Several files: see
// check-files.ts.
import { Option, type Command } from 'commander';
import { runChecks, summarizeDiagnostics, type CheckResult } from '../../checks/run.js';
import { diag, type Diagnostic } from '../../checks/diagnostic.js';
import { parseRuntimes, describeRuntime, type RuntimeRules } from '../../checks/runtime-rules.js';
import type { Program } from '../../pte/model.js';
import { withPte } from '../../pte/open.js';
import { planName } from '../../pte/tensor.js';
import { isTrtxError } from '../../util/errors.js';
import { engineCensus, referenceEngineLine, type EngineCensus } from '../../tensorrt/engine-kind.js';
import { EXIT_CHECK, EXIT_OK, usage, type Ctx, type GlobalOptions } from '../context.js';
import { toSarif } from '../../report/sarif.js';
import { toGithubAnnotations } from '../../report/github.js';
import { checkFiles } from '../../checks/files.js';
import { action } from '../main.js';
import { styler } from '../style.js';

export interface CheckOptions extends GlobalOptions {
  strict?: boolean;
  zeroCopyKv?: boolean;
  format?: CheckFormat;
  runtime?: string[];
}

export const CHECK_FORMATS = ['text', 'json', 'sarif', 'github'] as const;
export type CheckFormat = (typeof CHECK_FORMATS)[number];

export interface CheckReport {
  schema: 'trtx.check/1';
  file: string;
  ok: boolean;
  strict: boolean;
  zero_copy_kv: boolean;
  /** Whose runtime rules applied (--runtime). */
  runtime: RuntimeRules;
  summary: { errors: number; warnings: number; infos: number; line: string };
  /** What the TensorRTBackend delegates hold; null when the file is not a sound container. */
  engines: EngineCensus | null;
  diagnostics: Diagnostic[];
}

export function checkExitCode(r: Pick<CheckResult, 'summary'>, strict: boolean): number {
  return r.summary.errors > 0 || (strict && r.summary.warnings > 0) ? EXIT_CHECK : EXIT_OK;
}

const SEVERITY_STYLE = { error: 'red', warning: 'yellow', info: 'cyan' } as const;

/** Diagnostics grouped by method, then delegate; `program` names delegates in headings. */
export function renderDiagnostics(diagnostics: readonly Diagnostic[], program: Program | null, ctx: Pick<Ctx, 'color'>): string[] {
  const s = styler(ctx);
  const lines: string[] = [];
  let group: string | null = null;
  let sub: string | null = null;
  for (const d of diagnostics) {
    const g = d.method === null ? 'program' : `method ${d.method}`;
    if (g !== group) {
      lines.push(s('bold', g));
      group = g;
      sub = null;
    }
    let indent = '  ';
    if (d.delegate !== null) {
      const plan = program?.executionPlan.find((p, i) => planName(p, i) === d.method);
      const id = plan?.delegates[d.delegate]?.id;
      const label = `delegate ${d.delegate}${id ? ` (${id})` : ''}`;
      if (label !== sub) {
        lines.push(`  ${s('bold', label)}`);
        sub = label;
      }
      indent = '    ';
    } else if (sub !== null) {
      sub = null;
    }
    lines.push(`${indent}${s(SEVERITY_STYLE[d.severity], d.severity)} ${s('bold', d.code)}  ${d.location}`);
    lines.push(`${indent}  ${d.message}`);
    lines.push(`${indent}  ${s('dim', `hint: ${d.hint}`)}`);
  }
  return lines;
}

/** Opens and checks; a container that does not parse becomes one error diagnostic. */
export async function checkFile(file: string, options: { requireZeroCopyKv?: boolean; runtime?: RuntimeRules }): Promise<CheckResult & { program: Program | null; engines: EngineCensus | null }> {
  try {
    return await withPte(file, async (pte) => ({ ...(await runChecks(pte, options)), program: pte.program, engines: await engineCensus(pte) }));
  } catch (e) {
    // Usage-kind failures (missing file, not a program) stay exit 2.
    if (!isTrtxError(e) || e.kind === 'usage') throw e;
    const diagnostics = [diag('error', e.code, e.location || 'file', e.message, e.hint ?? 'the file is not a sound ExecuTorch program; re-export it')];
    return { diagnostics, summary: summarizeDiagnostics(diagnostics), program: null, engines: null };
  }
}

export function reportOf(file: string, result: CheckResult & { engines: EngineCensus | null }, strict: boolean, zeroCopyKv: boolean, code: number, runtime: RuntimeRules): CheckReport {
  return { schema: 'trtx.check/1', file, ok: code === EXIT_OK, strict, zero_copy_kv: zeroCopyKv, runtime, summary: result.summary, engines: result.engines, diagnostics: result.diagnostics };
}

export function renderFile(file: string, result: CheckResult & { program: Program | null; engines: EngineCensus | null }, strict: boolean, ctx: Pick<Ctx, 'color'>, runtime: RuntimeRules): string[] {
  const s = styler(ctx);
  const failedByStrict = strict && result.summary.errors === 0 && result.summary.warnings > 0;
  return [
    `${s('bold', file)}: ${result.diagnostics.length === 0 ? 'no problems found' : 'checked'} (runtime rules: ${describeRuntime(runtime)})`,
    ...(result.engines && referenceEngineLine(result.engines) ? [`  ${referenceEngineLine(result.engines)}`] : []),
    ...renderDiagnostics(result.diagnostics, result.program, ctx),
    `${result.summary.line}${failedByStrict ? ' (--strict: warnings fail)' : ''}`,
  ];
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('prove a .pte is sound before it reaches a device: structure, TensorRT blobs, compile specs, arity, devices')
    .argument('<files...>', 'the .pte program(s)')
    .option('--json', 'machine-readable output (schemas/check.schema.json); the same as --format json')
    .addOption(new Option('--format <format>', 'text, json (schemas/check.schema.json), sarif (SARIF 2.1.0 for code scanning; one file) or github (workflow-command annotations)').choices(CHECK_FORMATS))
    .option('--strict', 'warnings fail the check too (exit 1)')
    .option('--zero-copy-kv', 'require every KV cache to be zero-copy')
    .option(
      '--runtime <name...>',
      'whose runtime rules apply: zero-copy-trt (default) or stock-trt for the TensorRT delegate, et-module (default) or custom-memory for memory',
    )
    .addHelpText(
      'after',
      '\nExit: 0 sound (warnings allowed unless --strict), 1 any error, 2 usage or unreadable input; with several files, the worst of them.\n\nExamples:\n  trtx check model.pte\n  trtx check model.pte --strict --json\n  trtx check out/*.pte\n  trtx check model.pte --format sarif > trtx.sarif\n  trtx check out/*.pte --format github\n  trtx check model.pte --runtime stock-trt --runtime custom-memory',
    )
    // --format json is --json: the same document, and the error document on a refusal.
    .hook('preAction', (cmd) => {
      if (cmd.opts().format === 'json') cmd.setOptionValue('json', true);
    })
    .action(
      action<CheckOptions>(async (ctx, opts, files) => {
        if (opts.json && opts.format !== undefined && opts.format !== 'json') throw usage(`--json and --format ${opts.format} ask for two outputs`, 'keep one of them');
        const runtime = parseRuntimes(opts.runtime);
        const strict = Boolean(opts.strict);
        const zeroCopyKv = Boolean(opts.zeroCopyKv);
        if (files.length > 1) return checkFiles(ctx, files, { strict, zeroCopyKv, format: opts.format, runtime });
        const [file] = files;
        const result = await checkFile(file, { requireZeroCopyKv: zeroCopyKv, runtime });
        const code = checkExitCode(result, strict);
        // Machine formats go to stdout whole, like --json: no colour, no heading.
        if (opts.format === 'sarif') {
          ctx.emitJson(toSarif({ file, diagnostics: result.diagnostics, exitCode: code }));
          return code;
        }
        if (opts.format === 'github') {
          for (const line of toGithubAnnotations(file, result.diagnostics)) ctx.print(line);
          ctx.print(`trtx check ${file}: ${result.summary.line}`);
          return code;
        }
        if (ctx.json) {
          ctx.emitJson(reportOf(file, result, strict, zeroCopyKv, code, runtime));
          return code;
        }
        for (const l of renderFile(file, result, strict, ctx, runtime)) ctx.print(l);
        return code;
      }),
    );
}
