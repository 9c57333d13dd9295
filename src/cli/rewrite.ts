// trtx rewrite IN (-o OUT | --in-place) [transformations]
// With no transformation flags: the canonical re-encoding of the program.
//
// The command is a fixed sequence: open -> passes (what the flags ask for,
// src/passes/) -> checks on the result (refuse to write an unsound program)
// -> write (in place when asked and possible, else atomically) -> report.
// A new transformation adds its flags and one entry in passesFor().
import type { Command } from 'commander';
import { runChecks } from '../checks/run.js';
import { parseRuntimes } from '../checks/runtime-rules.js';
import { budgetPass } from '../passes/budget.js';
import { readTrtBlobs, zeroCopyKvPass } from '../passes/zero-copy.js';
import type { Pass, PassReport } from '../passes/pass.js';
import { unsoundInput } from '../passes/precondition.js';
import { finishInterruptedInPlace, journalPath, publishRewrite, type RewriteWrite } from '../pte/in-place.js';
import { openPte, type PteFile } from '../pte/open.js';
import { checkInPlaceTarget, checkOutputTarget } from '../pte/target.js';
import { describeHolder, lockTarget, type TargetLock } from '../util/file-lock.js';
import { TrtxError } from '../util/errors.js';
import { escapeControls } from '../util/escape.js';
import { formatIEC, parseSize } from '../util/size.js';
import { renderDiagnostics } from './check.js';
import { EXIT_OK, usage, type Ctx, type GlobalOptions } from './context.js';
import { action } from './main.js';
import { startProgress } from './progress.js';

interface RewriteOptions extends GlobalOptions {
  output?: string;
  inPlace?: boolean;
  budget?: string;
  clearBudget?: boolean;
  method?: string;
  delegate?: string;
  zeroCopyKv?: boolean;
  shareCache?: boolean;
  force?: boolean;
  wait?: boolean;
  runtime?: string[];
}

/** The passes the flags ask for, in the order they run. */
function passesFor(opts: RewriteOptions): Pass[] {
  const passes: Pass[] = [];
  if (opts.budget !== undefined && opts.clearBudget) throw usage('--budget and --clear-budget contradict each other; give one');
  const narrowed = opts.method !== undefined || opts.delegate !== undefined;
  if (opts.budget !== undefined || opts.clearBudget) {
    const delegate = opts.delegate === undefined ? undefined : /^[0-9]+$/.test(opts.delegate) ? Number(opts.delegate) : NaN;
    if (Number.isNaN(delegate)) throw usage(`--delegate ${JSON.stringify(opts.delegate)} is not a delegate index (0, 1, ...)`);
    const budget = opts.clearBudget ? null : parseSize(opts.budget!, { location: '--budget' });
    passes.push(budgetPass({ budget, method: opts.method, delegate }));
  } else if (narrowed) {
    throw usage('--method and --delegate narrow --budget or --clear-budget; give one of those');
  }
  if (opts.shareCache && !opts.zeroCopyKv) throw usage('--share-cache goes with --zero-copy-kv');
  return passes;
}

function outputOf(input: string, opts: RewriteOptions): string {
  if (opts.inPlace && opts.output !== undefined && opts.output !== input) throw usage('--in-place writes IN itself; drop -o or --in-place');
  if (opts.force && opts.inPlace) throw usage('--force goes with -o OUT (allowing OUT to be the input); --in-place needs no --force');
  if (!opts.inPlace && opts.output === undefined) throw usage('missing -o OUT (or --in-place)');
  return opts.output ?? input;
}

/**
 * Validates the target (a regular file or a new path; not the input unless
 * --in-place or --force; writable) and takes its writer lock, waiting for
 * another writer unless --no-wait.
 */
async function lockOutput(ctx: Ctx, input: string, output: string, opts: RewriteOptions): Promise<TargetLock> {
  if (opts.inPlace) await checkInPlaceTarget(input);
  else await checkOutputTarget(output, input, { force: Boolean(opts.force) });
  return lockTarget(output, {
    wait: opts.wait !== false,
    command: opts.inPlace ? 'rewrite --in-place' : 'rewrite -o',
    onWait: (holder) => ctx.log.warn(`waiting for the writer that holds ${output}: ${describeHolder(holder)} (--no-wait fails instead)`),
  });
}

function describeWrite(w: RewriteWrite, input: string): string[] {
  if (w.mode === 'unchanged') return [`${input}: nothing changed, file left untouched`];
  if (w.mode === 'in-place') {
    const r = w.result;
    return [`rewrote ${r.path} in place: program head ${formatIEC(BigInt(r.bytesWritten))} rewritten, segments untouched (${formatIEC(BigInt(r.fileSize))} file)`];
  }
  const r = w.result;
  const lines = w.fallback ? [`cannot rewrite in place (${w.fallback}); fell back to a full atomic rewrite`] : [];
  return [...lines, `wrote ${r.path} (${formatIEC(BigInt(r.fileSize))}), segments aligned to ${r.alignment}`];
}

