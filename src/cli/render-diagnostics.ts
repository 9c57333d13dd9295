// Diagnostics as people read them, shared by the commands that show
// findings (check, rewrite, verify): grouped by method, then delegate, each
// with its code, location, message and hint.

import type { Diagnostic } from '../checks/diagnostic.js';
import type { Program } from '../pte/model.js';
import { planName } from '../pte/tensor.js';
import type { Ctx } from './context.js';
import { styler } from './style.js';

const SEVERITY_STYLE = { error: 'red', warning: 'yellow', info: 'cyan' } as const;

/** Diagnostics grouped by method, then delegate; `program` names delegates in headings. */
export function renderDiagnostics(diagnostics: readonly Diagnostic[], program: Program | null, ctx: Pick<Ctx, 'color'>): string[] {
  const s = styler(ctx);
  const lines: string[] = [];
  let group: string | null = null;
  let sub: string | null = null;
  for (const d of diagnostics) {
    const g = d.method === null ? 'program' : `method ${d.method}`;
    if (g !== group) {
      lines.push(s('bold', g));
      group = g;
      sub = null;
    }
    let indent = '  ';
    if (d.delegate !== null) {
      const plan = program?.executionPlan.find((p, i) => planName(p, i) === d.method);
      const id = plan?.delegates[d.delegate]?.id;
      const label = `delegate ${d.delegate}${id ? ` (${id})` : ''}`;
      if (label !== sub) {
        lines.push(`  ${s('bold', label)}`);
        sub = label;
      }
      indent = '    ';
    } else if (sub !== null) {
      sub = null;
    }
    lines.push(`${indent}${s(SEVERITY_STYLE[d.severity], d.severity)} ${s('bold', d.code)}  ${d.location}`);
    lines.push(`${indent}  ${d.message}`);
    lines.push(`${indent}  ${s('dim', `hint: ${d.hint}`)}`);
  }
  return lines;
}
