// `trtx inspect --html`: one self-contained page (inline CSS, SVG and
// script; no request leaves it) with each method's memory plan drawn to
// scale and the same facts in tables. Landmarks: banner, navigation, main,
// contentinfo; headings: the file (h1), each method (h2), its parts (h3).

import { TRTX_VERSION } from '../util/version.js';
import { ARROW_DEFS, drawMethod } from './drawing.js';
import { bytes, esc, idPart } from './escape.js';
import type { MemoryPlan, MethodPlan } from '../inspect/memory-plan.js';
import { SCRIPT } from './script.js';
import { STYLE } from './style.js';
import { arenaTable, copyTable, delegateSections, stagingSummary, tensorTable } from './tables.js';
import { maxOf } from '../util/arrays.js';

export interface Shell {
  title: string;
  heading: string;
  meta: string;
  nav: { href: string; text: string }[];
  main: string;
}

export const LEGEND = `<ul class="legend" aria-label="Legend">
<li><span class="sw t-buffer" aria-hidden="true"></span>named buffer (KV cache, state)</li>
<li><span class="sw t-binding" aria-hidden="true"></span>delegate input or output</li>
<li><span class="sw t-io" aria-hidden="true"></span>method input or output</li>
<li><span class="sw t-activation" aria-hidden="true"></span>other planned tensor</li>
<li><span class="sw h2d" aria-hidden="true"></span>host→device copy (solid arrow)</li>
<li><span class="sw d2h" aria-hidden="true"></span>device→host copy (dashed arrow)</li>
</ul>`;

export function page(s: Shell): string {
  const nav = s.nav.map((n) => `<li><a href="#${n.href}">${esc(n.text)}</a></li>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="trtx ${TRTX_VERSION}">
<title>${esc(s.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<a class="skip" href="#main">Skip to the report</a>
${ARROW_DEFS}
<header>
<h1>${s.heading}</h1>
<p class="meta">${s.meta}</p>
</header>
<nav aria-label="Methods"><ul>${nav}</ul></nav>
<main id="main" tabindex="-1">
<p id="live" class="live" role="status" aria-live="polite">Select a tensor in a drawing (Tab to it, then the arrow keys) to see it here and in its table.</p>
${s.main}
</main>
<footer><p>Written by trtx ${TRTX_VERSION} from the program's header, its flatbuffer and each delegate blob's header and metadata; segment bodies (engines, weights) are never read. Arenas are drawn to scale within a method; an arena too small to see is drawn magnified with a dashed outline.</p></footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

export const methodAnchor = (prefix: string, m: MethodPlan, i: number) => `${prefix}m${i}-${idPart(m.name)}`;

/**
 * Drawing, totals and tables of one method; `level` is the heading level of
 * its parts. `collapse` puts the tables in a closed <details> (the diff view,
 * where two drawings side by side come first).
 */
export function methodView(
  m: MethodPlan,
  id: string,
  scaleBytes: number,
  level: number,
  opts: { width?: number; collapse?: boolean } = {},
): string {
  const { svg, undrawnCopies } = drawMethod(m, { id, scaleBytes, width: opts.width });
  const h = `h${level}`;
  const caption =
    `Memory plan of ${m.name}: ${m.arenas.length} arena${m.arenas.length === 1 ? '' : 's'}, ` +
    `${m.arenas.reduce((n, a) => n + a.tensors.length, 0)} planned tensors, ${m.copies.length} staging copies` +
    (undrawnCopies ? ` (${undrawnCopies} with an end that is not memory-planned, in the table only)` : '') +
    `; full bar width = ${bytes(scaleBytes)}.`;
  const tables = [
    `<${h}>Arenas</${h}>`,
    arenaTable(m),
    `<${h}>Staging copies</${h}>`,
    copyTable(m),
    `<${h}>Delegates</${h}>`,
    delegateSections(m, level + 1),
    `<${h}>Planned tensors</${h}>`,
    `<div class="wide">${tensorTable(m, id)}</div>`,
  ].join('\n');
  return [
    stagingSummary(m),
    `<figure><figcaption id="${id}-caption">${esc(caption)}</figcaption><div class="wide">${svg}</div></figure>`,
    opts.collapse
      ? `<details><summary>Tables of ${esc(m.name)}: arenas, staging copies, delegates, planned tensors</summary>\n${tables}\n</details>`
      : tables,
  ].join('\n');
}

export const largestArena = (...methods: (MethodPlan | undefined)[]) =>
  maxOf(
    methods.flatMap((m) => m?.arenas.map((a) => a.size) ?? []),
    1,
  );

export function renderInspectHtml(plan: MemoryPlan): string {
  const sections = plan.methods.map((m, i) => {
    const id = methodAnchor('', m, i);
    return `<section aria-labelledby="${id}-h"><h2 id="${id}-h">method ${esc(m.name)}</h2>\n${LEGEND}\n${methodView(m, id, largestArena(m), 3)}\n</section>`;
  });
  const totals = plan.methods
    .map((m) => `${esc(m.name)}: ${esc(bytes(m.staging.host_to_device_bytes + m.staging.device_to_host_bytes))} staged per execution`)
    .join('; ');
  return page({
    title: `trtx memory plan: ${plan.file}`,
    heading: `Memory plan of <code>${esc(plan.file)}</code>`,
    meta: `${esc(bytes(plan.fileSize))}, ${plan.methods.length} method${plan.methods.length === 1 ? '' : 's'}${totals ? ` — ${totals}` : ''}`,
    nav: plan.methods.map((m, i) => ({ href: `${methodAnchor('', m, i)}-h`, text: `method ${m.name}` })),
    main: sections.join('\n') || '<p>No methods.</p>',
  });
}
