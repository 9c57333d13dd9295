// Runs every check over one opened program and orders what they find: by
// method (program-level findings first, then methods in file order), then
// delegate (method-level first), then location.
//
// CHECKS is the list `trtx check` runs. A new family of checks is a `Check`
// function appended here (the zero-copy KV rules go in after checkTensorRT,
// then what the program needs from the runtime that executes it).

import type { PteFile } from '../pte/open.js';
import { planName } from '../pte/tensor.js';
import { buildCheckContext, type Check, type CheckContext, type CheckOptions } from './context.js';
import { diag, type Diagnostic } from './diagnostic.js';
import { checkProgramStructure, INDEX_CODES } from './structure.js';
import { checkTensorRT } from './tensorrt.js';
import { checkStandinEngines } from './standin-engines.js';
import { checkZeroCopy } from './zero-copy.js';
import { checkRuntimeHazards } from './runtime-hazards.js';
import { pushAll } from '../util/arrays.js';

export const CHECKS: Check[] = [checkProgramStructure, checkTensorRT, checkStandinEngines, checkZeroCopy, checkRuntimeHazards];

export interface CheckSummary {
  errors: number;
  warnings: number;
  infos: number;
  /** "2 errors, 1 warning" */
  line: string;
}

export interface CheckResult {
  diagnostics: Diagnostic[];
  summary: CheckSummary;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function summarizeDiagnostics(diagnostics: readonly Diagnostic[]): CheckSummary {
  const count = (s: Diagnostic['severity']) => diagnostics.filter((d) => d.severity === s).length;
  const errors = count('error');
  const warnings = count('warning');
  const infos = count('info');
  const line = [plural(errors, 'error'), plural(warnings, 'warning'), ...(infos ? [plural(infos, 'note')] : [])].join(', ');
  return { errors, warnings, infos, line };
}

const collator = new Intl.Collator('en', { numeric: true });

/** Sorts in place into report order; `methods` lists method names in file order. */
export function orderDiagnostics(diagnostics: Diagnostic[], methods: readonly string[]): Diagnostic[] {
  const rank = (m: string | null) => (m === null ? -1 : methods.indexOf(m) === -1 ? methods.length : methods.indexOf(m));
  return diagnostics.sort(
    (a, b) =>
      rank(a.method) - rank(b.method) ||
      (a.delegate ?? -1) - (b.delegate ?? -1) ||
      collator.compare(a.location, b.location) ||
      collator.compare(a.code, b.code),
  );
}

/** Two checks may reach the same fault by different roads; report it once. */
function dedupe(diagnostics: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.severity}\0${d.code}\0${d.location}\0${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export async function runChecks(pte: PteFile, options: CheckOptions = {}, checks: readonly Check[] = CHECKS): Promise<CheckResult> {
  const { ctx, blobDiagnostics } = await buildCheckContext(pte, options);
  return runChecksIn(ctx, blobDiagnostics, checks);
}

/** runChecks over a context already built (buildCheckContext), for callers that use its parsed blobs as well. */
export async function runChecksIn(
  ctx: CheckContext,
  blobDiagnostics: readonly Diagnostic[],
  checks: readonly Check[] = CHECKS,
): Promise<CheckResult> {
  const { pte, options } = ctx;
  const found: Diagnostic[] = [...blobDiagnostics];
  for (const check of checks) {
    // The zero-copy rules follow the dataflow (values, operators, a copy's
    // arguments by position): on dangling indices they do not run, and say
    // so where they had something to check.
    if (check === checkZeroCopy && found.some((d) => d.severity === 'error' && INDEX_CODES.has(d.code))) {
      if (options.requireZeroCopyKv || ctx.trt.some((t) => t.blob.metadata.aliased_io.length > 0)) {
        found.push(
          diag(
            ctx.pte.reportBudget,
            'info',
            'CHECK_SKIPPED',
            'program',
            'the zero-copy KV checks did not run: they follow the indices the errors above leave dangling',
            'fix the structural errors first (re-export the program)',
          ),
        );
      }
      continue;
    }
    pushAll(found, await check(ctx));
  }
  const methods = pte.program.executionPlan.map((p, i) => planName(p, i));
  const diagnostics = orderDiagnostics(dedupe(found), methods);
  return { diagnostics, summary: summarizeDiagnostics(diagnostics) };
}
