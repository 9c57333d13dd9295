// trtx rewrite IN (-o OUT | --in-place) [transformations]
// With no transformation flags: the canonical re-encoding of the program.
//
// The flags become a RewriteRequest; src/pipeline/ runs it (claim the
// target -> open -> passes -> checks on the result, refusing to write an
// unsound program -> write, in place when asked and possible, else
// atomically); this file reports. A new transformation adds its flags here
// and its pass to src/pipeline/request.ts.
import type { Command } from 'commander';
import { parseRuntimes } from '../../checks/runtime-rules.js';
import { findingsOf, runPipeline } from '../../pipeline/run.js';
import type { RewriteRequest } from '../../pipeline/request.js';
import type { PipelineOutcome } from '../../pipeline/run.js';
import { journalPath, type RewriteWrite } from '../../pte/in-place.js';
import { referencePathOf } from '../../reference/read.js';
import type { SidecarOutcome } from '../../util/sidecar-copy.js';
import type { StaleTemps } from '../../util/stale-temps.js';
import { describeHolder } from '../../util/file-lock.js';
import { TrtxError } from '../../util/errors.js';
import { escapeControls } from '../../util/escape.js';
import { formatIEC, parseSize } from '../../util/size.js';
import { action, argAt } from '../action.js';
import type { CliSession } from '../session.js';
import { EXIT_OK, usage, type Ctx, type GlobalOptions } from '../context.js';
import { renderDiagnostics } from '../render-diagnostics.js';
import { startProgress, type Progress } from '../progress.js';
import { budgetWarnings } from '../budget-flag.js';
import { helpAfter } from '../help.js';
import type { RewriteReport } from '../rewrite-json.js';
import type { PassJson } from '../../pipeline/pass-details-json.js';

interface RewriteOptions extends GlobalOptions {
  output?: string;
  inPlace?: boolean;
  budget?: string;
  clearBudget?: boolean;
  method?: string;
  delegate?: string;
  zeroCopyKv?: boolean;
  shareCache?: boolean;
  strict?: boolean;
  force?: boolean;
  wait?: boolean;
  breakHardLinks?: boolean;
  runtime?: string[];
}

/** What the flags ask for; a contradiction is a usage error before any file is touched. */
function requestOf(opts: RewriteOptions): RewriteRequest {
  const request: RewriteRequest = {};
  if (opts.budget !== undefined && opts.clearBudget) throw usage('--budget and --clear-budget contradict each other; give one');
  const narrowed = opts.method !== undefined || opts.delegate !== undefined;
  if (opts.budget !== undefined || opts.clearBudget) {
    const delegate = opts.delegate === undefined ? undefined : /^[0-9]+$/.test(opts.delegate) ? Number(opts.delegate) : NaN;
    if (Number.isNaN(delegate)) throw usage(`--delegate ${JSON.stringify(opts.delegate)} is not a delegate index (0, 1, ...)`);
    // One of the two (refused above when both): --clear-budget is the null budget.
    const budget = opts.budget === undefined ? null : parseSize(opts.budget, { location: '--budget' });
    request.budget = { budget, method: opts.method, delegate };
  } else if (narrowed) {
    throw usage('--method and --delegate narrow --budget or --clear-budget; give one of those');
  }
  if (opts.shareCache && !opts.zeroCopyKv) throw usage('--share-cache goes with --zero-copy-kv');
  if (opts.strict && !opts.zeroCopyKv) throw usage('--strict goes with --zero-copy-kv');
  if (opts.zeroCopyKv) request.zeroCopyKv = { shareCache: Boolean(opts.shareCache), strict: Boolean(opts.strict) };
  return request;
}

function outputOf(input: string, opts: RewriteOptions): string {
  if (opts.inPlace && opts.output !== undefined && opts.output !== input) throw usage('--in-place writes IN itself; drop -o or --in-place');
  if (opts.force && opts.inPlace) throw usage('--force goes with -o OUT (allowing OUT to be the input); --in-place needs no --force');
  if (opts.breakHardLinks && !opts.inPlace) throw usage('--break-hard-links goes with --in-place');
  if (!opts.inPlace && opts.output === undefined) throw usage('missing -o OUT (or --in-place)');
  return opts.output ?? input;
}

