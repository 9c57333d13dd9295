// A strict RFC 8259 JSON reader and a Python-compatible writer for the small
// JSON documents the TensorRT delegate carries (blob metadata, the
// `zero_copy_kv` compile spec).
//
// Why not JSON.parse: two readers of one blob must never see two different
// documents. JSON.parse keeps the last of a repeated key while a find-first
// reader (the upstream C++ parser) keeps the first, so a metadata object with
// two `io_bindings` would be checked clean here and run with the other list
// there. This reader refuses repeated keys, raw control characters in strings,
// unpaired surrogate escapes, nesting deeper than MAX_DEPTH, more than
// MAX_VALUES values and anything after the value; every refusal is a
// TrtxError with the caller's code.
//
// Why not JSON.stringify: the upstream writer is Python's
// `json.dumps(..., separators=(",", ":"))` with `ensure_ascii`, which escapes
// every character outside printable ASCII as \uXXXX. Writing the same bytes
// keeps a blob re-encoded by trtx identical to one Torch-TensorRT wrote.

import type { Code } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject | JsonFloat;

/**
 * A number written with a fraction or an exponent (`10.0`, `1E1`), kept apart
 * from an integer literal when the caller asks (`floats: 'apart'`). A field
 * that holds an integer must be written as one: C++ readers of the same bytes
 * (the native runner's, Torch-TensorRT's) read `1E1` as something else or
 * not at all.
 */
export class JsonFloat {
  constructor(
    readonly text: string,
    readonly value: number,
  ) {}
}

export interface StrictJsonOptions {
  /** 'number' (default): every number is a JS number; 'apart': non-integer literals are JsonFloat. */
  floats?: 'number' | 'apart';
}
export interface JsonObject {
  [key: string]: JsonValue;
}

const MAX_DEPTH = 64;
/**
 * Values in one document (containers included): the native runner's reader
 * (native-runner/src/runtime/json.cpp) bounds what a document may cost the
 * same way, so the two refuse the same documents.
 */
export const MAX_VALUES = 1_000_000;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 (refusing invalid sequences and keeping a BOM, which then fails the grammar) and parses. */
export function parseStrictJsonBytes(bytes: Uint8Array, code: Code, location: string, opts: StrictJsonOptions = {}): JsonValue {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new TrtxError(code, location, 'not JSON: the bytes are not valid UTF-8');
  }
  return parseStrictJson(text, code, location, opts);
}

export function parseStrictJson(text: string, code: Code, location: string, opts: StrictJsonOptions = {}): JsonValue {
  return new StrictJsonReader(text, code, location, opts).document();
}

/** Single-character escapes after a backslash and what they stand for (RFC 8259 section 7). */
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/**
 * One pass over one document: a recursive-descent reader whose steps each
 * read one production at `pos` and leave `pos` after it; every refusal
 * names the character it stopped at.
 */
class StrictJsonReader {
  private pos = 0;
  /** Values read so far, containers included (MAX_VALUES). */
  private values = 0;

  constructor(
    private readonly text: string,
    private readonly code: Code,
    private readonly location: string,
    private readonly opts: StrictJsonOptions,
  ) {}

  /** The one value of the document, with nothing but whitespace after it. */
  document(): JsonValue {
    const value = this.value(0);
    this.skipWs();
    if (this.pos !== this.text.length) this.fail('content after the value');
    return value;
  }

  private fail(what: string): never {
    throw new TrtxError(this.code, this.location, `not JSON: ${what} at character ${this.pos}`);
  }

