// The report budget is a value (src/util/report-budget.ts, issue 28): each
// command of the CLI makes its own and hands it to the opener, so what one
// command reads and reports never moves another's allowance, and a library
// caller that passes none reports without a bound, as before any CLI ran.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { trtSingle } from '../src/examples/programs.js';
import { withPte } from '../src/pte/open.js';
import { REPORT_BUDGET_FACTOR, REPORT_BUDGET_FLOOR, ReportBudget } from '../src/util/report-budget.js';
import type { TrtxError } from '../src/util/errors.js';
import { tempDir } from './helpers/temp.js';

/** The code a call is refused with; null when it is not. */
function refusal(fn: () => void): string | null {
  try {
    fn();
  } catch (e) {
    return (e as TrtxError).code;
  }
  return null;
}

const dir = tempDir('report-budget');
const program = join(dir, 'trt-single.pte');
beforeAll(async () => {
  await writeFixture(program, trtSingle());
});

describe('a report budget', () => {
  it("of a command allows the floor, refuses past it, and the refusal's own report is not refused again", () => {
    const budget = ReportBudget.forCommand();
    budget.chargeReport(REPORT_BUDGET_FLOOR, 'first');
    expect(refusal(() => budget.chargeReport(1, 'second'))).toBe('REPORT_BUDGET');
    expect(refusal(() => budget.chargeOutput(10 * REPORT_BUDGET_FLOOR, 'the error line'))).toBeNull();
  });

  it('grows by REPORT_BUDGET_FACTOR bytes for each byte of each program its command opens', async () => {
    const budget = ReportBudget.forCommand();
    const bytes = await withPte(program, (pte) => pte.programBytes.length, { reportBudget: budget });
    budget.chargeReport(REPORT_BUDGET_FLOOR + REPORT_BUDGET_FACTOR * bytes, 'all of it');
    expect(refusal(() => budget.chargeReport(1, 'one more'))).toBe('REPORT_BUDGET');
  });

  it('of one command is not moved by what another command reads or reports', async () => {
    const reading = ReportBudget.forCommand();
    const other = ReportBudget.forCommand();
    await withPte(program, () => {}, { reportBudget: reading });
    other.chargeReport(REPORT_BUDGET_FLOOR, 'up to the floor');
    expect(refusal(() => other.chargeReport(1, 'past it'))).toBe('REPORT_BUDGET');
    expect(refusal(() => reading.chargeReport(REPORT_BUDGET_FLOOR + 1, 'past the floor, within what it read'))).toBeNull();
  });

  it('is unbounded for a program a library caller opens without one', async () => {
    await withPte(program, (pte) => {
      expect(refusal(() => pte.reportBudget.chargeReport(100 * REPORT_BUDGET_FLOOR, 'a library report'))).toBeNull();
      expect(refusal(() => pte.reportBudget.stringifyWithinBudget({ a: 'x'.repeat(2 * REPORT_BUDGET_FLOOR) }, 'doc'))).toBeNull();
    });
  });
});
