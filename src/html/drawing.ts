// The SVG drawing of one method's memory plan: one bar per arena, its length
// proportional to the arena's bytes (one scale per method, or per pair of
// methods in the diff view), every planned tensor a box at its offset, host
// arenas above device arenas, and each staging copy an arrow from its source
// tensor to its destination. Tensors whose lifetimes share bytes (memory
// planning reuses dead activations' regions) go to separate lanes.
//
// Accessibility: the figure is a group of arena groups; each tensor is a
// focusable `img` with its full description as its name. One tensor per
// figure is in the tab order; the arrow keys move between tensors (page
// script), and the tables under the figure say the same in text.

import { bytes, esc } from './escape.js';
import type { MethodPlan, PlanArena, PlannedTensor, StagingCopy } from '../inspect/memory-plan.js';
import { maxOf } from '../util/arrays.js';

const LABEL_W = 130;
const LANE_H = 24;
const MAX_LANES = 8;
const ROW_GAP = 14;
const BAND_H = 64;
/** An arena narrower than this is drawn magnified (dashed) so its tensors stay visible. */
const MIN_BAR = 96;
const CHAR_W = 6.6;

export interface DrawOptions {
  /** Element id prefix, unique in the page. */
  id: string;
  /** Bytes that span the full bar width (the largest arena of the method, or of both sides in a diff). */
  scaleBytes: number;
  /** viewBox width: 960 for a page-wide drawing, less for one side of the diff (text stays legible). */
  width?: number;
}

interface Row {
  arena: PlanArena;
  y: number;
  height: number;
  width: number;
  magnified: boolean;
  lanes: Map<PlannedTensor, number>;
}

const isHost = (device: string) => device === 'cpu';

/** Greedy lanes: a tensor goes to the first lane whose last tensor ends at or before its offset. */
function assignLanes(tensors: PlannedTensor[]): Map<PlannedTensor, number> {
  const ends: number[] = [];
  const out = new Map<PlannedTensor, number>();
  for (const t of tensors) {
    let lane = ends.findIndex((end) => end <= t.offset);
    if (lane < 0) lane = ends.length < MAX_LANES ? ends.length : MAX_LANES - 1;
    ends[lane] = Math.max(ends[lane] ?? 0, t.offset + t.bytes);
    out.set(t, lane);
  }
  return out;
}

export function tensorKind(t: PlannedTensor): 'buffer' | 'binding' | 'io' | 'activation' {
  if (t.fqn) return 'buffer';
  if (t.roles.some((r) => r.startsWith('delegate '))) return 'binding';
  if (t.roles.some((r) => r.startsWith('input ') || r.startsWith('output '))) return 'io';
  return 'activation';
}

export function tensorDescription(t: PlannedTensor): string {
  const roles = t.roles.length ? `; ${t.roles.join('; ')}` : '';
  return `${t.label}: ${t.dtype}[${t.shape.join(', ')}], ${bytes(t.bytes)} at offset ${t.offset} of arena ${t.arena} (${t.device})${roles}`;
}

/** The id of a tensor's box and of its table row (`-row`). */
export const tensorId = (prefix: string, t: PlannedTensor) => `${prefix}-v${t.value}`;

function layout(m: MethodPlan, scaleBytes: number, barW: number): { rows: Row[]; height: number; bandY: number | null } {
  const host = m.arenas.filter((a) => isHost(a.device));
  const device = m.arenas.filter((a) => !isHost(a.device));
  const rows: Row[] = [];
  let y = 8;
  const place = (a: PlanArena) => {
    const lanes = assignLanes(a.tensors);
    const laneCount = maxOf(
      [...lanes.values()].map((l) => l + 1),
      1,
    );
    const trueWidth = scaleBytes > 0 ? (a.size / scaleBytes) * barW : 0;
    const magnified = trueWidth < MIN_BAR;
    const height = laneCount * LANE_H + 8;
    rows.push({ arena: a, y, height, width: magnified ? MIN_BAR : trueWidth, magnified, lanes });
    y += height + ROW_GAP;
  };
  host.forEach(place);
  let bandY: number | null = null;
  if (host.length && device.length) {
    bandY = y;
    y += BAND_H;
  }
  device.forEach(place);
  return { rows, height: y, bandY };
}

function tensorBox(t: PlannedTensor, row: Row, prefix: string, first: boolean) {
  const size = Math.max(row.arena.size, 1);
  const x = LABEL_W + (t.offset / size) * row.width;
  const w = Math.max(2, (t.bytes / size) * row.width);
  const y = row.y + 4 + (row.lanes.get(t) ?? 0) * LANE_H;
  return { x, y, w, h: LANE_H - 4, first, id: tensorId(prefix, t) };
}

