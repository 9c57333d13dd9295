// What `trtx verify` runs: the program as it is or, with zero-copy KV asked
// for, a staged program and its zero-copy twin: derived by the rewrite
// pipeline (src/pipeline/, the request `trtx rewrite --zero-copy-kv` makes,
// on a copy of the program, checked under the same runtime rules) or given.
// A derived twin is written into verify's private temporary folder as a
// private target (no writer lock, no sweep: nobody else can see it) for the
// runner, and read from memory (program-files.ts), never reopened.

import { join } from 'node:path';
import type { CheckResult } from '../checks/run.js';
import type { RuntimeRules } from '../checks/runtime-rules.js';
import { isZeroCopyReport } from '../pipeline/request.js';
import { runPipeline } from '../pipeline/run.js';
import type { PteFile } from '../pte/open.js';
import type { ProgramFiles } from './program-files.js';
import { present } from '../util/present.js';

export interface Variant {
  name: 'as-is' | 'staged' | 'zero-copy';
  path: string;
  /** What the runner runs when it is not `path` itself: a copy naming unnamed buffers (name-buffers.ts). */
  runPath?: string;
  /** The check of a twin derived here (its file is written only when it passes). */
  checked?: CheckResult;
}

/** At least one: the program as it is, or the staged program and its zero-copy twin (the primary run is the last). */
export type Variants = [Variant, ...Variant[]];

export type VerifyMode = 'as-is' | 'staged-vs-zero-copy' | 'zero-copy';

/** Cache buffer names and, for a staged program, its zero-copy twin written to `dir` (and recorded in `programs`). */
export async function deriveVariants(
  pte: PteFile,
  programs: ProgramFiles,
  dir: string,
  zeroCopyKv: boolean,
  given: string | undefined,
  runtime: RuntimeRules,
  strict = false,
): Promise<{ variants: Variants; caches: string[]; mode: VerifyMode; note?: string }> {
  if (!zeroCopyKv) return { variants: [{ name: 'as-is', path: pte.path }], caches: [], mode: 'as-is' };
  const twinPath = given ?? join(dir, 'zero-copy-twin.pte');
  const outcome = await runPipeline(pte, {
    request: { zeroCopyKv: { strict } },
    runtime,
    copy: true,
    // A given twin is only compared with; a derived one is written when it changed something.
    output: given ? null : { path: twinPath, command: 'verify (zero-copy twin)', skipUnchanged: true, private: true },
  });
  // The request asked for zero-copy KV, so the pipeline ran that pass and reports it.
  const zc = present(outcome.reports.find(isZeroCopyReport), 'the zero-copy pass report');
  // No engine declares a KV cache: nothing to make zero-copy; the program runs as it is.
  if (zc.details.no_kv_cache)
    return {
      variants: [{ name: 'as-is', path: pte.path }],
      caches: [],
      mode: 'as-is',
      note: zc.lines[0] ?? 'no KV cache to make zero-copy',
    };
  // The pass names buffers as `fqn (%index)`; reports name them by fqn.
  const caches = [
    ...new Set([...zc.details.rewritten, ...zc.details.already].flatMap((d) => d.buffers).map((b) => b.replace(/ \(%[0-9]+\)$/, ''))),
  ];
  if (!outcome.changed) return { variants: [{ name: 'zero-copy', path: pte.path }], caches, mode: 'zero-copy' };
  if (!given && !outcome.refused) programs.made(twinPath, pte, outcome.program);
  return {
    variants: [
      { name: 'staged', path: pte.path },
      { name: 'zero-copy', path: twinPath, checked: given ? undefined : outcome.checked },
    ],
    caches,
    mode: 'staged-vs-zero-copy',
  };
}

export function decodeMethods(pte: PteFile): string[] {
  const names = pte.program.executionPlan.map((p) => p.name ?? '');
  // A KV decoder's state machine is its decode method, run step after step.
  return names.includes('decode') ? ['decode'] : names;
}