/** Findings on stderr, one line each, control characters escaped. */
function printDiagnostics(ctx: Ctx, lines: string[]): void {
  for (const l of lines) ctx.terminal.writeStderr(escapeControls(l) + '\n');
}

function describeWrite(w: RewriteWrite, input: string, recovered: boolean): string[] {
  // After a finished interrupted rewrite the file did change: the program it
  // was writing already has what was asked, so there is nothing more to write.
  if (w.mode === 'unchanged')
    return [
      recovered
        ? `${input}: the finished rewrite already has what was asked; nothing more to write`
        : `${input}: nothing changed, file left untouched`,
    ];
  if (w.mode === 'in-place') {
    const r = w.result;
    return [
      `rewrote ${r.path} in place: program head ${formatIEC(BigInt(r.bytesWritten))} rewritten, segments untouched (${formatIEC(BigInt(r.fileSize))} file)`,
    ];
  }
  const r = w.result;
  const lines = w.fallback ? [`cannot rewrite in place (${w.fallback}); fell back to a full atomic rewrite`] : [];
  if (w.brokenLinks > 0)
    lines.push(`note: --break-hard-links: ${r.path} is a new file now; its ${w.brokenLinks} other hard link(s) still name the old program`);
  return [...lines, `wrote ${r.path} (${formatIEC(BigInt(r.fileSize))}), segments aligned to ${r.alignment}`];
}

/** The reference outputs beside the output: carried from the input's, or a stale one removed. */
function referenceLines(sidecars: readonly SidecarOutcome[], input: string, output: string): string[] {
  return sidecars.flatMap((s) => {
    if (s.action === 'copied')
      return [
        `reference: ${s.target} (eager PyTorch's outputs, copied from ${s.source}: the rewrite leaves what the program computes unchanged)`,
      ];
    if (s.action === 'removed')
      return [`removed ${s.target}: it belonged to the program ${output} held before; ${input} has no reference outputs beside it`];
    return [];
  });
}

/** The trtx.rewrite/1 document's reference members (schemas/rewrite.schema.json). */
function referenceMembers(sidecars: readonly SidecarOutcome[]) {
  const copied = sidecars.find((s) => s.action === 'copied');
  return {
    reference: copied ? { path: copied.target, source: copied.source } : null,
    reference_removed: sidecars.find((s) => s.action === 'removed')?.target ?? null,
  };
}

/** What the claim of the target did with killed writers' temporary files (src/util/stale-temps.ts). */
function staleLines(stale: StaleTemps | null): string[] {
  if (!stale) return [];
  return [
    ...stale.removed.map((p) => `removed ${p}: a temporary file of a trtx writer that was killed`),
    ...stale.left.map((l) => `note: left ${l.path}: ${l.why}: ${l.remove}`),
  ];
}

export function registerRewrite(program: Command, session: CliSession): void {
  defineRewrite(program).action(
    action<RewriteOptions>(session, async (ctx, opts, args) => rewriteCommand(ctx, opts, argAt(args, 0, '<in>'))),
  );
}

