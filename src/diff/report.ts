// What `trtx diff` reports, as data (schemas/diff.schema.json, generated
// from report-json.ts). Every list holds changes only: two programs that
// mean the same thing give empty lists and `equivalent: true`, whatever
// their bytes.

import type { z } from 'zod';
import type * as json from './report-json.js';

// The types are the zod schemas' (report-json.ts), which the JSON Schema is generated from.
export type Scalar = z.infer<typeof json.Scalar>;
export type FieldChange = z.infer<typeof json.FieldChange>;
export type InstructionChange = z.infer<typeof json.InstructionChange>;
export type DelegateArgChange = z.infer<typeof json.DelegateArgChange>;
export type SpecValue = z.infer<typeof json.SpecValue>;
export type SpecChange = z.infer<typeof json.SpecChange>;
export type DelegateDiff = z.infer<typeof json.DelegateDiff>;
export type ArenaState = z.infer<typeof json.ArenaState>;
export type ArenaChange = z.infer<typeof json.ArenaChange>;
export type TensorPlace = z.infer<typeof json.TensorPlace>;
export type TensorChange = z.infer<typeof json.TensorChange>;
export type IoChange = z.infer<typeof json.IoChange>;
export type StagingCounts = z.infer<typeof json.StagingCounts>;
export type MethodDiff = z.infer<typeof json.MethodDiff>;
export type SegmentChange = z.infer<typeof json.SegmentChange>;
export type DiffReport = z.infer<typeof json.DiffReport>;

export function methodChangeCount(m: MethodDiff): number {
  if (m.change !== 'changed') return 1;
  const delegates = m.delegates.reduce(
    (n, d) => n + (d.change !== 'changed' ? 1 : (d.calls ? 1 : 0) + d.args.length + d.compile_specs.length + d.blob.length),
    0,
  );
  return m.io.length + m.instructions.length + delegates + m.arenas.length + m.tensors.length + (m.staging ? 1 : 0);
}

export function changeCount(r: Pick<DiffReport, 'header' | 'program' | 'segments' | 'methods'>): number {
  return (
    r.header.length +
    r.program.length +
    (r.segments.count ? 1 : 0) +
    r.segments.sizes.length +
    r.methods.reduce((n, m) => n + methodChangeCount(m), 0)
  );
}
