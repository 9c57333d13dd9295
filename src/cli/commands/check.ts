// trtx check FILE... [--json | --format text|json|sarif|github] [--strict] [--zero-copy-kv] [--runtime NAME ...]
// Exit 0 clean (warnings allowed unless --strict), 1 on any error, 2 on usage
// or unreadable input. A file that is not a sound container is an error
// diagnostic like any other (exit 1), not a crash. The checking and the
// reports are src/checks/files.ts; this file prints them.
import { Option, type Command } from 'commander';
import {
  checkFile,
  checkOneOf,
  failsCheck,
  filesReport,
  reportOf,
  retainedEntry,
  type FileEntry,
  type FileCheck,
  type FileCheckOptions,
} from '../../checks/files.js';
import { parseRuntimes, describeRuntime, type RuntimeRules } from '../../checks/runtime-rules.js';
import { standinEngineLines } from '../../tensorrt/engine-kind.js';
import { toSarif } from '../../report/sarif.js';
import { annotation, toGithubAnnotations } from '../../report/github.js';
import { action, argAt } from '../action.js';
import type { CliSession } from '../session.js';
import { EXIT_CHECK, EXIT_OK, EXIT_USAGE, usage, type Ctx, type GlobalOptions } from '../context.js';
import { renderDiagnostics } from '../render-diagnostics.js';
import { styler } from '../style.js';
import { helpAfter } from '../help.js';

interface CheckOptions extends GlobalOptions {
  strict?: boolean;
  zeroCopyKv?: boolean;
  format?: CheckFormat;
  runtime?: string[];
}

const CHECK_FORMATS = ['text', 'json', 'sarif', 'github'] as const;
type CheckFormat = (typeof CHECK_FORMATS)[number];

const exitOf = (r: FileCheck, strict: boolean) => (failsCheck(r, strict) ? EXIT_CHECK : EXIT_OK);

function renderFile(file: string, result: FileCheck, strict: boolean, ctx: Pick<Ctx, 'color'>, runtime: RuntimeRules): string[] {
  const s = styler(ctx);
  const failedByStrict = strict && result.summary.errors === 0 && result.summary.warnings > 0;
  return [
    `${s('bold', file)}: ${result.diagnostics.length === 0 ? 'no problems found' : 'checked'} (runtime rules: ${describeRuntime(runtime)})`,
    ...(result.engines ? standinEngineLines(result.engines).map((l) => `  ${l}`) : []),
    ...renderDiagnostics(result.diagnostics, result.program, ctx),
    `${result.summary.line}${failedByStrict ? ' (--strict: warnings fail)' : ''}`,
  ];
}

/**
 * trtx check A B C ...: what a CI that built many programs runs. Each file
 * is checked and reported in turn (a file that cannot be read is reported
 * and the others still checked), then one summary; the exit code is the
 * worst of the files' (2 over 1 over 0). --json prints one
 * trtx.check-files/1 document; --format github the annotations of every
 * file; --format sarif stays one file's log.
 */
