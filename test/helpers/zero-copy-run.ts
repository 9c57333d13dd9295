// Runs the zero-copy rewrite on a fixture in memory, the way `trtx rewrite`
// runs it on a file: encode the spec to `.pte` bytes, read the TensorRT
// blobs back, rewrite, and encode the result again (so what is inspected is
// what a file would hold). The result is seen in the spec's names.
import { buildProgram, type BuiltProgram } from '../../src/examples/builder.js';
import type { ProgramSpec } from '../../src/examples/spec.js';
import type { PteFile } from '../../src/pte/open.js';
import { applyZeroCopyKv, readTrtBlobs, type ZeroCopyOptions, type ZeroCopyResult } from '../../src/passes/zero-copy.js';
import { buildCheckContext } from '../../src/checks/context.js';
import { runChecks } from '../../src/checks/run.js';
import { checkZeroCopy } from '../../src/checks/zero-copy.js';
import { encodePte, pteFromBytes } from './memory-pte.js';
import { viewMethod, type MethodView } from './fixture-view.js';

export interface Rewritten {
  /** The rewritten program, re-read from its bytes. */
  pte: PteFile;
  result: ZeroCopyResult;
  /** The rewritten program indexed in the source spec's names. */
  built: BuiltProgram;
  view(method: string): MethodView;
}

/** The spec's program as a PteFile, plus its build (names). */
export function source(spec: ProgramSpec): { built: BuiltProgram; pte: PteFile } {
  const built = buildProgram(spec);
  return { built, pte: pteFromBytes(encodePte(built.program, built.segments)) };
}

export async function rewriteSpec(spec: ProgramSpec, opts: ZeroCopyOptions = {}): Promise<Rewritten> {
  const { built, pte } = source(spec);
  const result = applyZeroCopyKv(pte.program, await readTrtBlobs(pte), opts);
  return rewritten(built, pte, result);
}

/** Re-reads `pte.program` (rewritten in place) from its bytes and names its values after `built`. */
export function rewritten(built: BuiltProgram, pte: PteFile, result: ZeroCopyResult): Rewritten {
  const again = pteFromBytes(encodePte(pte.program, built.segments));
  const index = new Map(
    [...built.index].map(([name, idx]) => {
      const map = result.valueMaps.get(idx.plan);
      if (!map) return [name, idx];
      const names: (string | null)[] = [];
      idx.names.forEach((n, i) => {
        if (map[i] >= 0) names[map[i]] = n;
      });
      return [name, { ...idx, names }];
    }),
  );
  const view: BuiltProgram = { program: again.program, segments: built.segments, index };
  return { pte: again, result, built: view, view: (m) => viewMethod(view, m) };
}

/** Every check's errors on a program. */
export async function errorCodes(pte: PteFile, options = {}): Promise<string[]> {
  const { diagnostics } = await runChecks(pte, options);
  return diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);
}

/** The zero-copy family's findings on a spec (or a PteFile). */
export async function zeroCopyFindings(input: ProgramSpec | PteFile, options = {}) {
  const pte = 'methods' in input ? source(input).pte : input;
  const { ctx, blobDiagnostics } = await buildCheckContext(pte, options);
  if (blobDiagnostics.length) throw new Error(`blob diagnostics: ${JSON.stringify(blobDiagnostics)}`);
  return checkZeroCopy(ctx);
}
