// What a set of per-engine weight-streaming budgets can add up to. The budget
// applies to each engine on its own and every delegate of a loaded method is
// initialized together, so N engines can hold N budgets resident at once.
// One wording for `trtx check` and `trtx rewrite --budget`.

import { formatIEC } from '../util/size.js';

export interface EngineBudget {
  /** Method the engine belongs to. */
  method: string;
  budget: bigint;
}

export interface ResidentBudget {
  engines: number;
  total: bigint;
  /** "3 engines x 8 GiB = 24 GiB may be resident" */
  line: string;
}

export function residentBudget(entries: readonly EngineBudget[]): ResidentBudget {
  const total = entries.reduce((n, e) => n + e.budget, 0n);
  const n = entries.length;
  const uniform = entries.every((e) => e.budget === entries[0]?.budget);
  const terms = uniform
    ? `${n} engine${n === 1 ? '' : 's'} x ${formatIEC(entries[0]?.budget ?? 0n)}`
    : `${n} engines, ${entries.map((e) => formatIEC(e.budget)).join(' + ')}`;
  const methods = new Set(entries.map((e) => e.method)).size;
  // Methods load separately; the sum is only reached with all of them loaded.
  const when = methods > 1 ? ` when all ${methods} methods are loaded` : '';
  return { engines: n, total, line: `${terms} = ${formatIEC(total)} may be resident${when}` };
}
