// trtx inspect FILE [--method NAME] [--all] [--json] [--html OUT.html]
import type { Command } from 'commander';
import { helpAfter } from '../help.js';
import { withPte } from '../../pte/open.js';
import { summarize, type DelegateSummary, type InspectReport, type MethodSummary, type TensorSummary } from '../../inspect/summary.js';
import { formatIEC } from '../../util/size.js';
import { standinEngineLines } from '../../tensorrt/engine-kind.js';
import { streamingLine, type EngineStreaming } from '../../tensorrt/resident.js';
import { describeStandinProgram, SYNTHETIC_ENGINE } from '../../tensorrt/standin-program.js';
import { memoryPlan } from '../../inspect/memory-plan.js';
import { renderInspectHtml } from '../../html/page.js';
import { checkReportTarget, writeReport } from '../../html/write.js';
import { EXIT_OK, usage, type Ctx, type GlobalOptions } from '../context.js';
import { action, argAt } from '../action.js';
import type { CliSession } from '../session.js';
import { styler } from '../style.js';
import { pushAll } from '../../util/arrays.js';
import { shortList } from '../../util/display.js';

interface InspectOptions extends GlobalOptions {
  method?: string;
  all?: boolean;
  html?: string;
}

const iec = (n: number) => formatIEC(BigInt(n));
const shape = (t: TensorSummary) => `${t.name ?? `%${t.index}`} ${t.dtype}[${t.shape.join(', ')}] @${t.device}`;
const counts = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

type JsonStreaming = NonNullable<Extract<DelegateSummary['tensorrt'], { magic: string }>['reference']>['streaming'];

const bigStreaming = (s: JsonStreaming): EngineStreaming => {
  const b = (v: number | null) => (v === null ? null : BigInt(v));
  return {
    weight_streaming: s.weight_streaming,
    streamable_weight_bytes: BigInt(s.streamable_weight_bytes),
    budget_bytes: b(s.budget_bytes),
    resident_bytes: b(s.resident_bytes),
    streamed_bytes_per_execute: b(s.streamed_bytes_per_execute),
  };
};

function delegateLines(d: DelegateSummary, all: boolean): string[] {
  const where = 'error' in d.data ? d.data.error : `${d.data.location} ${d.data.index}, ${iec(d.data.size)}`;
  const lines = [`  delegate ${d.index}: ${d.backend_id ?? '(no id)'} (${where})`];
  if (d.tensorrt) {
    if ('error' in d.tensorrt) lines.push(`    blob: ${d.tensorrt.error}`);
    else {
      const t = d.tensorrt;
      const names = (l: string[]) => (all ? l.join(', ') : shortList(l)) || '-';
      lines.push(`    blob ${t.magic}: ${engineKind(t)} ${iec(t.engine_size)}, inputs ${names(t.inputs)}; outputs ${names(t.outputs)}`);
      const p = t.reference?.program;
      if (p)
        lines.push(
          `    engine: ${describeStandinProgram({ instructions: p.instructions, operators: p.operators, weightBytes: p.weight_bytes, programBytes: p.program_bytes })}`,
        );
      else if (t.reference) lines.push(`    engine: ${SYNTHETIC_ENGINE}`);
      // A partition's weights are the model's; a synthetic engine's streamable size is made up (in --json only).
      if (p && t.reference) lines.push(`    ${streamingLine(bigStreaming(t.reference.streaming))}`);
      if (all) for (const a of t.aliased) lines.push(`    alias ${a.output} -> ${a.input} (${a.kind})`);
    }
  }
  for (const s of d.compile_specs) {
    const dec = s.decoded;
    const shown = s.error
      ? `invalid: ${s.error}`
      : dec?.budget_bytes !== undefined
        ? `${dec.budget_bytes} bytes (${dec.budget_iec})`
        : (dec?.target_device ?? (dec?.zero_copy_kv ? dec.zero_copy_kv.join(', ') : s.raw));
    lines.push(`    spec ${s.key ?? '(no key)'} = ${shown}`);
  }
  return lines;
}

