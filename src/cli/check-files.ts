// trtx check A B C ...: what a CI that built many programs runs. Each file
// is checked and reported in turn (a file that cannot be read is reported
// and the others still checked), then one summary; the exit code is the
// worst of the files' (2 over 1 over 0). --json prints one
// trtx.check-files/1 document (schemas/check.schema.json); --format github
// the annotations of every file; --format sarif stays one file's log.
import type { EngineCensus } from '../tensorrt/engine-kind.js';
import type { Program } from '../pte/model.js';
import type { CheckResult } from '../checks/run.js';
import { annotation } from '../report/github.js';
import type { Code } from '../codes/index.js';
import { isTrtxError } from '../util/errors.js';
import type { RuntimeRules } from '../checks/runtime-rules.js';
import { checkExitCode, checkFile, renderFile, reportOf, type CheckFormat, type CheckReport } from './check.js';
import { EXIT_OK, EXIT_USAGE, usage, type Ctx } from './context.js';
import { styler } from './style.js';

/** A file that could not be checked at all (missing, unreadable, not a program). */
export interface CheckRefusal {
  file: string;
  ok: false;
  error: { code: Code; location: string; message: string; hint: string | null };
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

const plural = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;

type Checked = { file: string; result: CheckResult & { program: Program | null; engines: EngineCensus | null }; report: CheckReport } | { file: string; refusal: CheckRefusal };

export async function checkFiles(ctx: Ctx, files: string[], opts: { strict: boolean; zeroCopyKv: boolean; format?: CheckFormat; runtime: RuntimeRules }): Promise<number> {
  if (opts.format === 'sarif') throw usage('--format sarif writes the log of one file', 'check one file per run for SARIF, or use --format github or --json for several');
  const s = styler(ctx);
  const github = opts.format === 'github';
  const entries: Checked[] = [];
  let worst = EXIT_OK;
  for (const file of files) {
    let entry: Checked;
    try {
      const result = await checkFile(file, { requireZeroCopyKv: opts.zeroCopyKv, runtime: opts.runtime });
      const code = checkExitCode(result, opts.strict);
      worst = Math.max(worst, code);
      entry = { file, result, report: reportOf(file, result, opts.strict, opts.zeroCopyKv, code, opts.runtime) };
    } catch (e) {
      if (!isTrtxError(e)) throw e;
      worst = Math.max(worst, EXIT_USAGE);
      entry = { file, refusal: { file, ok: false, error: { code: e.code, location: e.location, message: e.message, hint: e.hint ?? null } } };
    }
    entries.push(entry);
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
    if ('refusal' in entry) ctx.print(`${s('bold', file)}: ${s('red', 'not checked')}: ${entry.refusal.error.code}: ${entry.refusal.error.location ? entry.refusal.error.location + ': ' : ''}${entry.refusal.error.message}`);
    else for (const l of renderFile(file, entry.result, opts.strict, ctx, opts.runtime)) ctx.print(l);
  }

  const reports = entries.flatMap((e) => ('report' in e ? [e.report] : []));
  const failed = reports.filter((r) => !r.ok);
  const unreadable = entries.flatMap((e) => ('refusal' in e ? [e.refusal] : []));
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
      strict: opts.strict,
      zero_copy_kv: opts.zeroCopyKv,
      summary: { files: files.length, passed: reports.length - failed.length, failed: failed.length, unreadable: unreadable.length, errors, warnings, line },
      files: entries.map((e) => ('report' in e ? e.report : e.refusal)),
    };
    ctx.emitJson(doc);
    return worst;
  }
  if (github) {
    ctx.print(`trtx check: ${line}`);
    return worst;
  }
  ctx.print();
  ctx.print(s('bold', line));
  for (const r of failed) ctx.print(`  ${s('red', 'failed')}       ${r.file}`);
  for (const u of unreadable) ctx.print(`  ${s('red', 'not checked')}  ${u.file}`);
  return worst;
}
