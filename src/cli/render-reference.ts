// The comparison with eager PyTorch in `trtx verify`'s text output: one line
// saying what was compared (or why nothing was), then a compact table of the
// numbers, one row per run and output.

import type { VerifyReference } from '../verify/reference.js';
import type { styler } from './style.js';
import { itemAt } from '../util/present.js';

type Styler = ReturnType<typeof styler>;

const num = (x: number | null) => (x === null ? 'inf' : x === 0 ? '0' : x.toExponential(2));

export function renderReference(r: VerifyReference, s: Styler): string[] {
  const lines = [`  ${r.note}`];
  if (!r.comparisons.length) return lines;
  const tol =
    r.atol === null && r.rtol === null
      ? 'tolerance per dtype (float32/float64 1e-4, float16 1e-2, bfloat16 5e-2; integers and bool exact)'
      : `atol ${r.atol ?? 'per dtype'}, rtol ${r.rtol ?? 'per dtype'} for floating outputs; integers and bool exact`;
  lines.push(`    ${tol}`);
  const rows = r.comparisons.map((c) => [
    c.run,
    `${c.method}[${c.output}]`,
    c.shape ? `${c.dtype}[${c.shape.join(',')}]` : c.dtype,
    num(c.max_abs),
    num(c.max_rel),
    c.ok
      ? 'ok'
      : c.error
        ? `FAIL ${c.error}`
        : `FAIL ${c.mismatched}/${c.elements} over; step ${c.worst?.step} element ${c.worst?.index}: ${c.worst?.actual} vs ${c.worst?.expected}`,
  ]);
  const head = ['run', 'output', 'dtype', 'max abs', 'max rel', 'result'];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((row) => itemAt(row, i, 'a comparison row').length)));
  const fmt = (row: string[]) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(itemAt(width, i, 'the column widths')))).join('  ');
  lines.push(`    ${s('dim', fmt(head))}`);
  for (const row of rows) lines.push(`    ${row[5] === 'ok' ? fmt(row) : s('red', fmt(row))}`);
  return lines;
}