export function registerRewrite(program: Command): void {
  program
    .command('rewrite')
    .description('rewrite a .pte without re-exporting; with no flags, the canonical re-encoding')
    .argument('<in>', 'the .pte to read')
    .option('-o, --output <out>', 'where to write (atomically): a new path or a regular file other than <in>')
    .option('--in-place', 'rewrite <in> itself, only its head when the program still fits before the segments')
    .option('--force', 'with -o: allow OUT to be <in> itself, replaced by a full rewrite')
    .option('--no-wait', 'fail at once (REWRITE_LOCKED) when another writer holds the target, instead of waiting')
    .option('--budget <size>', 'set weight_streaming_budget on TensorRT delegates (8GiB, 512MiB, 1.5GiB, 8GB, 8589934592, 0)')
    .option('--clear-budget', 'remove weight_streaming_budget (TensorRT sizes it automatically at load)')
    .option('--method <name>', 'only delegates of this method (with --budget/--clear-budget)')
    .option('--delegate <index>', 'only the delegate with this index (with --budget/--clear-budget)')
    .option('--zero-copy-kv', 'un-stage KV caches: each TensorRT engine updates its cache in place on the device (docs/zero-copy-kv.md)')
    .option('--share-cache', 'with --zero-copy-kv: allow a cache two engines or two methods share, recording the decision (shared_kv_cache)')
    .option('--runtime <name...>', 'whose rules the check after the rewrite applies (as trtx check --runtime); a cache shared between methods needs custom-memory')
    .option('--json', 'machine-readable output')
    .addHelpText(
      'after',
      '\nExamples:\n  trtx rewrite model.pte -o canonical.pte\n  trtx rewrite model.pte --in-place --budget 8GiB\n  trtx rewrite model.pte -o a100.pte --budget 30GiB --method decode --delegate 0\n  trtx rewrite model.pte --in-place --clear-budget\n  trtx rewrite model.pte -o zero-copy.pte --zero-copy-kv --budget 8GiB',
    )
    .action(
      action<RewriteOptions>(async (ctx, opts, [input]) => {
        const output = outputOf(input, opts);
        const passes = passesFor(opts);
        const lock = await lockOutput(ctx, input, output, opts);
        let recovered = false;
        let pte: PteFile;
        try {
          recovered = opts.inPlace ? await finishInterruptedInPlace(input) : false;
          pte = await openPte(input);
        } catch (e) {
          await lock.release();
          throw e;
        }
        try {
          const unsound = unsoundInput(pte);
          if (unsound) {
            // Under --json the findings travel in the error document (its `diagnostics`).
            if (!ctx.json) for (const l of renderDiagnostics(unsound.diagnostics, pte.program, { color: false })) process.stderr.write(escapeControls(l) + '\n');
            throw unsound.error;
          }
          const fileSegments = pte.program.segments.map((s) => ({ ...s }));
          // Reads the engines' metadata from the input, so it joins once the file is open.
          if (opts.zeroCopyKv) passes.push(zeroCopyKvPass(await readTrtBlobs(pte), { shareCache: Boolean(opts.shareCache) }));
          const reports: PassReport[] = passes.map((pass) => pass(pte.program));
          const changed = reports.some((r) => r.changed);

          const checked = await runChecks(pte, { requireZeroCopyKv: Boolean(opts.zeroCopyKv), runtime: parseRuntimes(opts.runtime) });
          if (checked.summary.errors > 0) {
            if (!ctx.json) for (const l of renderDiagnostics(checked.diagnostics.filter((d) => d.severity === 'error'), pte.program, { color: false })) process.stderr.write(escapeControls(l) + '\n');
            throw new TrtxError('REWRITE_CHECK_FAILED', output, `the rewritten program fails ${checked.summary.line}; nothing was written`, {
              hint: `run \`trtx check ${input}\` for every finding; fix or re-export the input first`,
              diagnostics: checked.diagnostics,
            });
          }
          const warnings = [...reports.flatMap((r) => r.warnings), ...checked.diagnostics.filter((d) => d.severity === 'warning').map((d) => `${d.code}: ${d.location}: ${d.message}`)];
          for (const w of warnings) ctx.log.warn(w);

          const progress = startProgress(ctx, `writing ${output}`, { bytes: true });
          const written = await publishRewrite(pte, fileSegments, {
            inPlace: Boolean(opts.inPlace),
            output,
            changed,
            onProgress: (done, total) => progress.update(done, total),
          });
          progress.done();

          if (ctx.json) {
            ctx.emitJson({
              schema: 'trtx.rewrite/1',
              input,
              output,
              mode: written.mode,
              fallback: written.mode === 'atomic' ? written.fallback : null,
              recovered_interrupted_rewrite: recovered,
              changes: reports.flatMap((r) => (r.changed ? r.lines : [])),
              passes: reports.map((r) => ({ pass: r.pass, changed: r.changed, details: r.details })),
              warnings,
              file_size: written.mode === 'unchanged' ? pte.fileSize : written.result.fileSize,
              segment_alignment: written.mode === 'atomic' ? written.result.alignment : null,
            });
            return EXIT_OK;
          }
          if (recovered) ctx.print(`finished an interrupted in-place rewrite of ${input} from ${journalPath(input)}`);
          if (passes.length === 0) ctx.print('canonical re-encoding, no transformation asked');
          for (const r of reports) for (const l of r.lines) ctx.print(`  ${l}`);
          for (const l of describeWrite(written, input)) ctx.print(l);
          return EXIT_OK;
        } finally {
          await pte.close();
          await lock.release();
        }
      }),
    );
}
