// Writing a report page: the target is checked as every named output is
// (src/util/target.ts: a regular file or a new path, never one of the
// programs it describes, a name that fits, a directory trtx may write), then
// written atomically.
import { checkOutputTarget } from '../util/target.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import type { ReportBudget } from '../util/report-budget.js';

const IS_INPUT_HINT = 'name a new file for the report, e.g. report.html';

/** The checks alone, for a command to run before it does any work. */
export function checkReportTarget(target: string, inputs: readonly string[]): Promise<void> {
  return checkOutputTarget(target, inputs, { isInputHint: IS_INPUT_HINT });
}

export async function writeReport(target: string, html: string, inputs: readonly string[], budget: ReportBudget): Promise<number> {
  // A page is output like any other: under the report budget (src/util/report-budget.ts).
  budget.chargeOutput(html.length, target);
  await checkReportTarget(target, inputs);
  return writeFileAtomic(target, html);
}