function arrow(cp: StagingCopy, boxes: Map<number, { x: number; y: number; w: number; h: number }>): string {
  const a = boxes.get(cp.from);
  const b = boxes.get(cp.to);
  if (!a || !b) return '';
  const down = a.y < b.y;
  const x1 = a.x + a.w / 2;
  const y1 = down ? a.y + a.h : a.y;
  const x2 = b.x + b.w / 2;
  const y2 = down ? b.y - 3 : b.y + b.h + 3;
  const mid = (y1 + y2) / 2;
  const cls = cp.direction === 'host->device' ? 'h2d' : 'd2h';
  const text = `${cp.direction} copy: ${cp.fromLabel} to ${cp.toLabel}, ${bytes(cp.bytes)} per execution`;
  return `<path class="copy ${cls}" d="M${x1.toFixed(1)},${y1.toFixed(1)} C${x1.toFixed(1)},${mid.toFixed(1)} ${x2.toFixed(1)},${mid.toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}" marker-end="url(#arrow-${cls})"><title>${esc(text)}</title></path>`;
}

/** The SVG of one method, and the number of copies it could not draw (an end not planned). */
export function drawMethod(m: MethodPlan, opts: DrawOptions): { svg: string; undrawnCopies: number } {
  const width = opts.width ?? 960;
  const { rows, height, bandY } = layout(m, opts.scaleBytes, width - LABEL_W - 12);
  const parts: string[] = [];
  const boxes = new Map<number, { x: number; y: number; w: number; h: number }>();
  let first = true;
  for (const row of rows) {
    const a = row.arena;
    const label = `arena ${a.index} on ${a.device}, ${bytes(a.size)}, ${a.tensors.length} tensor${a.tensors.length === 1 ? '' : 's'}${row.magnified ? ', drawn magnified' : ''}`;
    parts.push(`<g role="group" aria-label="${esc(label)}" class="arena ${isHost(a.device) ? 'host' : 'device'}">`);
    parts.push(`<text class="arena-label" x="4" y="${row.y + 15}" aria-hidden="true">arena ${a.index} · ${esc(a.device)}</text>`);
    parts.push(
      `<text class="arena-size" x="4" y="${row.y + 31}" aria-hidden="true">${esc(bytes(a.size))}${row.magnified ? ' (magnified)' : ''}</text>`,
    );
    parts.push(
      `<rect class="arena-bar${row.magnified ? ' magnified' : ''}" x="${LABEL_W}" y="${row.y}" width="${row.width.toFixed(1)}" height="${row.height}" aria-hidden="true"/>`,
    );
    for (const t of a.tensors) {
      const b = tensorBox(t, row, opts.id, first);
      boxes.set(t.value, b);
      const desc = tensorDescription(t);
      parts.push(
        `<rect id="${b.id}" class="t t-${tensorKind(t)}" role="img" tabindex="${first ? 0 : -1}" aria-label="${esc(desc)}" data-row="${b.id}-row" x="${b.x.toFixed(1)}" y="${b.y.toFixed(1)}" width="${b.w.toFixed(1)}" height="${b.h}"><title>${esc(desc)}</title></rect>`,
      );
      if (b.w > t.label.length * CHAR_W + 8) {
        parts.push(
          `<text class="t-label" x="${(b.x + 4).toFixed(1)}" y="${(b.y + b.h / 2 + 4).toFixed(1)}" aria-hidden="true">${esc(t.label)}</text>`,
        );
      }
      first = false;
    }
    parts.push('</g>');
  }
  if (bandY !== null) {
    parts.push(`<text class="band-label" x="4" y="${bandY + BAND_H / 2 + 4}" aria-hidden="true">host ⇅ device</text>`);
  }
  let undrawn = 0;
  const arrows = m.copies.map((cp) => {
    const s = arrow(cp, boxes);
    if (!s) undrawn++;
    return s;
  });
  parts.push(
    `<g class="copies" role="group" aria-label="${m.copies.length} staging copies, listed in the table below">${arrows.join('')}</g>`,
  );
  const svg = `<svg class="plan" viewBox="0 0 ${width} ${Math.max(height, 40)}" width="100%" role="group" aria-labelledby="${opts.id}-caption" data-nav="tensors">${parts.join('')}</svg>`;
  return { svg, undrawnCopies: undrawn };
}

/** Arrowheads, defined once per page (ids are unique in a document) and used by every figure. */
export const ARROW_DEFS =
  '<svg class="defs" width="0" height="0" aria-hidden="true" focusable="false"><defs>' +
  ['h2d', 'd2h']
    .map(
      (c) =>
        `<marker id="arrow-${c}" class="head-${c}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>`,
    )
    .join('') +
  '</defs></svg>';
