// `trtx diff A B --html`: both programs' memory plans side by side, method
// by method, drawn to one scale per method so that a cache moved from a host
// arena into a device arena, and the staging arrows that disappear with it,
// are seen at a glance; above them what `trtx diff` found (bytes moved per
// execution before and after, tensors that moved, arenas that changed).

import type { DiffReport, MethodDiff, TensorPlace } from '../diff/report.js';
import { bytes, esc, exactBytes, idPart } from './escape.js';
import { LEGEND, largestArena, methodView, page } from './page.js';
import type { MemoryPlan, MethodPlan } from '../inspect/memory-plan.js';

/** `zero-copy`, `staged` or '' from a method's TensorRT delegates, for the side headings. */
export function planKind(m: MethodPlan | undefined): string {
  if (!m) return '';
  if (m.delegates.some((d) => d.zeroCopy)) return 'zero-copy';
  if (m.delegates.some((d) => d.aliases.length > 0)) return 'staged';
  return '';
}

const placeText = (p: TensorPlace | null) =>
  p === null
    ? '-'
    : `${p.dtype}[${p.shape.join(', ')}] ${p.arena === null ? 'not planned' : `arena ${p.arena} + ${p.offset}`} (${p.device})`;

function changeSummary(md: MethodDiff | undefined): string {
  if (!md) return '<p>No differences in this method.</p>';
  if (md.change !== 'changed') return `<p>Method ${md.change} in B.</p>`;
  const parts: string[] = [];
  if (md.staging) {
    const b = md.staging.before;
    const a = md.staging.after;
    const before = b.host_to_device_bytes + b.device_to_host_bytes;
    const after = a.host_to_device_bytes + a.device_to_host_bytes;
    const pct = before > 0 ? ` (${(((before - after) / before) * 100).toFixed(1)}% less)` : '';
    parts.push(
      `<p>Bytes moved per execution: <strong>${esc(exactBytes(before))}</strong> → <strong>${esc(exactBytes(after))}</strong>${esc(after < before ? pct : '')}; ` +
        `host→device ${esc(bytes(b.host_to_device_bytes))} → ${esc(bytes(a.host_to_device_bytes))}, device→host ${esc(bytes(b.device_to_host_bytes))} → ${esc(bytes(a.device_to_host_bytes))}, copies ${b.copies} → ${a.copies}.</p>`,
    );
  }
  if (md.tensors.length) {
    const rows = md.tensors
      .map(
        (t) =>
          `<tr><th scope="row">${esc(t.name)}</th><td>${esc(t.change === 'changed' ? (t.moved ? 'moved' : 'retyped') : t.change)}</td><td>${esc(placeText(t.before))}</td><td>${esc(placeText(t.after))}</td></tr>`,
      )
      .join('\n');
    parts.push(
      `<table><caption>Named tensors that changed place</caption><thead><tr><th scope="col">tensor</th><th scope="col">change</th><th scope="col">in A</th><th scope="col">in B</th></tr></thead><tbody>\n${rows}\n</tbody></table>`,
    );
  }
  if (md.arenas.length) {
    const rows = md.arenas
      .map(
        (x) =>
          `<tr><th scope="row">arena ${x.index}</th><td>${esc(x.before ? `${bytes(x.before.size)} on ${x.before.device}` : '-')}</td><td>${esc(x.after ? `${bytes(x.after.size)} on ${x.after.device}` : '-')}</td></tr>`,
      )
      .join('\n');
    parts.push(
      `<table><caption>Arenas that changed</caption><thead><tr><th scope="col">arena</th><th scope="col">in A</th><th scope="col">in B</th></tr></thead><tbody>\n${rows}\n</tbody></table>`,
    );
  }
  const other = md.instructions.length + md.delegates.length + md.io.length;
  if (other)
    parts.push(
      `<p>${other} other change${other === 1 ? '' : 's'} (instructions, delegate arguments and specs, signature): <code>trtx diff</code> lists them.</p>`,
    );
  return parts.join('\n') || '<p>No differences in this method.</p>';
}

function side(label: string, file: string, m: MethodPlan | undefined, id: string, scale: number): string {
  const body = m ? methodView(m, id, scale, 4, { width: 620, collapse: true }) : '<p>This program has no such method.</p>';
  return `<section class="side" aria-labelledby="${id}-h"><h3 id="${id}-h">${esc(label)}: <code>${esc(file)}</code></h3>\n${body}\n</section>`;
}

export function renderDiffHtml(a: MemoryPlan, b: MemoryPlan, diff: DiffReport): string {
  const names = [...new Set([...a.methods.map((m) => m.name), ...b.methods.map((m) => m.name)])];
  const sections = names.map((name, i) => {
    const ma = a.methods.find((m) => m.name === name);
    const mb = b.methods.find((m) => m.name === name);
    const id = `m${i}-${idPart(name)}`;
    const scale = largestArena(ma, mb);
    const ka = planKind(ma);
    const kb = planKind(mb);
    return [
      `<section aria-labelledby="${id}-h"><h2 id="${id}-h">method ${esc(name)}${ka && kb && ka !== kb ? `: ${esc(ka)} vs ${esc(kb)}` : ''}</h2>`,
      changeSummary(diff.methods.find((m) => m.name === name)),
      LEGEND,
      `<div class="sides">`,
      side(`A${ka ? ` (${ka})` : ''}`, a.file, ma, `a-${id}`, scale),
      side(`B${kb ? ` (${kb})` : ''}`, b.file, mb, `b-${id}`, scale),
      `</div></section>`,
    ].join('\n');
  });
  return page({
    title: `trtx diff: ${a.file} vs ${b.file}`,
    heading: `Memory plans side by side: <code>${esc(a.file)}</code> (A) and <code>${esc(b.file)}</code> (B)`,
    meta: `${diff.equivalent ? 'no differences in meaning' : `${diff.changes} change${diff.changes === 1 ? '' : 's'} (trtx diff)`}; each method drawn to one scale for both sides`,
    nav: names.map((name, i) => ({ href: `m${i}-${idPart(name)}-h`, text: `method ${name}` })),
    main: sections.join('\n') || '<p>No methods.</p>',
  });
}
