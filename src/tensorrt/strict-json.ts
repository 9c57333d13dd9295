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
  let pos = 0;

  const fail = (what: string): never => {
    throw new TrtxError(code, location, `not JSON: ${what} at character ${pos}`);
  };

  const skipWs = (): void => {
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) pos++;
      else break;
    }
  };

  const expectWord = (word: string): void => {
    if (text.startsWith(word, pos)) pos += word.length;
    else fail('unexpected character');
  };

  const hex4 = (): number => {
    if (pos + 4 > text.length) fail('truncated \\u escape');
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = text.charCodeAt(pos + i);
      let d: number;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
      else return fail('bad \\u escape');
      v = v * 16 + d;
    }
    pos += 4;
    return v;
  };

  const parseString = (): string => {
    // pos is at the opening quote
    pos++;
    let out = '';
    let runStart = pos;
    for (;;) {
      if (pos >= text.length) fail('unterminated string');
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        out += text.slice(runStart, pos);
        pos++;
        return out;
      }
      if (c < 0x20) fail('raw control character in string');
      if (c >= 0xd800 && c <= 0xdfff) {
        // The decoder only produces well-formed pairs; check anyway so a
        // caller passing a JS string gets the same rule.
        const next = text.charCodeAt(pos + 1);
        if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) fail('unpaired surrogate');
        pos += 2;
        continue;
      }
      if (c !== 0x5c) {
        pos++;
        continue;
      }
      out += text.slice(runStart, pos);
      pos++;
      const e = text[pos];
      pos++;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const u = hex4();
          if (u >= 0xd800 && u <= 0xdbff) {
            if (text[pos] !== '\\' || text[pos + 1] !== 'u') fail('unpaired surrogate escape');
            pos += 2;
            const lo = hex4();
            if (lo < 0xdc00 || lo > 0xdfff) fail('unpaired surrogate escape');
            out += String.fromCharCode(u, lo);
          } else if (u >= 0xdc00 && u <= 0xdfff) {
            fail('unpaired surrogate escape');
          } else {
            out += String.fromCharCode(u);
          }
          break;
        }
        default:
          pos--;
          fail('bad escape');
      }
      runStart = pos;
    }
  };

  const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const parseNumber = (): number | JsonFloat => {
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (!m) return fail('bad number');
    pos += m[0].length;
    if (opts.floats === 'apart' && /[.eE]/.test(m[0])) return new JsonFloat(m[0], Number(m[0]));
    return Number(m[0]);
  };

  let values = 0;
  const parseValue = (depth: number): JsonValue => {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
    if (++values > MAX_VALUES) fail(`more than ${MAX_VALUES} values`);
    skipWs();
    if (pos >= text.length) fail('unexpected end');
    const c = text.charAt(pos);
    if (c === '{') {
      pos++;
      const obj = Object.create(null) as JsonObject;
      skipWs();
      if (text[pos] === '}') {
        pos++;
        return obj;
      }
      for (;;) {
        skipWs();
        if (text[pos] !== '"') fail('expected a key');
        const keyAt = pos;
        const key = parseString();
        if (Object.prototype.hasOwnProperty.call(obj, key)) {
          pos = keyAt;
          fail(`repeated key ${JSON.stringify(key)}`);
        }
        skipWs();
        if (text[pos] !== ':') fail("expected ':'");
        pos++;
        obj[key] = parseValue(depth + 1);
        skipWs();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      pos++;
      const arr: JsonValue[] = [];
      skipWs();
      if (text[pos] === ']') {
        pos++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue(depth + 1));
        skipWs();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return parseString();
    if (c === 't') {
      expectWord('true');
      return true;
    }
    if (c === 'f') {
      expectWord('false');
      return false;
    }
    if (c === 'n') {
      expectWord('null');
      return null;
    }
    if (c === '-' || (c >= '0' && c <= '9')) return parseNumber();
    return fail('unexpected character');
  };

  const value = parseValue(0);
  skipWs();
  if (pos !== text.length) fail('content after the value');
  return value;
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
