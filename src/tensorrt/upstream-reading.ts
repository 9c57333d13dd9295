// What Torch-TensorRT's own C++ blob parser reads from a metadata document.
//
// The runtime that loads a TensorRT delegate does not use a JSON library: it
// walks the text with a few string searches (pytorch/TensorRT
// cpp/src/torch_tensorrt/executorch/TensorRTBlobHeader.cpp, parse_metadata_json,
// as of 2026-08-22). Three of its habits make it read some valid JSON
// differently from a JSON reader:
//   - a string's backslash is dropped and the next character kept, so only
//     \" \\ \/ come out right: "\u00e9t\u00e9" reads as "u00e9tu00e9" and
//     "a\nb" as "anb" (parse_string);
//   - `"aliased_io"` is searched for only after the io_bindings array, and
//     `"hardware_compatible"` / `"device_id"` likewise, each as the first
//     occurrence of the quoted key text with the value after the next colon
//     (parse_bool_after_key, parse_int_after_key), so a key written earlier is
//     not found and keeps its default (no aliases, device 0);
//   - a binding entry whose "name" is absent or empty is skipped, and one
//     without "is_input" is an output.
// This module replays that walk byte for byte, so trtx can refuse a blob that
// the real runtime would misread (see upstream-agreement.ts), and so the
// property tests can state what the real parser sees. It is written from the
// parser's documented behaviour and the project's own tests against it, not
// copied.

import { itemAt } from '../util/present.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/** One io_bindings entry as the upstream walk saw it. */
export interface UpstreamEntry {
  /** The name as upstream reads it (escapes mangled); '' when absent. */
  name: string;
  isInput: boolean;
  /** Kept in the input or output list (a non-empty name). */
  kept: boolean;
  /** A key or the name held an escape other than \" \\ \/, which upstream misreads. */
  lossyEscape: boolean;
}

export interface UpstreamAlias {
  output: string;
  input: string;
  kind: string;
  lossyEscape: boolean;
}

export type UpstreamReading =
  | { ok: false; reason: string }
  | {
      ok: true;
      entries: UpstreamEntry[];
      inputs: string[];
      outputs: string[];
      /** null when no `"aliased_io"` key text follows the io_bindings array. */
      aliases: UpstreamAlias[] | null;
      /** Entries of the aliased_io walk, kept or not (an empty side drops one). */
      aliasEntries: UpstreamAlias[];
      deviceId: number;
      /** Whether `"device_id"` was found after the arrays (else the default 0). */
      deviceIdFound: boolean;
      hardwareCompatible: boolean;
    };

const utf8 = new TextDecoder('utf-8');