function methodLines(m: MethodSummary, s: ReturnType<typeof styler>, all: boolean): string[] {
  const lines = [s('bold', `method ${m.name ?? '(unnamed)'}`)];
  for (const t of m.inputs) lines.push(`  input  ${shape(t)}`);
  for (const t of m.outputs) lines.push(`  output ${shape(t)}`);
  lines.push(`  values: ${counts(m.values)}`);
  lines.push(`  instructions: ${counts(m.instructions)}`);
  if (all) for (const o of m.operators) lines.push(`  op ${o.name}${o.overload ? '.' + o.overload : ''} x${o.calls}`);
  for (const a of m.arenas) if (a.index > 0) lines.push(`  arena ${a.index}: ${iec(a.size)} on ${a.device}`);
  for (const d of m.delegates) pushAll(lines, delegateLines(d, all));
  const st = m.staging;
  lines.push(
    `  staging per execution: host->device ${iec(st.host_to_device_bytes)}, device->host ${iec(st.device_to_host_bytes)} (${st.copies} copies)`,
  );
  return lines;
}

type Engine = Extract<DelegateSummary['tensorrt'], { magic: string }>;

function engineKind(t: Engine): string {
  if (t.engine === 'reference') return t.reference?.synthetic ? 'synthetic reference engine' : 'trtx reference engine';
  return t.engine === 'tensorrt' ? 'TensorRT plan' : 'engine';
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const tally = (items: string[]) => {
  const n = new Map<string, number>();
  for (const i of items) n.set(i, (n.get(i) ?? 0) + 1);
  return [...n].map(([k, c]) => `${c} ${k}`);
};

/**
 * What a person asks first, in one screen: the methods, the delegates, the
 * weights, what each engine keeps resident and streams per execute, the
 * staging per execution and the caches; then how many per-item lines --all adds.
 */
function summaryLines(r: InspectReport, all: boolean): string[] {
  const delegates = r.methods.flatMap((m) => m.delegates.map((d) => ({ m, d })));
  const engine = (d: DelegateSummary) => (d.tensorrt && !('error' in d.tensorrt) ? d.tensorrt : null);
  const lines = [
    `  methods: ${shortList(r.methods.map((m) => `${m.name ?? '(unnamed)'} (${plural(m.inputs.length, 'input')}, ${plural(m.outputs.length, 'output')}, ${plural(m.delegates.length, 'delegate')})`))}`,
  ];
  if (delegates.length) {
    const kinds = tally(
      delegates.map(({ d }) => `${d.backend_id ?? '(no id)'}${engine(d) ? ` (${engineKind(engine(d) as Engine)})` : ''}`),
    );
    lines.push(`  delegates: ${shortList(kinds)}`);
  }
  const partitions = delegates.map(({ d }) => engine(d)?.reference?.program).filter((p) => p !== undefined && p !== null);
  const weights = partitions.reduce((n, p) => n + p.weight_bytes, 0);
  lines.push(
    `  weights: constant data ${iec(r.program.constant_data_bytes)}${partitions.length ? `; ${iec(weights)} in ${plural(partitions.length, 'engine partition')}` : ''}`,
  );
  for (const { m, d } of delegates) {
    const ref = engine(d)?.reference;
    if (ref?.program) lines.push(`  budget ${m.name ?? '(unnamed)'} delegate ${d.index}: ${streamingLine(bigStreaming(ref.streaming))}`);
  }
  for (const m of r.methods) {
    const st = m.staging;
    lines.push(
      `  staging per execution of ${m.name ?? '(unnamed)'}: host->device ${iec(st.host_to_device_bytes)}, device->host ${iec(st.device_to_host_bytes)} (${plural(st.copies, 'copy', 'copies')})`,
    );
  }
  const aliases = delegates.flatMap(({ d }) => engine(d)?.aliased ?? []);
  const caches = new Set(aliases.map((a) => a.input));
  if (caches.size)
    lines.push(`  caches: ${caches.size}, updated in place by their engines (${[...new Set(aliases.map((a) => a.kind))].join(', ')})`);
  const operators = r.methods.reduce((n, m) => n + m.operators.length, 0);
  const hidden = [
    [r.program.segments.length, 'segment'],
    [operators, 'operator'],
    [aliases.length, 'alias', 'aliases'],
  ] as const;
  const counted = hidden.filter(([n]) => n > 0).map(([n, one, many]) => plural(n, one, many));
  if (!all && counted.length) lines.push(`  ${counted.join(', ')}: --all lists them`);
  return lines;
}

export function renderInspect(r: InspectReport, ctx: Pick<Ctx, 'color'>, all = false): string[] {
  const s = styler(ctx);
  const eh = r.header.extended_header;
  const lines = [
    `${s('bold', r.file)}: ${iec(r.file_size)}, ${r.header.file_identifier}, root at ${r.header.root_offset}`,
    eh
      ? `  header ${eh.magic}: program ${iec(eh.program_size)}, segments at ${eh.segment_base_offset} (${eh.segment_data_size === null ? 'size not recorded' : iec(eh.segment_data_size)})`
      : '  no extended header',
    `  program v${r.program.version}: ${r.program.methods} method(s), constant data ${iec(r.program.constant_data_bytes)}, ${r.program.segments.length} segment(s)`,
  ];
  for (const l of standinEngineLines(r.engines)) lines.push(`  ${l}`);
  pushAll(lines, summaryLines(r, all));
  if (all) for (const seg of r.program.segments) lines.push(`  segment ${seg.index}: ${iec(seg.size)} at ${seg.offset}`);
  for (const m of r.methods) pushAll(lines, ['', ...methodLines(m, s, all)]);
  return lines;
}

export function registerInspect(program: Command, session: CliSession): void {
  program
    .command('inspect')
    .description('describe a .pte: header, methods, operators, arenas, delegates, compile specs, segments')
    .argument('<file>', 'the .pte program')
    .option('--method <name>', 'only this method')
    .option('--all', 'also list every segment, operator and alias (the text output opens with a summary; --json always lists them)')
    .option('--json', 'machine-readable output (schemas/inspect.schema.json)')
    .option(
      '--html <out.html>',
      'also write the memory plan as one self-contained HTML page (arenas to scale, tensors, bindings, staging copies)',
    )
    .addHelpText(
      'after',
      helpAfter({
        exit: [
          [0, 'described'],
          [1, 'a program it cannot decode (cut short, corrupt), like check'],
          [2, 'usage, a missing or unreadable file, not a program, an --html page it cannot write'],
        ],
        schema: 'schemas/inspect.schema.json',
        examples: [
          'trtx inspect model.pte',
          'trtx inspect model.pte --all',
          'trtx inspect model.pte --method decode --json',
          'trtx inspect model.pte --html model.html',
        ],
      }),
    )
    .action(
      action<InspectOptions>(session, async (ctx, opts, args) => {
        const file = ctx.at(argAt(args, 0, '<file>'));
        const htmlOut = opts.html === undefined ? undefined : ctx.at(opts.html, 'output');
        if (htmlOut !== undefined) await checkReportTarget(htmlOut, [file]);
        const { report, html } = await withPte(
          file,
          async (pte) => ({
            report: await summarize(pte, { method: opts.method }),
            html: htmlOut === undefined ? null : renderInspectHtml(await memoryPlan(pte, { method: opts.method })),
          }),
          { reportBudget: ctx.budget },
        );
        if (opts.method !== undefined && report.methods.length === 0) throw usage(`no method named "${opts.method}" in ${file}`);
        if (htmlOut !== undefined && html !== null) {
          const size = await writeReport(htmlOut, ctx.asTyped(html), [file], ctx.budget);
          // With --html the page is the output; --json still prints the document.
          if (!ctx.json) {
            ctx.print(`wrote ${htmlOut} (${formatIEC(BigInt(size))}): memory plan of ${report.methods.length} method(s) of ${file}`);
            return EXIT_OK;
          }
        }
        if (ctx.json) ctx.emitJson(report);
        else for (const l of renderInspect(report, ctx, opts.all === true)) ctx.print(l);
        return EXIT_OK;
      }),
    );
}
