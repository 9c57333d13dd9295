// The text side of a method's drawing: arenas, every planned tensor, the
// staging copies and the delegates' bindings and aliases, as real tables
// (captions, header cells with scope) that a screen reader can walk.

import { bytes, esc, exactBytes } from './escape.js';
import { tensorId, tensorKind } from './drawing.js';
import type { MethodPlan, PlanDelegate } from '../inspect/memory-plan.js';

function table(caption: string, head: string[], rows: string[][], attrs = ''): string {
  const th = head.map((h) => `<th scope="col">${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.join('')}</tr>`).join('\n');
  return `<table${attrs}><caption>${esc(caption)}</caption><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

const td = (text: string | number, cls = '') => `<td${cls ? ` class="${cls}"` : ''}>${esc(text)}</td>`;
const num = (text: string | number) => td(text, 'num');

export function arenaTable(m: MethodPlan): string {
  const rows = m.arenas.map((a) => {
    const used = a.tensors.reduce((end, t) => Math.max(end, t.offset + t.bytes), 0);
    return [`<th scope="row">arena ${a.index}</th>`, td(a.device), num(exactBytes(a.size)), num(exactBytes(used)), num(a.tensors.length)];
  });
  return table(`Arenas of ${m.name}`, ['arena', 'device', 'size', 'highest byte used', 'tensors'], rows);
}

export function tensorTable(m: MethodPlan, prefix: string): string {
  const rows: string[] = [];
  for (const a of m.arenas) {
    for (const t of a.tensors) {
      const id = tensorId(prefix, t);
      rows.push(
        `<tr id="${id}-row" data-box="${id}"><th scope="row"><span class="sw t-${tensorKind(t)}" aria-hidden="true"></span>${esc(t.label)}</th>${td(`%${t.value}`)}${td(`${t.dtype}[${t.shape.join(', ')}]`)}${num(exactBytes(t.bytes))}${td(`arena ${t.arena}`)}${num(t.offset)}${td(t.device)}${td(t.roles.join('; ') || '-')}</tr>`,
      );
    }
  }
  const th = ['tensor', 'value', 'type', 'bytes', 'arena', 'offset', 'device', 'roles'].map((h) => `<th scope="col">${h}</th>`).join('');
  const note = m.unplanned
    ? ` (${m.unplanned} tensor value${m.unplanned === 1 ? '' : 's'} not memory-planned: constants or unplanned inputs)`
    : '';
  return `<table class="tensors"><caption>Planned tensors of ${esc(m.name)}${esc(note)}</caption><thead><tr>${th}</tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table>`;
}

export function copyTable(m: MethodPlan): string {
  if (m.copies.length === 0) return `<p>No host&lt;-&gt;device staging copies in ${esc(m.name)}.</p>`;
  const rows = m.copies.map((c) => [
    `<th scope="row">${esc(c.where)}</th>`,
    td(c.direction),
    td(c.fromLabel),
    td(c.toLabel),
    num(exactBytes(c.bytes)),
  ]);
  return table(`Staging copies of ${m.name}, per execution`, ['instruction', 'direction', 'from', 'to', 'bytes'], rows);
}

function delegateSection(m: MethodPlan, d: PlanDelegate, level: number): string {
  const h = `h${level}`;
  const facts = [
    `${d.calls} call${d.calls === 1 ? '' : 's'}`,
    d.targetDevice ? `target_device ${d.targetDevice}` : null,
    d.zeroCopy ? 'zero-copy KV (aliased outputs elided)' : d.aliases.length ? 'staged (aliased outputs returned and copied back)' : null,
  ].filter(Boolean);
  const parts = [`<${h}>delegate ${d.index}: ${esc(d.backend)}</${h}>`, `<p>${esc(facts.join(', '))}</p>`];
  if (d.error) parts.push(`<p class="error">blob not readable: ${esc(d.error)}</p>`);
  if (d.bindings.length) {
    const rows = d.bindings.map((b) => [
      `<th scope="row">${esc(b.binding)}</th>`,
      td(b.direction),
      td(b.value === null ? 'elided (written through its aliased input)' : `${b.label} (%${b.value})`),
    ]);
    parts.push(table(`Bindings of ${m.name} delegate ${d.index}`, ['binding', 'direction', 'fed / returned value'], rows));
  }
  if (d.aliases.length) {
    const rows = d.aliases.map((a) => [
      `<th scope="row">${esc(a.output)}</th>`,
      td(a.input),
      td(a.kind),
      td(a.elided ? 'elided: zero-copy' : 'returned: staged'),
    ]);
    parts.push(table(`Aliases of ${m.name} delegate ${d.index}`, ['output', 'aliased input', 'kind', 'at run time'], rows));
  }
  return parts.join('\n');
}

export function delegateSections(m: MethodPlan, level: number): string {
  if (m.delegates.length === 0) return `<p>No delegates in ${esc(m.name)}.</p>`;
  return m.delegates.map((d) => delegateSection(m, d, level)).join('\n');
}

/** The per-execution traffic line every method view starts with. */
export function stagingSummary(m: MethodPlan): string {
  const s = m.staging;
  return (
    `<dl class="totals"><div><dt>host→device per execution</dt><dd data-total="h2d">${esc(exactBytes(s.host_to_device_bytes))}</dd></div>` +
    `<div><dt>device→host per execution</dt><dd data-total="d2h">${esc(exactBytes(s.device_to_host_bytes))}</dd></div>` +
    `<div><dt>staging copies</dt><dd>${s.copies}</dd></div>` +
    `<div><dt>arenas</dt><dd>${m.arenas.map((a) => `${esc(bytes(a.size))} on ${esc(a.device)}`).join(', ') || 'none'}</dd></div></dl>`
  );
}
