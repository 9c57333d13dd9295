// Checking files, as `trtx check FILE...` does: each file is opened and
// checked (a container that does not parse is one error finding, a file that
// cannot be read at all a refusal of its own), and the reports of
// schemas/check.schema.json are made: trtx.check/1 for one file,
// trtx.check-files/1 for several (a report or a refusal per file, in the
// order given, and one summary). The command prints them.

import type { Program } from '../pte/model.js';
import { withPte } from '../pte/open.js';
import { engineCensus, type EngineCensus } from '../tensorrt/engine-kind.js';
import { isTrtxError } from '../util/errors.js';
import { ReportBudget } from '../util/report-budget.js';
import { diag } from './diagnostic.js';
import { buildCheckContext } from './context.js';
import { runChecksIn, summarizeDiagnostics, type CheckResult } from './run.js';
import type { RuntimeRules } from './runtime-rules.js';
import type { CheckFilesReport, CheckRefusal, CheckReport } from './report-json.js';

export type { CheckFilesReport, CheckRefusal, CheckReport };

export interface FileCheckOptions {
  strict: boolean;
  zeroCopyKv: boolean;
  runtime: RuntimeRules;
}

export type FileCheck = CheckResult & { program: Program | null; engines: EngineCensus | null };

/** One file's entry: checked (with its report) or refused. */
export type CheckedFile = { file: string; result: FileCheck; report: CheckReport } | { file: string; refusal: CheckRefusal };

/** What the summary of several files needs of each: its report or refusal, never its decoded program. */
export type FileEntry = { file: string; report: CheckReport } | { file: string; refusal: CheckRefusal };

/**
 * The entry `check FILE...` keeps once a file is printed: the decoded
 * program (and the bytes its inline data views) is dropped, and without
 * --json the findings too, so memory stays flat in the number of files.
 */
export function retainedEntry(entry: CheckedFile, keepDiagnostics: boolean): FileEntry {
  if ('refusal' in entry) return { file: entry.file, refusal: entry.refusal };
  return { file: entry.file, report: keepDiagnostics ? entry.report : { ...entry.report, engines: null, diagnostics: [] } };
}

/** Whether a result fails: any error, or any warning under --strict. */
export function failsCheck(r: Pick<CheckResult, 'summary'>, strict: boolean): boolean {
  return r.summary.errors > 0 || (strict && r.summary.warnings > 0);
}

/** Opens and checks; a container that does not parse becomes one error diagnostic. */
export async function checkFile(
  file: string,
  options: { requireZeroCopyKv?: boolean; runtime?: RuntimeRules; reportBudget?: ReportBudget },
): Promise<FileCheck> {
  const reportBudget = options.reportBudget ?? new ReportBudget();
  try {
    return await withPte(
      file,
      async (pte) => {
        // The census reuses the blobs the checks parsed: each is read once.
        const { ctx, blobDiagnostics } = await buildCheckContext(pte, options);
        return { ...(await runChecksIn(ctx, blobDiagnostics)), program: pte.program, engines: await engineCensus(pte, ctx.trt) };
      },
      { reportBudget },
    );
  } catch (e) {
    // Usage-kind failures (missing file, not a program) stay exit 2.
    if (!isTrtxError(e) || e.kind === 'usage') throw e;
    const diagnostics = [
      diag(
        reportBudget,
        'error',
        e.code,
        e.location || 'file',
        e.message,
        e.hint ?? 'the file is not a sound ExecuTorch program; re-export it',
      ),
    ];
    return { diagnostics, summary: summarizeDiagnostics(diagnostics), program: null, engines: null };
  }
}

export function reportOf(file: string, result: CheckResult & { engines: EngineCensus | null }, opts: FileCheckOptions): CheckReport {
  return {
    schema: 'trtx.check/1',
    file,
    ok: !failsCheck(result, opts.strict),
    strict: opts.strict,
    zero_copy_kv: opts.zeroCopyKv,
    runtime: opts.runtime,
    summary: result.summary,
    engines: result.engines,
    diagnostics: result.diagnostics,
  };
}

/** Checks `file`; a file that cannot be checked at all is a refusal entry, not a throw. */
export async function checkOneOf(file: string, opts: FileCheckOptions, reportBudget?: ReportBudget): Promise<CheckedFile> {
  try {
    const result = await checkFile(file, { requireZeroCopyKv: opts.zeroCopyKv, runtime: opts.runtime, reportBudget });
    return { file, result, report: reportOf(file, result, opts) };
  } catch (e) {
    if (!isTrtxError(e)) throw e;
    return { file, refusal: { file, ok: false, error: { code: e.code, location: e.location, message: e.message, hint: e.hint ?? null } } };
  }
}

const plural = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;

/** The trtx.check-files/1 document of the entries, in the order checked. */
export function filesReport(entries: readonly FileEntry[], opts: FileCheckOptions): CheckFilesReport {
  const reports = entries.flatMap((e) => ('report' in e ? [e.report] : []));
  const failed = reports.filter((r) => !r.ok);
  const unreadable = entries.flatMap((e) => ('refusal' in e ? [e.refusal] : []));
  const errors = reports.reduce((n, r) => n + r.summary.errors, 0);
  const warnings = reports.reduce((n, r) => n + r.summary.warnings, 0);
  const line =
    `${plural(entries.length, 'file')}: ${reports.length - failed.length} passed, ${failed.length} failed` +
    (unreadable.length ? `, ${unreadable.length} not checked` : '') +
    `; ${plural(errors, 'error')}, ${plural(warnings, 'warning')} in all`;
  return {
    schema: 'trtx.check-files/1',
    ok: failed.length === 0 && unreadable.length === 0,
    strict: opts.strict,
    zero_copy_kv: opts.zeroCopyKv,
    summary: {
      files: entries.length,
      passed: reports.length - failed.length,
      failed: failed.length,
      unreadable: unreadable.length,
      errors,
      warnings,
      line,
    },
    files: entries.map((e) => ('report' in e ? e.report : e.refusal)),
  };
}
