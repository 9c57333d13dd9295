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
//
// Two meters share that allowance: what reports build (chargeReport, as
// each entry is made, so a refusal comes before the work grows) and what a
// command writes (chargeOutput: every printed line, the --json document as
// it is serialised, an HTML page), so no renderer can pass it whatever it
// forgot to charge while building.

import { TrtxError } from './errors.js';

export const REPORT_BUDGET_FACTOR = 16;
/** What any command may report whatever it read (messages, headers). */
export const REPORT_BUDGET_FLOOR = 1024 * 1024;

let limit = Infinity;
let used = 0;
let written = 0;
let programs = 0;

/** Starts a command's accounting (the CLI calls it; library callers are unbounded until then). */
export function resetReportBudget(): void {
  limit = REPORT_BUDGET_FLOOR;
  used = 0;
  written = 0;
  programs = 0;
}

/** Ends a command's accounting: library calls after it are unbounded again. */
export function endReportBudget(): void {
  limit = Infinity;
  used = 0;
  written = 0;
  programs = 0;
}

/** An opened program of `programBytes` bytes adds to what may be reported. */
export function allowReportFor(programBytes: number): void {
  limit += REPORT_BUDGET_FACTOR * programBytes;
  programs += programBytes;
}

export function chargeReport(bytes: number, where: string): void {
  used += bytes;
  if (used > limit) refuse(where, 'the report');
}

/** What a command writes (a line, part of a document, a page), metered apart from what reports build. */
export function chargeOutput(bytes: number, where: string): void {
  written += bytes;
  if (written > limit) refuse(where, 'the output');
}

function refuse(where: string, what: string): never {
  const cap = limit;
  limit = Infinity; // the refusal itself must be reportable
  throw new TrtxError(
    'REPORT_BUDGET',
    where,
    `${what} would pass ${cap} bytes, ${REPORT_BUDGET_FACTOR}x the ${programs} program bytes read: the program's indices reference the same data again and again`,
    {
      hint: 'trtx refuses to print more than this for a program; real programs report a few bytes per program byte',
    },
  );
}

/**
 * JSON.stringify(value, null, 2), charging the output meter as it goes, so
 * that an amplified document is refused before it is built. A bigint is
 * written as its decimal string.
 */
export function stringifyWithinBudget(value: unknown, where: string): string {
  return JSON.stringify(
    value,
    (key, v: unknown) => {
      // A lower bound of what the entry adds: its key, its text, the indent.
      const text = typeof v === 'string' ? v.length + 2 : typeof v === 'object' ? 2 : 6;
      chargeOutput(key.length + text + 4, where);
      return typeof v === 'bigint' ? v.toString() : v;
    },
    2,
  );
}