/** The command, its flags and its help. */
function defineRewrite(program: Command): Command {
  return program
    .command('rewrite')
    .description('rewrite a .pte without re-exporting; with no flags, the canonical re-encoding')
    .argument('<in>', 'the .pte to read')
    .option('-o, --output <out>', 'where to write (atomically): a new path or a regular file other than <in>')
    .option('--in-place', 'rewrite <in> itself, only its head when the program still fits before the segments')
    .option('--force', 'with -o: allow OUT to be <in> itself, replaced by a full rewrite')
    .option(
      '--break-hard-links',
      'with --in-place: when the program no longer fits and the file is replaced by a full rewrite, allow it although the file has other hard links (they keep the old program)',
    )
    .option('--no-wait', 'fail at once (REWRITE_LOCKED) when another writer holds the target, instead of waiting')
    .option(
      '--budget <size>',
      'set weight_streaming_budget on TensorRT delegates (8GiB, 512MiB, 1.5GiB, 8GB, 8589934592; 0 streams every weight)',
    )
    .option('--clear-budget', 'remove weight_streaming_budget (TensorRT sizes it automatically at load)')
    .option('--method <name>', 'only delegates of this method (with --budget/--clear-budget)')
    .option('--delegate <index>', 'only the delegate with this index (with --budget/--clear-budget)')
    .option('--zero-copy-kv', 'un-stage KV caches: each TensorRT engine updates its cache in place on the device (docs/zero-copy-kv.md)')
    .option(
      '--share-cache',
      'with --zero-copy-kv: allow a cache two engines or two methods share, recording the decision (shared_kv_cache)',
    )
    .option('--strict', 'with --zero-copy-kv: refuse a program without KV caches (ZC_REWRITE_NO_ALIASED_CACHE) instead of noting it')
    .option(
      '--runtime <name...>',
      'whose rules the check after the rewrite applies (as trtx check --runtime); a cache shared between methods needs custom-memory',
    )
    .option('--json', 'machine-readable output (schemas/rewrite.schema.json)')
    .addHelpText(
      'after',
      helpAfter({
        about:
          'With -o, eager PyTorch\u2019s outputs beside IN (IN.reference.json, from trtx export) are copied beside OUT: a\nrewrite does not change what the program computes, so trtx verify OUT compares with them.',
        exit: [
          [0, 'written, or nothing to change'],
          [1, 'the input is refused (unsound, cut short) or the result fails its check: nothing written'],
          [2, 'usage, an unreadable input, an output that cannot be written, another writer holds it (--no-wait)'],
        ],
        schema: 'schemas/rewrite.schema.json',
        examples: [
          'trtx rewrite model.pte -o canonical.pte',
          'trtx rewrite model.pte --in-place --budget 8GiB',
          'trtx rewrite model.pte -o a100.pte --budget 30GiB --method decode --delegate 0',
          'trtx rewrite model.pte --in-place --clear-budget',
          'trtx rewrite model.pte -o zero-copy.pte --zero-copy-kv --budget 8GiB',
        ],
      }),
    );
}

/** The handler: the flags as a request, the pipeline, then the refusal or the report. */
async function rewriteCommand(ctx: Ctx, opts: RewriteOptions, typed: string): Promise<number> {
  // The flags are checked on the paths as typed (-o IN with --in-place), then both are the run's.
  const input = ctx.at(typed);
  const output = ctx.at(outputOf(typed, opts), 'output');
  const request = requestOf(opts);
  const budget = request.budget?.budget;
  if (opts.budget !== undefined && typeof budget === 'bigint')
    for (const w of budgetWarnings(opts.budget, budget, 'rewrite')) ctx.log.warn(w);
  const { outcome, warnings, progress } = await runRewrite(ctx, request, opts, input, output);
  if (outcome.refused) refuseRewrite(ctx, outcome, input, output);
  progress?.done();
  const written = outcome.written;
  // A target was given: the pipeline writes it (or says unchanged) whenever it does not refuse.
  if (written === null) throw new Error(`rewrite: the pipeline wrote nothing to ${output}`);
  if (ctx.json) {
    ctx.emitJson(rewriteDocument(outcome, written, { input, output, warnings }));
    return EXIT_OK;
  }
  const { reports, recovered } = outcome;
  if (recovered) ctx.print(`finished an interrupted rewrite of ${input} from ${outcome.recoveredFrom ?? journalPath(input)}`);
  for (const l of staleLines(outcome.stale)) ctx.print(l);
  if (reports.length === 0) ctx.print('canonical re-encoding, no transformation asked');
  for (const r of reports) for (const l of r.lines) ctx.print(`  ${l}`);
  for (const l of describeWrite(written, input, recovered)) ctx.print(l);
  for (const l of referenceLines(outcome.sidecars, input, output)) ctx.print(l);
  return EXIT_OK;
}

