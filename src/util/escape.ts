// Text from outside trtx (file names, tensor and operator names, blob
// metadata) reaches the terminal inside trtx's own lines. A control
// character in it could end a line early and forge one (`error: ...`),
// move the cursor or recolour the screen; every human line is printed
// through escapeControls, which writes such characters as escapes (`\n`,
// `\x1b`, `\u2028`). --json output needs nothing: JSON escapes them.

// eslint-disable-next-line no-control-regex -- the escape character starts the colour sequences removed here
const SGR = /\x1b\[[0-9;]*m/g; // select graphic rendition: the colours trtx's own styler writes
// eslint-disable-next-line no-control-regex -- control characters are what this escapes
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex -- the same class, tested once: most lines have none
const HAS_CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`);
}

/** `s` with every control character escaped; `keepColours` keeps colour sequences (only trtx's styler writes them). */
export function escapeControls(s: string, keepColours = false): string {
  if (!HAS_CONTROL.test(s)) return s;
  if (!keepColours) return s.replace(CONTROL, escapeChar);
  let out = '';
  let last = 0;
  for (const m of s.matchAll(SGR)) {
    out += s.slice(last, m.index).replace(CONTROL, escapeChar) + m[0];
    last = m.index + m[0].length;
  }
  return out + s.slice(last).replace(CONTROL, escapeChar);
}
