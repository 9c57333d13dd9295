// trtx diff A B [--method NAME] [--json] [--exit-code] [--html OUT.html]
import type { Command } from 'commander';
import { helpAfter } from '../help.js';
import { openPte, type PteFile } from '../../pte/open.js';
import { TrtxError, isTrtxError } from '../../util/errors.js';
import { diffPte } from '../../diff/diff.js';
import type {
  DelegateDiff,
  DiffReport,
  FieldChange,
  InstructionChange,
  MethodDiff,
  Scalar,
  SpecValue,
  StagingCounts,
  TensorPlace,
} from '../../diff/report.js';
import { formatIEC } from '../../util/size.js';
import { memoryPlan } from '../../inspect/memory-plan.js';
import { renderDiffHtml } from '../../html/diff-page.js';
import { checkReportTarget, writeReport } from '../../html/write.js';
import { EXIT_CHECK, EXIT_OK, type Ctx, type GlobalOptions } from '../context.js';
import { action, argAt } from '../action.js';
import type { CliSession } from '../session.js';
import { styler } from '../style.js';
import { pushAll } from '../../util/arrays.js';
import type { ReportBudget } from '../../util/report-budget.js';

interface DiffOptions extends GlobalOptions {
  method?: string;
  exitCode?: boolean;
  html?: string;
}

type S = ReturnType<typeof styler>;

const iec = (n: number) => formatIEC(BigInt(n));
const signedIec = (n: number) => (n >= 0 ? `+${iec(n)}` : `-${iec(-n)}`);

/** `-`, `+`, `~` markers, coloured like a unified diff. */
function marks(s: S) {
  return {
    del: (text: string) => s('red', `- ${text}`),
    add: (text: string) => s('green', `+ ${text}`),
    mod: (text: string) => s('yellow', `~ ${text}`),
  };
}

const show = (v: Scalar | null) => (v === null ? '(none)' : String(v));

function fieldLines(changes: FieldChange[], s: S, indent: string): string[] {
  const m = marks(s);
  return changes.map((c) => {
    if (c.before === null) return indent + m.add(`${c.field}: ${show(c.after)}`);
    if (c.after === null) return indent + m.del(`${c.field}: ${show(c.before)}`);
    return indent + m.mod(`${c.field}: ${show(c.before)} -> ${show(c.after)}`);
  });
}

function instructionLine(c: InstructionChange, s: S, chains: boolean): string {
  const m = marks(s);
  const chain = chains ? `chain ${c.chain} ` : '';
  if (c.change === 'removed') return m.del(`${s('dim', `${chain}[${c.before_index}]`)} ${c.text}`);
  if (c.change === 'added') return m.add(`${s('dim', `${chain}[${c.after_index}]`)} ${c.text}`);
  return m.mod(`${s('dim', `${chain}[${c.before_index}] -> [${c.after_index}]`)} moved: ${c.text}`);
}

function specText(v: SpecValue): string {
  const d = v.decoded;
  if (v.error) return `invalid ${v.raw} (${v.error})`;
  if (d && 'budget_bytes' in d) return `${d.budget_iec} (${d.budget_bytes} bytes)`;
  if (d && 'zero_copy_kv' in d) return d.zero_copy_kv.join(', ');
  if (d && 'target_device' in d) return d.target_device;
  return v.raw;
}

function delegateLines(d: DelegateDiff, s: S): string[] {
  const m = marks(s);
  const title = `delegate${d.index} ${d.backend_id ?? '(no id)'}`;
  if (d.change !== 'changed') {
    const calls = d.change === 'added' ? d.calls?.after : d.calls?.before;
    const specs = d.compile_specs.map((c) => `${c.key}=${specText((c.after ?? c.before)!)}`).join(', ');
    const line = `${title}, ${calls ?? 0} call(s)${specs ? `; specs ${specs}` : ''}`;
    return ['  ' + (d.change === 'added' ? m.add(line) : m.del(line))];
  }
  const lines = [`  ${s('bold', title)}`];
  if (d.calls) lines.push('    ' + m.mod(`calls: ${d.calls.before} -> ${d.calls.after}`));
  const manyCalls = d.args.some((a) => a.call > 0);
  for (const a of d.args) {
    const call = manyCalls ? `call ${a.call} ` : '';
    if (a.change === 'removed') lines.push('    ' + m.del(`${call}arg ${a.name}: ${a.before}`));
    else if (a.change === 'added') lines.push('    ' + m.add(`${call}arg ${a.name}: ${a.after}`));
    else lines.push('    ' + m.mod(`${call}arg ${a.name}: ${a.before} -> ${a.after}`));
  }
  for (const c of d.compile_specs) {
    const key = c.key ?? '(no key)';
    if (c.change === 'added') lines.push('    ' + m.add(`spec ${key} = ${specText(c.after!)}`));
    else if (c.change === 'removed') lines.push('    ' + m.del(`spec ${key} = ${specText(c.before!)}`));
    else lines.push('    ' + m.mod(`spec ${key}: ${specText(c.before!)} -> ${specText(c.after!)}`));
  }
  lines.push(
    ...fieldLines(
      d.blob.map((f) => ({ ...f, field: `blob ${f.field}` })),
      s,
      '    ',
    ),
  );
  return lines;
}