/** Reads metadata bytes the way TensorRTBlobHeader.cpp does. */
export function readLikeUpstream(json: Uint8Array): UpstreamReading {
  const s = json;
  const n = s.length;
  const NPOS = -1;

  const skipWs = (pos: number): number => {
    while (pos < n && (s[pos] === 0x20 || s[pos] === 0x09 || s[pos] === 0x0a || s[pos] === 0x0d)) pos++;
    return pos;
  };

  // Returns the position after the closing quote, the bytes read and whether
  // an escape was one upstream decodes wrongly.
  const parseString = (pos: number): { end: number; bytes: number[]; lossy: boolean } => {
    const bytes: number[] = [];
    let lossy = false;
    if (pos >= n || s[pos] !== QUOTE) return { end: NPOS, bytes, lossy };
    pos++;
    while (pos < n && s[pos] !== QUOTE) {
      if (s[pos] === BACKSLASH && pos + 1 < n) {
        pos++;
        if (s[pos] !== QUOTE && s[pos] !== BACKSLASH && s[pos] !== 0x2f) lossy = true;
      }
      bytes.push(itemAt(s, pos++, 'the metadata bytes'));
    }
    if (pos >= n) return { end: NPOS, bytes, lossy };
    return { end: pos + 1, bytes, lossy };
  };
  const text = (bytes: number[]): string => utf8.decode(new Uint8Array(bytes));

  const skipValue = (pos: number): number => {
    pos = skipWs(pos);
    if (pos >= n) return NPOS;
    if (s[pos] === QUOTE) return parseString(pos).end;
    if (s[pos] === 0x7b || s[pos] === 0x5b) {
      // Only the opening bracket's own kind is counted, as upstream does.
      const open = s[pos];
      const close = open === 0x7b ? 0x7d : 0x5d;
      let depth = 1;
      pos++;
      while (pos < n && depth > 0) {
        if (s[pos] === QUOTE) {
          pos = parseString(pos).end;
          if (pos === NPOS) return NPOS;
          continue;
        }
        if (s[pos] === open) depth++;
        else if (s[pos] === close) depth--;
        pos++;
      }
      return pos;
    }
    while (
      pos < n &&
      s[pos] !== COMMA &&
      s[pos] !== 0x7d &&
      s[pos] !== 0x5d &&
      s[pos] !== 0x20 &&
      s[pos] !== 0x09 &&
      s[pos] !== 0x0a &&
      s[pos] !== 0x0d
    )
      pos++;
    return pos;
  };

  const find = (needle: string, from: number): number => {
    const pat = [...needle].map((c) => c.charCodeAt(0));
    outer: for (let i = Math.max(0, from); i + pat.length <= n; i++) {
      for (let k = 0; k < pat.length; k++) if (s[i + k] !== pat[k]) continue outer;
      return i;
    }
    return NPOS;
  };
  const startsWith = (pos: number, word: string): boolean => {
    if (pos + word.length > n) return false;
    for (let k = 0; k < word.length; k++) if (s[pos + k] !== word.charCodeAt(k)) return false;
    return true;
  };

  const fail = (reason: string): UpstreamReading => ({ ok: false, reason });

  // io_bindings: the first occurrence of the quoted key text, then the next '['.
  const bindingsAt = find('"io_bindings"', 0);
  if (bindingsAt === NPOS) return fail('no "io_bindings" key');
  const arrStart = find('[', bindingsAt);
  if (arrStart === NPOS) return fail('no "[" after "io_bindings"');

  const entries: UpstreamEntry[] = [];
  const inputs: string[] = [];
  const outputs: string[] = [];
  let pos = arrStart + 1;
  for (;;) {
    pos = skipWs(pos);
    if (pos >= n) return fail('io_bindings does not end');
    if (s[pos] === 0x5d) {
      pos++;
      break;
    }
    if (s[pos] === COMMA) {
      pos++;
      continue;
    }
    if (s[pos] !== 0x7b) return fail(`io_bindings holds something other than an object at byte ${pos}`);
    pos++;
    const entry: UpstreamEntry = { name: '', isInput: false, kept: false, lossyEscape: false };
    let sawName = false;
    for (;;) {
      pos = skipWs(pos);
      if (pos >= n) return fail('an io_bindings entry does not end');
      if (s[pos] === 0x7d) {
        pos++;
        break;
      }
      if (s[pos] === COMMA) {
        pos++;
        continue;
      }
      const key = parseString(pos);
      if (key.end === NPOS) return fail(`an io_bindings key is not a string at byte ${pos}`);
      entry.lossyEscape ||= key.lossy;
      pos = skipWs(key.end);
      if (pos >= n || s[pos] !== COLON) return fail(`no ":" after an io_bindings key at byte ${pos}`);
      pos = skipWs(pos + 1);
      const k = text(key.bytes);
      if (k === 'name') {
        const v = parseString(pos);
        if (v.end === NPOS) return fail(`a binding name is not a string at byte ${pos}`);
        sawName = true;
        entry.name = text(v.bytes);
        entry.lossyEscape ||= v.lossy;
        pos = v.end;
      } else if (k === 'is_input') {
        if (startsWith(pos, 'true')) {
          entry.isInput = true;
          pos += 4;
        } else if (startsWith(pos, 'false')) {
          entry.isInput = false;
          pos += 5;
        } else return fail(`is_input is not true or false at byte ${pos}`);
      } else {
        pos = skipValue(pos);
        if (pos === NPOS) return fail('an io_bindings value does not end');
      }
    }
    entry.kept = sawName && entry.name !== '';
    if (entry.kept) (entry.isInput ? inputs : outputs).push(entry.name);
    entries.push(entry);
  }

  // aliased_io: searched for only after the io_bindings array.
  let aliases: UpstreamAlias[] | null = null;
  const aliasEntries: UpstreamAlias[] = [];
  const aliasKey = find('"aliased_io"', pos);
  if (aliasKey !== NPOS) {
    let apos = find('[', aliasKey);
    if (apos === NPOS) return fail('no "[" after "aliased_io"');
    apos++;
    aliases = [];
    for (;;) {
      apos = skipWs(apos);
      if (apos >= n) return fail('aliased_io does not end');
      if (s[apos] === 0x5d) break;
      if (s[apos] === COMMA) {
        apos++;
        continue;
      }
      if (s[apos] !== 0x7b) return fail(`aliased_io holds something other than an object at byte ${apos}`);
      apos++;
      const a: UpstreamAlias = { output: '', input: '', kind: '', lossyEscape: false };
      for (;;) {
        apos = skipWs(apos);
        if (apos >= n) return fail('an aliased_io entry does not end');
        if (s[apos] === 0x7d) {
          apos++;
          break;
        }
        if (s[apos] === COMMA) {
          apos++;
          continue;
        }
        const key = parseString(apos);
        if (key.end === NPOS) return fail(`an aliased_io key is not a string at byte ${apos}`);
        a.lossyEscape ||= key.lossy;
        apos = skipWs(key.end);
        if (apos >= n || s[apos] !== COLON) return fail(`no ":" after an aliased_io key at byte ${apos}`);
        apos = skipWs(apos + 1);
        const k = text(key.bytes);
        if (k === 'output' || k === 'input' || k === 'kind') {
          const v = parseString(apos);
          if (v.end === NPOS) return fail(`aliased_io ${k} is not a string at byte ${apos}`);
          a[k] = text(v.bytes);
          a.lossyEscape ||= v.lossy;
          apos = v.end;
        } else {
          apos = skipValue(apos);
          if (apos === NPOS) return fail('an aliased_io value does not end');
        }
      }
      aliasEntries.push(a);
      if (a.output !== '' && a.input !== '') aliases.push({ ...a, kind: a.kind === '' ? 'kv_cache_update' : a.kind });
    }
  }

  // The scalars: searched from the end of io_bindings (not of aliased_io),
  // the value after the first colon that follows the key text.
  let hardwareCompatible = false;
  const hw = find('"hardware_compatible"', pos);
  if (hw !== NPOS) {
    const colon = find(':', hw);
    if (colon === NPOS) return fail('no ":" after "hardware_compatible"');
    const v = skipWs(colon + 1);
    if (startsWith(v, 'true')) hardwareCompatible = true;
    else if (!startsWith(v, 'false')) return fail('hardware_compatible is not true or false where upstream looks');
  }
  let deviceId = 0;
  const dev = find('"device_id"', pos);
  if (dev !== NPOS) {
    const colon = find(':', dev);
    if (colon === NPOS) return fail('no ":" after "device_id"');
    let v = skipWs(colon + 1);
    let neg = false;
    if (v < n && s[v] === 0x2d) {
      neg = true;
      v++;
    }
    let parsed = 0;
    let digits = 0;
    for (let d = s[v]; d !== undefined && d >= 0x30 && d <= 0x39; d = s[++v], digits++) parsed = (Math.imul(parsed, 10) + (d - 0x30)) | 0; // a C++ int
    if (digits === 0) return fail('device_id is not a number where upstream looks');
    deviceId = neg ? -parsed | 0 : parsed;
  }
  return { ok: true, entries, inputs, outputs, aliases, aliasEntries, deviceId, deviceIdFound: dev !== NPOS, hardwareCompatible };
}
