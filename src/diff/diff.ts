// `trtx diff`: what differs between two programs by meaning. Methods are
// matched by name; inside a method every comparison goes through the decoded
// model and describes values by meaning (describe.ts), so byte-identical
// files and a canonical re-encoding both give an empty report.

import type { PteFile } from '../pte/open.js';
import { TrtxError } from '../util/errors.js';
import { diffDelegates } from './delegates.js';
import { diffInstructions } from './instructions.js';
import { diffArenas, diffSignature, diffStaging, diffTensors } from './layout.js';
import { pairBy } from './match.js';
import { diffHeader, diffProgramFields, diffSegments } from './program.js';
import { changeCount, methodChangeCount, type DiffReport, type MethodDiff } from './report.js';
import { methodViews, type MethodView } from './view.js';

export interface DiffOptions {
  /** Only this method (it must exist in at least one program); program-wide sections are then left empty. */
  method?: string;
}

const emptyMethod = (name: string, change: MethodDiff['change']): MethodDiff => ({
  name,
  change,
  io: [],
  instructions: [],
  delegates: [],
  arenas: [],
  tensors: [],
  staging: null,
});

export function diffMethod(a: MethodView, b: MethodView): MethodDiff {
  return {
    name: a.name,
    change: 'changed',
    io: diffSignature(a, b),
    instructions: diffInstructions(a, b),
    delegates: diffDelegates(a, b),
    arenas: diffArenas(a, b),
    tensors: diffTensors(a, b),
    staging: diffStaging(a, b),
  };
}

export async function diffPte(a: PteFile, b: PteFile, opts: DiffOptions = {}): Promise<DiffReport> {
  let viewsA = await methodViews(a);
  let viewsB = await methodViews(b);
  if (opts.method !== undefined) {
    viewsA = viewsA.filter((v) => v.name === opts.method);
    viewsB = viewsB.filter((v) => v.name === opts.method);
    if (viewsA.length === 0 && viewsB.length === 0) {
      throw new TrtxError('DIFF_METHOD_UNKNOWN', '--method', `no method named ${JSON.stringify(opts.method)} in either program`, {
        hint: 'run `trtx inspect FILE` to list the methods',
      });
    }
  }
  const { both, onlyA, onlyB } = pairBy(viewsA, viewsB, (v) => v.name);
  const methods: MethodDiff[] = [];
  for (const [x, y] of both) {
    const m = diffMethod(x, y);
    if (methodChangeCount(m) > 0) methods.push(m);
  }
  for (const x of onlyA) methods.push(emptyMethod(x.name, 'removed'));
  for (const y of onlyB) methods.push(emptyMethod(y.name, 'added'));

  // One method asked for: the program-wide facts (segments especially, which
  // every method's delegates share) would speak of the others too.
  const whole = opts.method === undefined;
  const parts = {
    header: whole ? diffHeader(a, b) : [],
    program: whole ? diffProgramFields(a, b) : [],
    segments: whole ? diffSegments(a, b) : { count: null, sizes: [] },
    methods,
  };
  const changes = changeCount(parts);
  return { schema: 'trtx.diff/1', a: a.path, b: b.path, method: opts.method ?? null, equivalent: changes === 0, changes, ...parts };
}
