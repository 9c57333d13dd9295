// A finding of `trtx check`: severity, a stable code, where (a path such as
// `decode > delegate 0 (TensorRTBackend) > binding k_out`), what is wrong and
// one line on what to do.

import type { Code } from '../codes/index.js';
import { boundedText } from '../util/display.js';
import type { Finding, Severity } from '../util/finding.js';
import type { ReportBudget } from '../util/report-budget.js';

export type { Severity } from '../util/finding.js';

/** A finding of `trtx check` (its shape lives in util/finding.ts, so a refusal can carry findings). */
export type Diagnostic = Finding;

/** A finding, charged to `budget` (the checked program's, PteFile.reportBudget) as it is made. */
export function diag(
  budget: ReportBudget,
  severity: Severity,
  code: Code,
  location: string,
  message: string,
  hint: string,
  where: { method?: string | null; delegate?: number | null } = {},
): Diagnostic {
  // Messages and locations embed names from the program: bounded, so many findings about one long name stay small.
  budget.chargeReport(Math.min(location.length, 600) + Math.min(message.length, 1200) + hint.length + 64, location.slice(0, 200));
  return {
    severity,
    code,
    method: where.method ?? null,
    delegate: where.delegate ?? null,
    location: boundedText(location, 600),
    message: boundedText(message, 1200),
    hint,
  };
}

export const errorsIn = (ds: Diagnostic[]) => ds.filter((d) => d.severity === 'error');
export const warningsIn = (ds: Diagnostic[]) => ds.filter((d) => d.severity === 'warning');