  private skipWs(): void {
    const { text } = this;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.pos++;
      else break;
    }
  }

  private expectWord(word: string): void {
    if (this.text.startsWith(word, this.pos)) this.pos += word.length;
    else this.fail('unexpected character');
  }

  private value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    if (++this.values > MAX_VALUES) this.fail(`more than ${MAX_VALUES} values`);
    this.skipWs();
    if (this.pos >= this.text.length) this.fail('unexpected end');
    const c = this.text.charAt(this.pos);
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (c === 't') {
      this.expectWord('true');
      return true;
    }
    if (c === 'f') {
      this.expectWord('false');
      return false;
    }
    if (c === 'n') {
      this.expectWord('null');
      return null;
    }
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    return this.fail('unexpected character');
  }

  /** An object (pos at its `{`); a repeated key is refused at the key. */
  private object(depth: number): JsonObject {
    const { text } = this;
    this.pos++;
    const obj = Object.create(null) as JsonObject;
    this.skipWs();
    if (text[this.pos] === '}') {
      this.pos++;
      return obj;
    }
    for (;;) {
      this.skipWs();
      if (text[this.pos] !== '"') this.fail('expected a key');
      const keyAt = this.pos;
      const key = this.string();
      if (Object.prototype.hasOwnProperty.call(obj, key)) {
        this.pos = keyAt;
        this.fail(`repeated key ${JSON.stringify(key)}`);
      }
      this.skipWs();
      if (text[this.pos] !== ':') this.fail("expected ':'");
      this.pos++;
      obj[key] = this.value(depth + 1);
      this.skipWs();
      if (text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      if (text[this.pos] === '}') {
        this.pos++;
        return obj;
      }
      this.fail("expected ',' or '}'");
    }
  }

  /** An array (pos at its `[`). */
  private array(depth: number): JsonValue[] {
    const { text } = this;
    this.pos++;
    const arr: JsonValue[] = [];
    this.skipWs();
    if (text[this.pos] === ']') {
      this.pos++;
      return arr;
    }
    for (;;) {
      arr.push(this.value(depth + 1));
      this.skipWs();
      if (text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      if (text[this.pos] === ']') {
        this.pos++;
        return arr;
      }
      this.fail("expected ',' or ']'");
    }
  }

  /** A string (pos at its opening quote), copying runs without escapes in one slice. */
  private string(): string {
    const { text } = this;
    this.pos++;
    let out = '';
    let runStart = this.pos;
    for (;;) {
      if (this.pos >= text.length) this.fail('unterminated string');
      const c = text.charCodeAt(this.pos);
      if (c === 0x22) {
        out += text.slice(runStart, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) this.fail('raw control character in string');
      if (c >= 0xd800 && c <= 0xdfff) {
        // The decoder only produces well-formed pairs; check anyway so a
        // caller passing a JS string gets the same rule.
        const next = text.charCodeAt(this.pos + 1);
        if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) this.fail('unpaired surrogate');
        this.pos += 2;
        continue;
      }
      if (c !== 0x5c) {
        this.pos++;
        continue;
      }
      out += text.slice(runStart, this.pos);
      this.pos++;
      out += this.escape();
      runStart = this.pos;
    }
  }

  /** The character(s) an escape stands for (pos after its backslash). */
  private escape(): string {
    const e = this.text[this.pos];
    this.pos++;
    const simple = e === undefined ? undefined : SIMPLE_ESCAPES[e];
    if (simple !== undefined) return simple;
    if (e !== 'u') {
      this.pos--;
      return this.fail('bad escape');
    }
    const u = this.hex4();
    if (u >= 0xd800 && u <= 0xdbff) {
      if (this.text[this.pos] !== '\\' || this.text[this.pos + 1] !== 'u') this.fail('unpaired surrogate escape');
      this.pos += 2;
      const lo = this.hex4();
      if (lo < 0xdc00 || lo > 0xdfff) this.fail('unpaired surrogate escape');
      return String.fromCharCode(u, lo);
    }
    if (u >= 0xdc00 && u <= 0xdfff) this.fail('unpaired surrogate escape');
    return String.fromCharCode(u);
  }

  /** The four hex digits of a \u escape. */
  private hex4(): number {
    const { text } = this;
    if (this.pos + 4 > text.length) this.fail('truncated \\u escape');
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = text.charCodeAt(this.pos + i);
      let d: number;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
      else return this.fail('bad \\u escape');
      v = v * 16 + d;
    }
    this.pos += 4;
    return v;
  }

  /** A number: a JS number, or a JsonFloat for a non-integer literal with `floats: 'apart'`. */
  private number(): number | JsonFloat {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (!m) return this.fail('bad number');
    this.pos += m[0].length;
    if (this.opts.floats === 'apart' && /[.eE]/.test(m[0])) return new JsonFloat(m[0], Number(m[0]));
    return Number(m[0]);
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** False for a string with an unpaired surrogate, which has no UTF-8 form and which the reader refuses. */
export function isWellFormedText(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonFloat);
}

/** A JSON string literal exactly as Python's json.dumps (ensure_ascii=True) writes it. */
export function pyJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c >= 0x20 && c <= 0x7e) out += s[i];
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else out += '\\u' + c.toString(16).padStart(4, '0');
  }
  return out + '"';
}

/**
 * Compact Python-compatible JSON for the value shapes trtx writes: strings,
 * booleans, null, safe integers, arrays and objects (keys in insertion order).
 */
export function pyJsonCompact(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return pyJsonString(v);
  if (typeof v === 'number') {
    // Python writes floats as repr(); trtx never has one to write, and a
    // wrong guess would silently change bytes.
    if (!Number.isSafeInteger(v)) throw unencodable(`${v} is not a safe integer`);
    return String(v);
  }
  if (Array.isArray(v)) return '[' + v.map(pyJsonCompact).join(',') + ']';
  if (typeof v === 'object') {
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) parts.push(pyJsonString(k) + ':' + pyJsonCompact(x));
    return '{' + parts.join(',') + '}';
  }
  throw unencodable(`a ${typeof v} has no JSON form here`);
}

function unencodable(what: string): TrtxError {
  return new TrtxError('JSON_UNENCODABLE', '', `cannot write JSON: ${what}`);
}

const encoder = new TextEncoder();
export function utf8Bytes(s: string): Uint8Array {
  return encoder.encode(s);
}
