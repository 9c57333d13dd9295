// The globals a pickle names, read off its bytes without running it (for
// src/export/model-kind.ts): GLOBAL (`c module\nname\n`, protocols 0-3, what
// torch.save writes at its default protocol 2) and STACK_GLOBAL (protocol
// 4+: two SHORT_BINUNICODE strings, each maybe memoized, then 0x93).
//
// Linear in the bytes by construction, with no regular expression (issue 43:
// the two expressions this replaces, `c([A-Za-z_][\w.]*)\n([A-Za-z_][\w.]*)\n`
// and its STACK_GLOBAL twin, retried every start position over the same run
// of name bytes, so 100 KB of `c` took 9.7 s; eslint.config.js refuses a
// regular expression in this file). They find exactly what those
// expressions' global matches found, in the same order:
// test/export-pickle-globals.test.ts compares both on every short input of
// a small alphabet. A run of name bytes ([A-Za-z0-9_.]) is scanned a bounded
// number of times: by the run it is, and as the second name of the run
// before it (GLOBAL); from the at most two places a SHORT_BINUNICODE before
// it can make its start (STACK_GLOBAL).

const NEWLINE = 0x0a;
const GLOBAL = 0x63; // 'c'
const SHORT_BINUNICODE = 0x8c;
const MEMOIZE = 0x94;
const STACK_GLOBAL = 0x93;

/** The byte at `i`, or -1 past the end. */
const byteAt = (bytes: Uint8Array, i: number): number => bytes[i] ?? -1;

/** [A-Za-z_]: a byte a name starts with. */
function isNameStart(b: number): boolean {
  return (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || b === 0x5f;
}

/** [A-Za-z0-9_.]: a byte of a (dotted) name. */
function isNameByte(b: number): boolean {
  return isNameStart(b) || (b >= 0x30 && b <= 0x39) || b === 0x2e;
}

/** Where the run of name bytes from `i` ends: the first byte from `i` that is not one, or the end. */
function nameEnd(bytes: Uint8Array, i: number): number {
  let j = i;
  while (j < bytes.length && isNameByte(byteAt(bytes, j))) j++;
  return j;
}

const latin1 = (bytes: Buffer, start: number, end: number) => bytes.toString('latin1', start, end);

/**
 * GLOBAL: `c`, a name, `\n`, a name, `\n`. A match starts at a `c` inside a
 * run of name bytes that ends in `\n` (the module is the rest of that run,
 * so only the run's first `c` followed by a name start can begin it), and
 * the next run must be a name ending in `\n`. A run whose second half fails
 * is still tried as the start of the next match.
 */
function addGlobals(bytes: Buffer, out: Set<string>): void {
  let s = 0;
  while (s < bytes.length) {
    if (!isNameByte(byteAt(bytes, s))) {
      s++;
      continue;
    }
    const e = nameEnd(bytes, s);
    let next = e;
    if (byteAt(bytes, e) === NEWLINE && isNameStart(byteAt(bytes, e + 1))) {
      let c = s;
      while (c < e && !(byteAt(bytes, c) === GLOBAL && isNameStart(byteAt(bytes, c + 1)))) c++;
      const e2 = c < e ? nameEnd(bytes, e + 1) : -1;
      if (e2 >= 0 && byteAt(bytes, e2) === NEWLINE) {
        out.add(`${latin1(bytes, c + 1, e)}.${latin1(bytes, e + 1, e2)}`);
        next = e2 + 1;
      }
    }
    s = next;
  }
}

/** A SHORT_BINUNICODE at `p` holding a name (its length byte not read: any byte), and where what follows it (after a MEMOIZE) starts. */
function shortName(bytes: Buffer, p: number): { start: number; end: number; after: number } | null {
  const start = p + 2;
  if (byteAt(bytes, p) !== SHORT_BINUNICODE || !isNameStart(byteAt(bytes, start))) return null;
  const end = nameEnd(bytes, start);
  return { start, end, after: byteAt(bytes, end) === MEMOIZE ? end + 1 : end };
}

/** STACK_GLOBAL: two short names (each maybe memoized), then 0x93. */
function addStackGlobals(bytes: Buffer, out: Set<string>): void {
  let p = bytes.indexOf(SHORT_BINUNICODE);
  while (p >= 0) {
    const module = shortName(bytes, p);
    const name = module && shortName(bytes, module.after);
    if (module && name && byteAt(bytes, name.after) === STACK_GLOBAL) {
      out.add(`${latin1(bytes, module.start, module.end)}.${latin1(bytes, name.start, name.end)}`);
      p = bytes.indexOf(SHORT_BINUNICODE, name.after + 1);
    } else {
      p = bytes.indexOf(SHORT_BINUNICODE, p + 1);
    }
  }
}

/**
 * The globals a pickle names (`module.name`, each once: GLOBAL's first, then
 * STACK_GLOBAL's), read off the bytes as patterns, not by running the
 * pickle; a zip's data.pkl holds the pickle alone (tensor data is in
 * records of its own).
 */
export function pickleGlobals(bytes: Buffer): string[] {
  const out = new Set<string>();
  addGlobals(bytes, out);
  addStackGlobals(bytes, out);
  return [...out];
}
