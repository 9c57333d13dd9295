// The one rewrite pipeline: claim the target -> open -> refuse an unsound
// input -> passes -> checks on the result -> write -> report. `trtx rewrite`,
// `trtx export` (on the program the bridge wrote), `trtx demo` and `trtx
// verify` (deriving its zero-copy twin) all run it, so each of them refuses
// what the others refuse, in the same order:
//   - the target is validated and its writer lock taken before the input is
//     read (src/util/target.ts, src/util/file-lock.ts; a private target, in
//     a folder only this process sees, needs no lock); an interrupted
//     in-place rewrite is finished under that lock before anything is read;
//   - passes follow the program's indices, so they run only on a program
//     whose structure passes the checks (PASS_INPUT_UNSOUND, precondition.ts);
//   - nothing is written when the result fails a check: the outcome says
//     `refused` and the caller words the refusal with its own code;
//   - files that travel with the program (rewrite -o carries the reference
//     outputs) are staged before the write and put in place right after it.
// Nothing here prints; progress goes through callbacks.

import { runChecks, type CheckResult } from '../checks/run.js';
import type { RuntimeRules } from '../checks/runtime-rules.js';
import type { Diagnostic } from '../checks/diagnostic.js';
import type { PassReport } from '../passes/pass.js';
import { journalPath, publishRewrite, recoverInPlace, type RewriteWrite } from '../pte/in-place.js';
import { sweepStaleTemps, type StaleTemps } from '../util/stale-temps.js';
import type { Program } from '../pte/model.js';
import { openPte, type PteFile } from '../pte/open.js';
import { readDelegateBlobs } from '../tensorrt/delegate-view.js';
import { lockTarget, type LockHolder, type TargetLock } from '../util/file-lock.js';
import { checkInPlaceTarget, checkOutputTarget } from '../util/target.js';
import { unsoundInput } from './precondition.js';
import { planPasses, type RewriteRequest } from './request.js';
import type { ReportBudget } from '../util/report-budget.js';
import type { FreeSpaceReader } from '../util/free-space.js';
import { stageSidecar, type Sidecar, type SidecarOutcome, type StagedSidecar } from '../util/sidecar-copy.js';

export interface OutputTarget {
  /** Where the result goes (the input itself with inPlace; once claimed, the file a symbolic link input points to). */
  path: string;
  /** Rewrite the input itself: only its head when the program still fits before the segments. */
  inPlace?: boolean;
  /** The output may be the input, replaced by a full rewrite. */
  force?: boolean;
  /** Wait for another writer of the target (default), or fail at once with REWRITE_LOCKED. */
  wait?: boolean;
  /** The hint of OUTPUT_IS_INPUT, where the rewrite's (--in-place, --force) does not apply. */
  isInputHint?: string;
  /** What this writer does, recorded in the lock for a waiter's message. */
  command: string;
  onWait?: (holder: LockHolder | null, otherName: boolean) => void;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
  /** Write nothing when no pass changed anything (in place, nothing is ever written then). */
  skipUnchanged?: boolean;
  /** In place: a fallback to a full rewrite may replace a file that has other hard links. */
  breakHardLinks?: boolean;
  /**
   * Files that travel with the program (rewrite -o: IN.reference.json to
   * OUT.reference.json): staged before the program is written, put in place
   * right after it, and a stale target removed when the input has none
   * (src/util/sidecar-copy.ts).
   */
  sidecars?: readonly Sidecar[];
  /** How the target's folder reports its free space, asked before a whole program is written (default statfs(2): src/util/free-space.ts). */
  freeSpace?: FreeSpaceReader;
  /**
   * A file in a folder only this process can see (verify's temporary
   * folder, where it writes its zero-copy twin): no other writer can race
   * it and no killed writer left temporaries beside it, so no writer lock
   * is taken (no flock child) and nothing is swept. The target is still
   * validated, and the write still checks free space and the result.
   */
  private?: boolean;
}

