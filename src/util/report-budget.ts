// The decode budget (src/pte/verify.ts) bounds what a program's offsets can
// make trtx materialise; this bounds what its indices can make trtx report.
// Indices may repeat (a plan may list one tensor as its input 250,000
// times, a thousand delegates may share one blob), and every report that
// prints a line per reference would print that much: a 4 MB file made
// `inspect --json` write 400 MB and hold 2.3 GB. Reports charge what they
// build (findings, tensor and binding entries, diff arguments) against an
// allowance that each opened program adds to, REPORT_BUDGET_FACTOR bytes
// per program byte; past it the command stops with REPORT_BUDGET. Real
// programs report a few bytes per program byte.

import { TrtxError } from './errors.js';

export const REPORT_BUDGET_FACTOR = 16;
/** What any command may report whatever it read (messages, headers). */
export const REPORT_BUDGET_FLOOR = 1024 * 1024;

let limit = Infinity;
let used = 0;
let programs = 0;

/** Starts a command's accounting (the CLI calls it; library callers are unbounded until then). */
export function resetReportBudget(): void {
  limit = REPORT_BUDGET_FLOOR;
  used = 0;
  programs = 0;
}

/** Ends a command's accounting: library calls after it are unbounded again. */
export function endReportBudget(): void {
  limit = Infinity;
  used = 0;
  programs = 0;
}

/** An opened program of `programBytes` bytes adds to what may be reported. */
export function allowReportFor(programBytes: number): void {
  limit += REPORT_BUDGET_FACTOR * programBytes;
  programs += programBytes;
}

export function chargeReport(bytes: number, where: string): void {
  used += bytes;
  if (used > limit) {
    const cap = limit;
    limit = Infinity; // the refusal itself must be reportable
    throw new TrtxError(
      'REPORT_BUDGET',
      where,
      `the report would pass ${cap} bytes, ${REPORT_BUDGET_FACTOR}x the ${programs} program bytes read: the program's indices reference the same data again and again`,
      {
        hint: 'trtx refuses to print more than this for a program; real programs report a few bytes per program byte',
      },
    );
  }
}
