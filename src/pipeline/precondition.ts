// The passes rewrite a program by following its indices (values, operators,
// delegates, a copy's arguments by position); they run only on a program
// whose structure is sound. A program that is not is refused before any
// pass touches it, with the structural findings, as `trtx check` reports
// them.

import { errorsIn, type Diagnostic } from '../checks/diagnostic.js';
import { orderDiagnostics } from '../checks/run.js';
import { checkProgramStructure } from '../checks/structure.js';
import { planName } from '../pte/tensor.js';
import type { PteFile } from '../pte/open.js';
import { TrtxError } from '../util/errors.js';

export interface UnsoundInput {
  error: TrtxError;
  diagnostics: Diagnostic[];
}

/** The refusal for `pte` when its structure fails a check, else null. */
export function unsoundInput(pte: PteFile): UnsoundInput | null {
  const methods = pte.program.executionPlan.map((p, i) => planName(p, i));
  const diagnostics = orderDiagnostics(errorsIn(checkProgramStructure({ pte })), methods);
  const [first] = diagnostics;
  if (first === undefined) return null;
  const n = diagnostics.length;
  const error = new TrtxError(
    'PASS_INPUT_UNSOUND',
    first.location,
    `the input fails ${n} structural check${n === 1 ? '' : 's'} (first: ${first.code}: ${first.message}); no pass runs on it and nothing was written`,
    { hint: `run \`trtx check ${pte.path}\` for every finding; re-export the program`, diagnostics },
  );
  return { error, diagnostics };
}
