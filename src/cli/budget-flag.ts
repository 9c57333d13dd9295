// --budget as `export`, `rewrite` and `verify` read it: one parser
// (util/size.ts), and two warnings said before any work, because each is a
// likely slip that costs a long run to find out:
//   BUDGET_STREAMS_EVERYTHING  --budget 0 is not "automatic": it keeps no
//                              weight on the device and streams every one in
//                              at every execute;
//   BUDGET_DECIMAL_UNIT        8GB is 8,000,000,000 bytes (7.45 GiB), not
//                              8 GiB: said with its binary equivalent at the
//                              start, not found in the summary of a 40-minute
//                              export.

import type { FlagWarningCode } from '../codes/index.js';
import { decimalUnitOf, formatIEC, parseSize } from '../util/size.js';

export type BudgetCommand = 'export' | 'rewrite' | 'verify';

/** Where each command's automatic budget is (rewrite has --clear-budget; export and verify leave --budget out). */
const AUTOMATIC: Record<BudgetCommand, string> = {
  rewrite: "for TensorRT's automatic budget (sized at load) use --clear-budget instead",
  export: "for TensorRT's automatic budget (sized at load) leave --budget out (or clear it later: trtx rewrite --clear-budget)",
  verify: "to run the program's own budget leave --budget out; TensorRT's automatic budget is `trtx rewrite --clear-budget` on the program",
};

/** The warnings `--budget TEXT` (`bytes`, as parsed) calls for, as `CODE: message` lines. */
export function budgetWarnings(text: string, bytes: bigint, command: BudgetCommand): string[] {
  const warn = (code: FlagWarningCode, message: string) => `${code}: --budget: ${message}`;
  const out: string[] = [];
  if (bytes === 0n)
    out.push(
      warn(
        'BUDGET_STREAMS_EVERYTHING',
        `${text} keeps no weight on the device: every weight streams in at every execute; ${AUTOMATIC[command]}`,
      ),
    );
  const decimal = decimalUnitOf(text);
  if (decimal && bytes > 0n)
    out.push(
      warn(
        'BUDGET_DECIMAL_UNIT',
        `${text} is in decimal ${decimal.unit}: ${bytes} bytes = ${formatIEC(bytes)}${decimal.binary === null ? '' : `; ${formatIEC(parseSize(decimal.binary))} is --budget ${decimal.binary}`}`,
      ),
    );
  return out;
}
