// Text from a program file (tensor names, binding names, backend ids) goes
// into the report only through these: every name is untrusted input.
import { formatIEC } from '../util/size.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const entity = (c: string) => ENTITIES[c] ?? c;
const controlEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
// eslint-disable-next-line no-control-regex -- matching control characters is the point: they are shown as escapes
const NEEDS_ESCAPE = /[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Escapes text for an HTML or SVG text node or a quoted attribute value. */
export function esc(text: string | number): string {
  const s = String(text);
  // Most names need nothing: a page of 150,000 tensors escapes each of them.
  if (!NEEDS_ESCAPE.test(s)) return s;
  // Control characters (a NUL in a binding name) are shown, not passed on.
  return (
    s
      .replace(/[&<>"']/g, entity)
      // eslint-disable-next-line no-control-regex -- matching control characters is the point: they are shown as escapes
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, controlEscape)
  );
}

export const bytes = (n: number) => formatIEC(BigInt(n));

/** Bytes with the exact count, as the tables show them: `2.19 KiB (2240 B)`. */
export const exactBytes = (n: number) => (n < 1024 ? `${n} B` : `${bytes(n)} (${n.toLocaleString('en-US')} B)`);

/** An id fragment from arbitrary text (method names are untrusted too). */
export const idPart = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_');
