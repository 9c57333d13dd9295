// The shape of a finding: what `trtx check` reports (checks/diagnostic.ts
// makes them) and what a refusal carries when a check refused it (its
// TrtxError's `diagnostics`, in the --json error document). Declared here,
// below both, so an error can carry findings without importing the checks.

import type { FindingJson } from './finding-schema.js';

export type Severity = FindingJson['severity'];

/** As the --json documents carry it (src/util/finding-schema.ts). */
export type Finding = FindingJson;