const placeText = (p: TensorPlace) =>
  `${p.dtype}[${p.shape.join(',')}] ${p.arena === null ? 'unplanned' : `a${p.arena}+${p.offset}`} (${p.device}${p.tagged_device !== p.device ? `, tagged ${p.tagged_device}` : ''})`;

function stagingText(b: StagingCounts, a: StagingCounts): string {
  const part = (label: string, x: number, y: number) => `${label} ${iec(x)} -> ${iec(y)}`;
  return `${part('host->device', b.host_to_device_bytes, a.host_to_device_bytes)}, ${part('device->host', b.device_to_host_bytes, a.device_to_host_bytes)} (${b.copies} -> ${a.copies} copies)`;
}

function methodLines(md: MethodDiff, s: S): string[] {
  const m = marks(s);
  if (md.change === 'removed') return [m.del(s('bold', `method ${md.name}`))];
  if (md.change === 'added') return [m.add(s('bold', `method ${md.name}`))];
  const lines = [s('bold', `method ${md.name}`)];
  for (const c of md.io) {
    const label = `${c.role} ${c.index}`;
    if (c.before === null) lines.push('  ' + m.add(`${label}: ${c.after}`));
    else if (c.after === null) lines.push('  ' + m.del(`${label}: ${c.before}`));
    else lines.push('  ' + m.mod(`${label}: ${c.before} -> ${c.after}`));
  }
  const chains = md.instructions.some((c) => c.chain > 0);
  for (const c of md.instructions) lines.push('  ' + instructionLine(c, s, chains));
  for (const d of md.delegates) pushAll(lines, delegateLines(d, s));
  for (const a of md.arenas) {
    const where = (a.after ?? a.before)!.device;
    if (!a.before) lines.push('  ' + m.add(`arena ${a.index}: ${iec(a.after!.size)} on ${a.after!.device}`));
    else if (!a.after) lines.push('  ' + m.del(`arena ${a.index}: ${iec(a.before.size)} on ${a.before.device}`));
    else {
      const dev = a.before.device === a.after.device ? where : `${a.before.device} -> ${a.after.device}`;
      const delta = a.after.size - a.before.size;
      lines.push(
        '  ' + m.mod(`arena ${a.index} (${dev}): ${iec(a.before.size)} -> ${iec(a.after.size)}${delta ? ` (${signedIec(delta)})` : ''}`),
      );
    }
  }
  for (const t of md.tensors) {
    if (t.change === 'added') lines.push('  ' + m.add(`tensor ${t.name}: ${placeText(t.after!)}`));
    else if (t.change === 'removed') lines.push('  ' + m.del(`tensor ${t.name}: ${placeText(t.before!)}`));
    else lines.push('  ' + m.mod(`tensor ${t.name} ${t.moved ? 'moved' : 'retyped'}: ${placeText(t.before!)} -> ${placeText(t.after!)}`));
  }
  if (md.staging) lines.push('  ' + m.mod(`staging per execution: ${stagingText(md.staging.before, md.staging.after)}`));
  return lines;
}

export function renderDiff(r: DiffReport, ctx: Pick<Ctx, 'color'>): string[] {
  const s = styler(ctx);
  const m = marks(s);
  const lines = [s('red', `--- ${r.a}`), s('green', `+++ ${r.b}`)];
  if (r.equivalent) return [...lines, `no differences in meaning${r.method !== null ? ` in method ${r.method}` : ''}`];
  if (r.header.length) pushAll(lines, [s('bold', 'header'), ...fieldLines(r.header, s, '  ')]);
  if (r.segments.count || r.segments.sizes.length) {
    lines.push(s('bold', 'segments'));
    if (r.segments.count) lines.push('  ' + m.mod(`count: ${r.segments.count.before} -> ${r.segments.count.after}`));
    lines.push(
      ...fieldLines(
        r.segments.sizes.map((c) => ({
          field: `segment ${c.index}`,
          before: c.before === null ? null : iec(c.before),
          after: c.after === null ? null : iec(c.after),
        })),
        s,
        '  ',
      ),
    );
  }
  if (r.program.length) pushAll(lines, [s('bold', 'program'), ...fieldLines(r.program, s, '  ')]);
  for (const md of r.methods) pushAll(lines, methodLines(md, s));
  lines.push(`${r.changes} change(s)`);
  return lines;
}

