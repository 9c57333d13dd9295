// trtx check FILE... [--json] [--strict] [--zero-copy-kv]
// Exit 0 clean (warnings allowed unless --strict), 1 on any error, 2 on usage
// or unreadable input. A file that is not a sound container is an error
// diagnostic like any other (exit 1), not a crash. With several files (a CI
// checking every program it built) each is checked and reported in turn, a
// summary follows, and the exit code is the worst of them.
import type { Command } from 'commander';
import { runChecks, summarizeDiagnostics, type CheckResult } from '../checks/run.js';
import { diag, type Diagnostic } from '../checks/diagnostic.js';
import type { Program } from '../pte/model.js';
import { withPte } from '../pte/open.js';
import { planName } from '../pte/tensor.js';
import { isTrtxError, type TrtxError } from '../util/errors.js';
import { EXIT_CHECK, EXIT_OK, EXIT_USAGE, type Ctx, type GlobalOptions } from './context.js';
import { action } from './main.js';
import { styler } from './style.js';

interface CheckOptions extends GlobalOptions {
  strict?: boolean;
  zeroCopyKv?: boolean;
}

export interface CheckReport {
  schema: 'trtx.check/1';
  file: string;
  ok: boolean;
  strict: boolean;
  zero_copy_kv: boolean;
  summary: { errors: number; warnings: number; infos: number; line: string };
  diagnostics: Diagnostic[];
}

/** A file that could not be checked at all (missing, unreadable, not a program). */
export interface CheckRefusal {
  file: string;
  ok: false;
  error: { code: string; location: string; message: string; hint: string | null };
}

/** `trtx check A B ... --json`: one entry per file, in the order given. */
export interface CheckFilesReport {
  schema: 'trtx.check-files/1';
  ok: boolean;
  strict: boolean;
  zero_copy_kv: boolean;
  summary: { files: number; passed: number; failed: number; unreadable: number; errors: number; warnings: number; line: string };
  files: (CheckReport | CheckRefusal)[];
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
export async function checkFile(file: string, options: { requireZeroCopyKv?: boolean }): Promise<CheckResult & { program: Program | null }> {
  try {
    return await withPte(file, async (pte) => ({ ...(await runChecks(pte, options)), program: pte.program }));
  } catch (e) {
    // Usage-kind failures (missing file, not a program) stay exit 2.
    if (!isTrtxError(e) || e.kind === 'usage') throw e;
    const diagnostics = [diag('error', e.code, e.location || 'file', e.message, e.hint ?? 'the file is not a sound ExecuTorch program; re-export it')];
    return { diagnostics, summary: summarizeDiagnostics(diagnostics), program: null };
  }
}

function reportOf(file: string, result: CheckResult, strict: boolean, zeroCopyKv: boolean, code: number): CheckReport {
  return { schema: 'trtx.check/1', file, ok: code === EXIT_OK, strict, zero_copy_kv: zeroCopyKv, summary: result.summary, diagnostics: result.diagnostics };
}

function renderFile(file: string, result: CheckResult & { program: Program | null }, strict: boolean, ctx: Pick<Ctx, 'color'>): string[] {
  const s = styler(ctx);
  const failedByStrict = strict && result.summary.errors === 0 && result.summary.warnings > 0;
  return [
    `${s('bold', file)}: ${result.diagnostics.length === 0 ? 'no problems found' : 'checked'}`,
    ...renderDiagnostics(result.diagnostics, result.program, ctx),
    `${result.summary.line}${failedByStrict ? ' (--strict: warnings fail)' : ''}`,
  ];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Several files: each in turn, then one summary; the exit code is the worst. */
async function checkFiles(ctx: Ctx, files: string[], strict: boolean, zeroCopyKv: boolean): Promise<number> {
  const s = styler(ctx);
  const entries: (CheckReport | CheckRefusal)[] = [];
  let worst = EXIT_OK;
  for (const file of files) {
    let result: CheckResult & { program: Program | null };
    try {
      result = await checkFile(file, { requireZeroCopyKv: zeroCopyKv });
    } catch (e) {
      if (!isTrtxError(e)) throw e;
      const err = e as TrtxError;
      entries.push({ file, ok: false, error: { code: err.code, location: err.location, message: err.message, hint: err.hint ?? null } });
      worst = Math.max(worst, EXIT_USAGE);
      if (entries.length > 1) ctx.print();
      ctx.print(`${s('bold', file)}: ${s('red', 'not checked')}: ${err.oneLine()}`);
      continue;
    }
    const code = checkExitCode(result, strict);
    worst = Math.max(worst, code);
    entries.push(reportOf(file, result, strict, zeroCopyKv, code));
    if (entries.length > 1) ctx.print();
    for (const l of renderFile(file, result, strict, ctx)) ctx.print(l);
  }
  const reports = entries.filter((e): e is CheckReport => 'summary' in e);
  const failed = reports.filter((r) => !r.ok);
  const unreadable = entries.filter((e): e is CheckRefusal => 'error' in e);
  const errors = reports.reduce((n, r) => n + r.summary.errors, 0);
  const warnings = reports.reduce((n, r) => n + r.summary.warnings, 0);
  const line =
    `${plural(files.length, 'file')}: ${reports.length - failed.length} passed, ${failed.length} failed` +
    (unreadable.length ? `, ${unreadable.length} not checked` : '') +
    `; ${plural(errors, 'error')}, ${plural(warnings, 'warning')} in all`;
  if (ctx.json) {
    const doc: CheckFilesReport = {
      schema: 'trtx.check-files/1',
      ok: worst === EXIT_OK,
      strict,
      zero_copy_kv: zeroCopyKv,
      summary: { files: files.length, passed: reports.length - failed.length, failed: failed.length, unreadable: unreadable.length, errors, warnings, line },
      files: entries,
    };
    ctx.emitJson(doc);
    return worst;
  }
  ctx.print();
  ctx.print(s('bold', line));
  for (const r of failed) ctx.print(`  ${s('red', 'failed')}       ${r.file}`);
  for (const u of unreadable) ctx.print(`  ${s('red', 'not checked')}  ${u.file}`);
  return worst;
}

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('prove a .pte is sound before it reaches a device: structure, TensorRT blobs, compile specs, arity, devices')
    .argument('<files...>', 'the .pte program(s)')
    .option('--json', 'machine-readable output (schemas/check.schema.json)')
    .option('--strict', 'warnings fail the check too (exit 1)')
    .option('--zero-copy-kv', 'require every KV cache to be zero-copy')
    .addHelpText(
      'after',
      '\nExit: 0 sound (warnings allowed unless --strict), 1 any error, 2 usage or unreadable input; with several files, the worst of them.\n\nExamples:\n  trtx check model.pte\n  trtx check model.pte --strict --json\n  trtx check out/*.pte',
    )
    .action(
      action<CheckOptions>(async (ctx, opts, files) => {
        const strict = Boolean(opts.strict);
        const zeroCopyKv = Boolean(opts.zeroCopyKv);
        if (files.length > 1) return checkFiles(ctx, files, strict, zeroCopyKv);
        const [file] = files;
        const result = await checkFile(file, { requireZeroCopyKv: zeroCopyKv });
        const code = checkExitCode(result, strict);
        if (ctx.json) {
          ctx.emitJson(reportOf(file, result, strict, zeroCopyKv, code));
          return code;
        }
        for (const l of renderFile(file, result, strict, ctx)) ctx.print(l);
        return code;
      }),
    );
}
