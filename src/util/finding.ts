// The shape of a finding: what `trtx check` reports (checks/diagnostic.ts
// makes them) and what a refusal carries when a check refused it (its
// TrtxError's `diagnostics`, in the --json error document). Declared here,
// below both, so an error can carry findings without importing the checks.

import type { Code } from '../codes/index.js';

export type Severity = 'error' | 'warning' | 'info';

export interface Finding {
  severity: Severity;
  code: Code;
  /** Method name, or null for program-level findings. */
  method: string | null;
  /** Delegate index within the method, when the finding concerns one. */
  delegate: number | null;
  location: string;
  message: string;
  hint: string;
}