const DIFF_HELP = helpAfter({
  about: `Compares by meaning, not bytes: methods by name, instructions by operator and
arguments described by name or role (not value index), delegates by index and
backend id, compile specs decoded. A canonical re-encoding diffs empty.`,
  exit: [
    [0, 'compared (whether or not the programs differ)'],
    [1, 'with --exit-code: the programs differ'],
    [2, 'usage or environment, or an input it cannot read (missing, unreadable, malformed, cut short or non-.pte file)'],
  ],
  schema: 'schemas/diff.schema.json',
  examples: [
    'trtx diff kv-decode-staged.pte kv-decode-zero-copy.pte',
    'trtx diff before.pte after.pte --method decode --json',
    'trtx diff shipped.pte rebuilt.pte --exit-code',
    'trtx diff kv-decode-staged.pte kv-decode-zero-copy.pte --html plan-diff.html',
  ],
});

/**
 * Opens one side; a refusal names the file, since with two inputs a bare
 * `header.file_identifier` does not say which one is at fault.
 */
async function openSide(path: string, reportBudget: ReportBudget): Promise<PteFile> {
  try {
    return await openPte(path, { reportBudget });
  } catch (e) {
    if (!isTrtxError(e) || e.location.startsWith(path)) throw e;
    throw new TrtxError(e.code, e.location ? `${path} > ${e.location}` : path, e.message, { hint: e.hint, kind: e.kind });
  }
}

async function diffFiles(
  a: string,
  b: string,
  opts: { method: string | undefined; html: boolean; reportBudget: ReportBudget },
): Promise<{ report: DiffReport; page: string | null }> {
  const { method, html } = opts;
  const pa = await openSide(a, opts.reportBudget);
  try {
    const pb = await openSide(b, opts.reportBudget);
    try {
      const report = await diffPte(pa, pb, { method });
      if (!html) return { report, page: null };
      const [planA, planB] = [await memoryPlan(pa, { method }), await memoryPlan(pb, { method })];
      return { report, page: renderDiffHtml(planA, planB, report) };
    } finally {
      await pb.close();
    }
  } finally {
    await pa.close();
  }
}

/**
 * diff's exit code 1 means "the programs differ" (with --exit-code, as
 * `git diff --exit-code`), so an input it cannot read is never 1: it is 2,
 * like every usage or environment failure, with its own code and location.
 */
function unreadableIsNotADifference(e: unknown): never {
  if (isTrtxError(e) && e.kind !== 'usage')
    throw new TrtxError(e.code, e.location, e.message, { kind: 'usage', hint: e.hint, diagnostics: e.diagnostics });
  throw e;
}

export function registerDiff(program: Command, session: CliSession): void {
  program
    .command('diff')
    .description('what differs between two .pte programs: instructions, delegate arguments, compile specs, arenas, moved tensors, staging')
    .argument('<a>', 'the program before')
    .argument('<b>', 'the program after')
    .option('--method <name>', 'only this method')
    .option('--exit-code', 'exit 1 when the programs differ (as git diff --exit-code)')
    .option('--json', 'machine-readable output (schemas/diff.schema.json)')
    .option('--html <out.html>', 'also write both memory plans side by side as one self-contained HTML page')
    .addHelpText('after', DIFF_HELP)
    .action(
      action<DiffOptions>(session, async (ctx, opts, args) => {
        const [a, b] = [ctx.at(argAt(args, 0, '<a>')), ctx.at(argAt(args, 1, '<b>'))];
        const htmlOut = opts.html === undefined ? undefined : ctx.at(opts.html, 'output');
        if (htmlOut !== undefined) await checkReportTarget(htmlOut, [a, b]);
        const { report, page } = await diffFiles(a, b, {
          method: opts.method,
          html: htmlOut !== undefined,
          reportBudget: ctx.budget,
        }).catch(unreadableIsNotADifference);
        const code = opts.exitCode && !report.equivalent ? EXIT_CHECK : EXIT_OK;
        if (htmlOut !== undefined && page !== null) {
          const size = await writeReport(htmlOut, ctx.asTyped(page), [a, b], ctx.budget);
          // With --html the page is the output; --json still prints the document.
          if (!ctx.json) {
            ctx.print(
              `wrote ${htmlOut} (${iec(size)}): ${report.equivalent ? 'no differences in meaning' : `${report.changes} change(s)`}, memory plans side by side`,
            );
            return code;
          }
        }
        if (ctx.json) ctx.emitJson(report);
        else for (const l of renderDiff(report, ctx)) ctx.print(l);
        return code;
      }),
    );
}
