// A rewrite pass: a change to the decoded program, made in place, that says
// what it changed. The rewrite pipeline (src/pipeline/) runs the passes a
// request asks for, in order, then checks the result and writes it.

import type { Program } from '../pte/model.js';

/** The passes there are, by the name the --json documents give them. */
export type PassName = 'budget' | 'zero-copy-kv';

export interface PassReport<D = unknown> {
  pass: PassName;
  /** Whether any byte of meaning changed. */
  changed: boolean;
  /** One line per change, for people. */
  lines: string[];
  /** Things to know that are not errors (e.g. the multi-engine budget total). */
  warnings: string[];
  /** The same changes as data, for --json. */
  details: D;
}

export type Pass = (program: Program) => PassReport;
