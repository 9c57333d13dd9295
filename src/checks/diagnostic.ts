// A finding of `trtx check`: severity, a stable code, where (a path such as
// `decode > delegate 0 (TensorRTBackend) > binding k_out`), what is wrong and
// one line on what to do.

import { boundedText } from '../util/display.js';
import { chargeReport } from '../util/report-budget.js';

export type Severity = 'error' | 'warning' | 'info';

export interface Diagnostic {
  severity: Severity;
  code: string;
  /** Method name, or null for program-level findings. */
  method: string | null;
  /** Delegate index within the method, when the finding concerns one. */
  delegate: number | null;
  location: string;
  message: string;
  hint: string;
}

export function diag(
  severity: Severity,
  code: string,
  location: string,
  message: string,
  hint: string,
  where: { method?: string | null; delegate?: number | null } = {},
): Diagnostic {
  // Messages and locations embed names from the program: bounded, so many findings about one long name stay small.
  chargeReport(Math.min(location.length, 600) + Math.min(message.length, 1200) + hint.length + 64, location.slice(0, 200));
  return { severity, code, method: where.method ?? null, delegate: where.delegate ?? null, location: boundedText(location, 600), message: boundedText(message, 1200), hint };
}

export const errorsIn = (ds: Diagnostic[]) => ds.filter((d) => d.severity === 'error');
export const warningsIn = (ds: Diagnostic[]) => ds.filter((d) => d.severity === 'warning');
