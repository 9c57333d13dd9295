// What `trtx verify` runs: the program as it is or, with zero-copy KV asked
// for, a staged program and its zero-copy twin (derived in memory by the same
// pass as `trtx rewrite --zero-copy-kv`, or given).

import { join } from 'node:path';
import type { PteFile } from '../pte/open.js';
import { writeFromSource } from '../pte/copy.js';
import { applyZeroCopyKv, readTrtBlobs } from '../passes/zero-copy.js';
import { unsoundInput } from '../pipeline/precondition.js';

export interface Variant {
  name: 'as-is' | 'staged' | 'zero-copy';
  path: string;
}

export type VerifyMode = 'as-is' | 'staged-vs-zero-copy' | 'zero-copy';

/** Cache buffer names and, for a staged program, its zero-copy twin written to `dir`. */
export async function deriveVariants(pte: PteFile, dir: string, zeroCopyKv: boolean, given?: string): Promise<{ variants: Variant[]; caches: string[]; mode: VerifyMode }> {
  if (!zeroCopyKv) return { variants: [{ name: 'as-is', path: pte.path }], caches: [], mode: 'as-is' };
  const unsound = unsoundInput(pte);
  if (unsound) throw unsound.error;
  const blobs = await readTrtBlobs(pte);
  const twin = structuredClone(pte.program);
  const result = applyZeroCopyKv(twin, blobs);
  // The pass names buffers as `fqn (%index)`; reports name them by fqn.
  const caches = [...new Set([...result.rewritten, ...result.already].flatMap((d) => d.buffers).map((b) => b.replace(/ \(%[0-9]+\)$/, '')))];
  if (!result.changed) return { variants: [{ name: 'zero-copy', path: pte.path }], caches, mode: 'zero-copy' };
  const twinPath = given ?? join(dir, 'zero-copy-twin.pte');
  if (!given) {
    const original = pte.program;
    pte.program = twin;
    try {
      await writeFromSource(pte, twinPath);
    } finally {
      pte.program = original;
    }
  }
  return {
    variants: [
      { name: 'staged', path: pte.path },
      { name: 'zero-copy', path: twinPath },
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