/** A target validated and locked, held until `lock.release()`. */
export interface ClaimedTarget extends OutputTarget {
  lock: TargetLock;
  /** Temporary files of killed writers of this target: removed, or left and why (src/util/stale-temps.ts). */
  stale: StaleTemps;
}

export interface PipelineOptions {
  request: RewriteRequest;
  /** Where the result goes; null: nothing is written (the caller wants the rewritten program and its check). */
  output: OutputTarget | ClaimedTarget | null;
  /** Whose runtime rules the check after the passes applies; default DEFAULT_RUNTIME. */
  runtime?: RuntimeRules;
  /** Run the passes on a copy and leave the opened file's program as it was (verify runs both). */
  copy?: boolean;
  /** Called as each step starts (a command's progress lines). */
  onStep?: (step: 'passes' | 'checks' | 'write') => void;
  /** Called with the checked result before anything is written (a command logs the warnings then). */
  onChecked?: (run: PipelineRun) => void;
  /** The command's report budget, for the input this opens (src/util/report-budget.ts); unbounded when absent. */
  reportBudget?: ReportBudget;
}

export interface PipelineRun {
  /** The program after the passes (the opened file's own unless `copy`). */
  program: Program;
  /** One per pass, in the order they ran. */
  reports: PassReport[];
  changed: boolean;
  /** The checks on the result. */
  checked: CheckResult;
  /** Whether an interrupted in-place rewrite of the input was finished first. */
  recovered: boolean;
  /** The journal it was finished from (null: none was). */
  recoveredFrom: string | null;
  /** The input's size, as opened. */
  inputSize: number;
  /** What the claim of the target found of killed writers' temporary files; null without a target. */
  stale: StaleTemps | null;
}

/** `refused`: the result failed a check and nothing was written; `sidecars`: what became of each the target asked to carry. */
export type PipelineOutcome =
  (PipelineRun & { refused: true }) | (PipelineRun & { refused: false; written: RewriteWrite | null; sidecars: SidecarOutcome[] });

/** What a refusal carries: the findings behind it and the program they are about (its delegates name the headings). */
export interface RefusalFindings {
  diagnostics: readonly Diagnostic[];
  program: Program | null;
}

/** A refusal that carries the findings behind it, for the caller to show. */
export function withDiagnostics<E extends Error>(
  error: E,
  diagnostics: readonly Diagnostic[],
  program: Program | null = null,
): E & RefusalFindings {
  return Object.assign(error, { diagnostics, program });
}

/** The findings a refusal carries, when it carries any. */
export function findingsOf(e: unknown): RefusalFindings | null {
  const r = e as Partial<RefusalFindings> | null;
  return r && Array.isArray(r.diagnostics) && r.diagnostics.length > 0 ? { diagnostics: r.diagnostics, program: r.program ?? null } : null;
}

const isClaimed = (t: OutputTarget | ClaimedTarget): t is ClaimedTarget => 'lock' in t;

/**
 * Validates the target (a regular file or a new path; not the input unless
 * in place or forced; writable) and takes its writer lock (a private one:
 * none, see OutputTarget.private). A caller whose
 * input is not ready yet (export, before the bridge runs) claims first and
 * passes the claim to runPipeline.
 */
export async function claimTarget(input: string, target: OutputTarget): Promise<ClaimedTarget> {
  // In place, through a symbolic link: the file it points to is the target (its lock, its journal, what is written).
  let path = target.path;
  if (target.inPlace) path = await checkInPlaceTarget(input);
  else await checkOutputTarget(target.path, input, { force: Boolean(target.force), isInputHint: target.isInputHint });
  if (target.private && !target.inPlace)
    return { ...target, path, lock: { path, release: async () => {} }, stale: { removed: [], left: [] } };
  const lock = await lockTarget(path, { wait: target.wait !== false, command: target.command, onWait: target.onWait });
  // Under the lock no other trtx writes this target: what a killed one left
  // beside it (a whole temporary program, a journal's temporary) goes now.
  try {
    const stale = await sweepStaleTemps([path, journalPath(path), ...(target.sidecars ?? []).map((s) => s.target)]);
    return { ...target, path, lock, stale };
  } catch (e) {
    await lock.release();
    throw e;
  }
}

