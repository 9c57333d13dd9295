// The decode budget (src/pte/flatbuffer-verify.ts) bounds what a program's offsets can
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
//
// A budget is a value: the CLI makes one per command (`ReportBudget.forCommand`)
// and hands it to the opener (openPte's `budget`), which keeps it on the
// opened program for the reports about that program to charge. A library
// caller that passes none gets an unbounded one of its own.

import { TrtxError } from './errors.js';

export const REPORT_BUDGET_FACTOR = 16;
/** What any command may report whatever it read (messages, headers). */
export const REPORT_BUDGET_FLOOR = 1024 * 1024;

export class ReportBudget {
  private limit: number;
  private used = 0;
  private written = 0;
  private programs = 0;

  /** `floor`: what may be reported before any program is read; Infinity for an unbounded budget. */
  constructor(floor = Infinity) {
    this.limit = floor;
  }

  /** A command's budget: REPORT_BUDGET_FLOOR plus what each program it opens adds. */
  static forCommand(): ReportBudget {
    return new ReportBudget(REPORT_BUDGET_FLOOR);
  }

  /** An opened program of `programBytes` bytes adds to what may be reported. */
  allowFor(programBytes: number): void {
    this.limit += REPORT_BUDGET_FACTOR * programBytes;
    this.programs += programBytes;
  }

  /** What a report builds (a finding, an entry), charged as it is made. */
  chargeReport(bytes: number, where: string): void {
    this.used += bytes;
    if (this.used > this.limit) this.refuse(where, 'the report');
  }

  /** What a command writes (a line, part of a document, a page), metered apart from what reports build. */
  chargeOutput(bytes: number, where: string): void {
    this.written += bytes;
    if (this.written > this.limit) this.refuse(where, 'the output');
  }

  /**
   * JSON.stringify(value, null, 2), charging the output meter as it goes, so
   * that an amplified document is refused before it is built. A bigint is
   * written as its decimal string.
   */
  stringifyWithinBudget(value: unknown, where: string): string {
    return JSON.stringify(
      value,
      (key, v: unknown) => {
        // A lower bound of what the entry adds: its key, its text, the indent.
        const text = typeof v === 'string' ? v.length + 2 : typeof v === 'object' ? 2 : 6;
        this.chargeOutput(key.length + text + 4, where);
        return typeof v === 'bigint' ? v.toString() : v;
      },
      2,
    );
  }

  private refuse(where: string, what: string): never {
    const cap = this.limit;
    this.limit = Infinity; // the refusal itself must be reportable
    throw new TrtxError(
      'REPORT_BUDGET',
      where,
      `${what} would pass ${cap} bytes, ${REPORT_BUDGET_FACTOR}x the ${this.programs} program bytes read: the program's indices reference the same data again and again`,
      {
        hint: 'trtx refuses to print more than this for a program; real programs report a few bytes per program byte',
      },
    );
  }
}