async function checkMany(ctx: Ctx, files: string[], opts: FileCheckOptions & { format?: CheckFormat }): Promise<number> {
  if (opts.format === 'sarif')
    throw usage(
      '--format sarif writes the log of one file',
      'check one file per run for SARIF, or use --format github or --json for several',
    );
  const s = styler(ctx);
  const github = opts.format === 'github';
  // One program at a time: each file's decoded program goes once it is
  // printed; only what the summary (or the --json document) needs stays.
  const entries: FileEntry[] = [];
  for (const file of files) {
    const entry = await checkOneOf(file, opts, ctx.budget);
    entries.push(retainedEntry(entry, Boolean(ctx.json)));
    if (ctx.json) continue;
    if (github) {
      if ('refusal' in entry) {
        const { code, location, message, hint } = entry.refusal.error;
        ctx.print(annotation(file, { severity: 'error', code, location, message, hint: hint ?? '', method: null, delegate: null }));
      } else {
        for (const d of entry.result.diagnostics) ctx.print(annotation(file, d));
        ctx.print(`trtx check ${file}: ${entry.result.summary.line}`);
      }
      continue;
    }
    if (entries.length > 1) ctx.print();
    if ('refusal' in entry)
      ctx.print(
        `${s('bold', file)}: ${s('red', 'not checked')}: ${entry.refusal.error.code}: ${entry.refusal.error.location ? entry.refusal.error.location + ': ' : ''}${entry.refusal.error.message}`,
      );
    else for (const l of renderFile(file, entry.result, opts.strict, ctx, opts.runtime)) ctx.print(l);
  }
  const doc = filesReport(entries, opts);
  const worst = doc.summary.unreadable > 0 ? EXIT_USAGE : doc.summary.failed > 0 ? EXIT_CHECK : EXIT_OK;
  if (ctx.json) {
    ctx.emitJson(doc);
    return worst;
  }
  if (github) {
    ctx.print(`trtx check: ${doc.summary.line}`);
    return worst;
  }
  ctx.print();
  ctx.print(s('bold', doc.summary.line));
  for (const f of doc.files) if (!f.ok && !('error' in f)) ctx.print(`  ${s('red', 'failed')}       ${f.file}`);
  for (const f of doc.files) if ('error' in f) ctx.print(`  ${s('red', 'not checked')}  ${f.file}`);
  return worst;
}

export function registerCheck(program: Command, session: CliSession): void {
  program
    .command('check')
    .description('prove a .pte is sound before it reaches a device: structure, TensorRT blobs, compile specs, arity, devices')
    .argument('<files...>', 'the .pte program(s)')
    .option('--json', 'machine-readable output (schemas/check.schema.json); the same as --format json')
    .addOption(
      new Option(
        '--format <format>',
        'text, json (schemas/check.schema.json), sarif (SARIF 2.1.0 for code scanning; one file) or github (workflow-command annotations)',
      ).choices(CHECK_FORMATS),
    )
    .option('--strict', 'warnings fail the check too (exit 1)')
    .option('--zero-copy-kv', 'require every KV cache to be zero-copy')
    .option(
      '--runtime <name...>',
      'whose runtime rules apply: zero-copy-trt (default) or stock-trt for the TensorRT delegate, et-module (default) or custom-memory for memory',
    )
    .addHelpText(
      'after',
      helpAfter({
        exit: [
          [0, 'sound (warnings allowed unless --strict)'],
          [1, 'any error (a warning too under --strict); with several files, the worst of them'],
          [2, 'usage or unreadable input (a missing file, not a program)'],
        ],
        schema: 'schemas/check.schema.json',
        examples: [
          'trtx check model.pte',
          'trtx check model.pte --strict --json',
          'trtx check out/*.pte',
          'trtx check model.pte --format sarif > trtx.sarif',
          'trtx check out/*.pte --format github',
          'trtx check model.pte --runtime stock-trt --runtime custom-memory',
        ],
      }),
    )
    // --format json is --json: the same document, and the error document on a refusal.
    .hook('preAction', (cmd) => {
      if (cmd.opts().format === 'json') cmd.setOptionValue('json', true);
    })
    .action(
      action<CheckOptions>(session, async (ctx, opts, files) => {
        if (opts.json && opts.format !== undefined && opts.format !== 'json')
          throw usage(`--json and --format ${opts.format} ask for two outputs`, 'keep one of them');
        const runtime = parseRuntimes(opts.runtime);
        const strict = Boolean(opts.strict);
        const zeroCopyKv = Boolean(opts.zeroCopyKv);
        if (files.length > 1)
          return checkMany(
            ctx,
            files.map((f) => ctx.at(f)),
            { strict, zeroCopyKv, format: opts.format, runtime },
          );
        const file = ctx.at(argAt(files, 0, '<files...>'));
        const result = await checkFile(file, { requireZeroCopyKv: zeroCopyKv, runtime, reportBudget: ctx.budget });
        const code = exitOf(result, strict);
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
          ctx.emitJson(reportOf(file, result, { strict, zeroCopyKv, runtime }));
          return code;
        }
        for (const l of renderFile(file, result, strict, ctx, runtime)) ctx.print(l);
        return code;
      }),
    );
}