/**
 * Runs the pipeline on `input`: a path (opened and closed here) or a file the
 * caller holds open. A target given unclaimed is claimed before the input is
 * opened and released at the end; a claimed one stays the caller's.
 */
export async function runPipeline(input: string | PteFile, opts: PipelineOptions): Promise<PipelineOutcome> {
  const path = typeof input === 'string' ? input : input.path;
  const claimed = opts.output === null ? null : isClaimed(opts.output) ? opts.output : await claimTarget(path, opts.output);
  try {
    if (typeof input !== 'string') {
      if (claimed?.inPlace) throw new Error('an in-place rewrite opens its input itself, under the writer lock');
      return await rewriteOpened(input, claimed, opts, null);
    }
    // In place, the file the claim resolved and locked (the one a link points to) is read and written.
    const at = claimed?.inPlace ? claimed.path : input;
    const recoveredFrom = claimed?.inPlace ? await recoverInPlace(at) : null;
    const pte = await openPte(at, { reportBudget: opts.reportBudget });
    try {
      return await rewriteOpened(pte, claimed, opts, recoveredFrom);
    } finally {
      await pte.close();
    }
  } finally {
    if (claimed && claimed !== opts.output) await claimed.lock.release();
  }
}

async function rewriteOpened(
  pte: PteFile,
  target: ClaimedTarget | null,
  opts: PipelineOptions,
  recoveredFrom: string | null,
): Promise<PipelineOutcome> {
  const unsound = unsoundInput(pte);
  if (unsound) throw withDiagnostics(unsound.error, unsound.diagnostics, pte.program);
  // The segment table as opened: an in-place write keeps the file's segments.
  const fileSegments = pte.program.segments.map((s) => ({ ...s }));
  // Every pass is made before any runs: each reads the input as opened. The
  // blobs are read once, for the passes and for the checks on the result (no
  // pass changes a blob or where a delegate's data lives).
  opts.onStep?.('passes');
  const blobs = await readDelegateBlobs(pte);
  const passes = planPasses(opts.request).map((planned) => planned.make(blobs));
  const program = opts.copy ? structuredClone(pte.program) : pte.program;
  const reports = passes.map((pass) => pass(program));
  const changed = reports.some((r) => r.changed);

  opts.onStep?.('checks');
  const result = program === pte.program ? pte : { ...pte, program };
  const checked = await runChecks(result, { requireZeroCopyKv: Boolean(opts.request.zeroCopyKv), runtime: opts.runtime, blobs });
  const recovered = recoveredFrom !== null;
  const run: PipelineRun = {
    program,
    reports,
    changed,
    checked,
    recovered,
    recoveredFrom,
    inputSize: pte.fileSize,
    stale: target?.stale ?? null,
  };
  if (checked.summary.errors > 0) return { ...run, refused: true };
  opts.onChecked?.(run);
  if (target === null) return { ...run, refused: false, written: null, sidecars: [] };
  if (target.skipUnchanged && !changed) return { ...run, refused: false, written: { mode: 'unchanged' }, sidecars: [] };
  opts.onStep?.('write');
  // Staged first: a sidecar that cannot be copied fails before the program is published.
  const staged: StagedSidecar[] = [];
  try {
    for (const s of target.sidecars ?? []) staged.push(await stageSidecar(s));
    const written = await publishRewrite(pte, program, fileSegments, {
      inPlace: Boolean(target.inPlace),
      output: target.path,
      changed,
      onProgress: target.onProgress,
      signal: target.signal,
      breakHardLinks: target.breakHardLinks,
      freeSpace: target.freeSpace,
    });
    const sidecars: SidecarOutcome[] = [];
    for (const s of staged) sidecars.push(await s.publish());
    return { ...run, refused: false, written, sidecars };
  } finally {
    // A staged copy that was not published (the program's write failed, or a rename before it) goes; a published one has nothing left to remove.
    for (const s of staged) await s.discard();
  }
}