/** Runs the pipeline on `input` into `output`: the warnings it logged, and the progress it showed while writing. */
async function runRewrite(
  ctx: Ctx,
  request: RewriteRequest,
  opts: RewriteOptions,
  input: string,
  output: string,
): Promise<{ outcome: PipelineOutcome; warnings: string[]; progress: Progress | undefined }> {
  // Shown once writing starts (and takes more than a second), as before any pipeline existed.
  let progress: Progress | undefined;
  let warnings: string[] = [];
  const outcome = await runPipeline(input, {
    request,
    runtime: parseRuntimes(opts.runtime),
    reportBudget: ctx.budget,
    output: {
      path: output,
      inPlace: Boolean(opts.inPlace),
      force: Boolean(opts.force),
      wait: opts.wait !== false,
      breakHardLinks: Boolean(opts.breakHardLinks),
      // Eager PyTorch's outputs stay valid (no pass changes what the program computes): OUT gets IN's.
      // In place, the reference already sits beside the program.
      sidecars: opts.inPlace ? [] : [{ source: referencePathOf(input), target: referencePathOf(output) }],
      command: opts.inPlace ? 'rewrite --in-place' : 'rewrite -o',
      onWait: (holder, otherName) =>
        ctx.log.warn(`waiting for the writer that holds ${output}: ${describeHolder(holder, otherName)} (--no-wait fails instead)`),
      onProgress: (done, total) => (progress ??= startProgress(ctx, `writing ${output}`, { bytes: true })).update(done, total),
    },
    onChecked: ({ reports, checked }) => {
      warnings = [
        ...reports.flatMap((r) => r.warnings),
        ...checked.diagnostics.filter((d) => d.severity === 'warning').map((d) => `${d.code}: ${d.location}: ${d.message}`),
      ];
      for (const w of warnings) ctx.log.warn(w);
    },
  }).catch((e: unknown) => {
    // The structural findings behind PASS_INPUT_UNSOUND, as `trtx check` shows them;
    // under --json they travel in the error document (its `diagnostics`).
    const found = findingsOf(e);
    if (found && !ctx.json) printDiagnostics(ctx, renderDiagnostics(found.diagnostics, found.program, { color: false }));
    throw e;
  });
  return { outcome, warnings, progress };
}

/** A result that fails its check: its errors on stderr (not under --json), and the refusal. */
function refuseRewrite(ctx: Ctx, outcome: Extract<PipelineOutcome, { refused: true }>, input: string, output: string): never {
  const { checked } = outcome;
  if (!ctx.json)
    printDiagnostics(
      ctx,
      renderDiagnostics(
        checked.diagnostics.filter((d) => d.severity === 'error'),
        outcome.program,
        { color: false },
      ),
    );
  throw new TrtxError('REWRITE_CHECK_FAILED', output, `the rewritten program fails ${checked.summary.line}; nothing was written`, {
    hint: `run \`trtx check ${input}\` for every finding; fix or re-export the input first`,
    diagnostics: checked.diagnostics,
  });
}

/** The trtx.rewrite/1 document (schemas/rewrite.schema.json). */
function rewriteDocument(
  outcome: Extract<PipelineOutcome, { refused: false }>,
  written: RewriteWrite,
  at: { input: string; output: string; warnings: string[] },
): RewriteReport {
  const { reports, recovered } = outcome;
  return {
    schema: 'trtx.rewrite/1',
    input: at.input,
    output: at.output,
    mode: written.mode,
    fallback: written.mode === 'atomic' ? written.fallback : null,
    hard_links_broken: written.mode === 'atomic' ? written.brokenLinks : 0,
    recovered_interrupted_rewrite: recovered,
    changes: reports.flatMap((r) => (r.changed ? r.lines : [])),
    // A pass's details are its own, typed where it makes them (src/passes/details-json.ts).
    passes: reports.map((r) => ({ pass: r.pass, changed: r.changed, details: r.details }) as PassJson),
    warnings: at.warnings,
    file_size: written.mode === 'unchanged' ? outcome.inputSize : written.result.fileSize,
    segment_alignment: written.mode === 'atomic' ? written.result.alignment : null,
    stale_temporary_files: outcome.stale ?? { removed: [], left: [] },
    ...referenceMembers(outcome.sidecars),
  };
}
