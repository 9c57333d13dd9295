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
const text = (bytes: number[]): string => utf8.decode(new Uint8Array(bytes));

const NPOS = -1;

/** Where the walk gives up, as upstream's parser does (caught by readLikeUpstream, never escapes it). */
class Misread extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Reads metadata bytes the way TensorRTBlobHeader.cpp does. */
export function readLikeUpstream(json: Uint8Array): UpstreamReading {
  try {
    const walk = new UpstreamWalk(json);
    const { entries, inputs, outputs, end } = walk.ioBindings();
    // Each key below is searched for from the end of io_bindings (the
    // scalars not from the end of aliased_io), in this order.
    const { aliases, aliasEntries } = walk.aliasedIo(end);
    const hardwareCompatible = walk.hardwareCompatible(end);
    const { deviceId, deviceIdFound } = walk.deviceId(end);
    return { ok: true, entries, inputs, outputs, aliases, aliasEntries, deviceId, deviceIdFound, hardwareCompatible };
  } catch (e) {
    if (e instanceof Misread) return { ok: false, reason: e.reason };
    throw e;
  }
}

/** Upstream's walk over the metadata bytes: string searches and a hand-rolled scanner. */
class UpstreamWalk {
  private readonly n: number;

  constructor(private readonly s: Uint8Array) {
    this.n = s.length;
  }

  /** io_bindings: the first occurrence of the quoted key text, then the next '['. */
  ioBindings(): { entries: UpstreamEntry[]; inputs: string[]; outputs: string[]; end: number } {
    const bindingsAt = this.find('"io_bindings"', 0);
    if (bindingsAt === NPOS) throw new Misread('no "io_bindings" key');
    const arrStart = this.find('[', bindingsAt);
    if (arrStart === NPOS) throw new Misread('no "[" after "io_bindings"');
    const entries: UpstreamEntry[] = [];
    const inputs: string[] = [];
    const outputs: string[] = [];
    const end = this.objectArray(arrStart + 1, 'io_bindings', (pos) => {
      const { entry, end: after } = this.bindingEntry(pos);
      if (entry.kept) (entry.isInput ? inputs : outputs).push(entry.name);
      entries.push(entry);
      return after;
    });
    return { entries, inputs, outputs, end };
  }

  /**
   * One io_bindings entry (pos after its '{'): "name" a string, "is_input"
   * the bare word true or false, anything else skipped; kept only with a
   * non-empty name.
   */
  private bindingEntry(pos: number): { entry: UpstreamEntry; end: number } {
    const entry: UpstreamEntry = { name: '', isInput: false, kept: false, lossyEscape: false };
    let sawName = false;
    const end = this.objectKeys(pos, 'io_bindings', entry, (k, at) => {
      if (k === 'name') {
        const v = this.parseString(at);
        if (v.end === NPOS) throw new Misread(`a binding name is not a string at byte ${at}`);
        sawName = true;
        entry.name = text(v.bytes);
        entry.lossyEscape ||= v.lossy;
        return v.end;
      }
      if (k === 'is_input') {
        if (this.startsWith(at, 'true')) {
          entry.isInput = true;
          return at + 4;
        }
        if (this.startsWith(at, 'false')) {
          entry.isInput = false;
          return at + 5;
        }
        throw new Misread(`is_input is not true or false at byte ${at}`);
      }
      const after = this.skipValue(at);
      if (after === NPOS) throw new Misread('an io_bindings value does not end');
      return after;
    });
    entry.kept = sawName && entry.name !== '';
    return { entry, end };
  }

  /** aliased_io: searched for only after the io_bindings array; null aliases when absent. */
  aliasedIo(from: number): { aliases: UpstreamAlias[] | null; aliasEntries: UpstreamAlias[] } {
    const aliasEntries: UpstreamAlias[] = [];
    const aliasKey = this.find('"aliased_io"', from);
    if (aliasKey === NPOS) return { aliases: null, aliasEntries };
    const arrStart = this.find('[', aliasKey);
    if (arrStart === NPOS) throw new Misread('no "[" after "aliased_io"');
    const aliases: UpstreamAlias[] = [];
    this.objectArray(arrStart + 1, 'aliased_io', (pos) => {
      const { alias: a, end } = this.aliasEntry(pos);
      aliasEntries.push(a);
      // An entry with an empty side is dropped; a missing kind is a cache's.
      if (a.output !== '' && a.input !== '') aliases.push({ ...a, kind: a.kind === '' ? 'kv_cache_update' : a.kind });
      return end;
    });
    return { aliases, aliasEntries };
  }

  /** One aliased_io entry (pos after its '{'): "output", "input" and "kind" strings, anything else skipped. */
  private aliasEntry(pos: number): { alias: UpstreamAlias; end: number } {
    const a: UpstreamAlias = { output: '', input: '', kind: '', lossyEscape: false };
    const end = this.objectKeys(pos, 'aliased_io', a, (k, at) => {
      if (k === 'output' || k === 'input' || k === 'kind') {
        const v = this.parseString(at);
        if (v.end === NPOS) throw new Misread(`aliased_io ${k} is not a string at byte ${at}`);
        a[k] = text(v.bytes);
        a.lossyEscape ||= v.lossy;
        return v.end;
      }
      const after = this.skipValue(at);
      if (after === NPOS) throw new Misread('an aliased_io value does not end');
      return after;
    });
    return { alias: a, end };
  }

  /** hardware_compatible: the bare word after the first colon that follows the key text (default false). */
  hardwareCompatible(from: number): boolean {
    const hw = this.find('"hardware_compatible"', from);
    if (hw === NPOS) return false;
    const colon = this.find(':', hw);
    if (colon === NPOS) throw new Misread('no ":" after "hardware_compatible"');
    const v = this.skipWs(colon + 1);
    if (this.startsWith(v, 'true')) return true;
    if (!this.startsWith(v, 'false')) throw new Misread('hardware_compatible is not true or false where upstream looks');
    return false;
  }

  /** device_id: the digits after the first colon that follows the key text, read as a C++ int (default 0). */
  deviceId(from: number): { deviceId: number; deviceIdFound: boolean } {
    const { s, n } = this;
    const dev = this.find('"device_id"', from);
    if (dev === NPOS) return { deviceId: 0, deviceIdFound: false };
    const colon = this.find(':', dev);
    if (colon === NPOS) throw new Misread('no ":" after "device_id"');
    let v = this.skipWs(colon + 1);
    let neg = false;
    if (v < n && s[v] === 0x2d) {
      neg = true;
      v++;
    }
    let parsed = 0;
    let digits = 0;
    for (let d = s[v]; d !== undefined && d >= 0x30 && d <= 0x39; d = s[++v], digits++) parsed = (Math.imul(parsed, 10) + (d - 0x30)) | 0; // a C++ int
    if (digits === 0) throw new Misread('device_id is not a number where upstream looks');
    return { deviceId: neg ? -parsed | 0 : parsed, deviceIdFound: true };
  }

  /**
   * The objects of an array (pos after its '['), commas skipped wherever
   * they are; `entry` reads one object from after its '{' and returns the
   * position after its '}'. Returns the position after the ']'.
   */
  private objectArray(pos: number, what: string, entry: (pos: number) => number): number {
    const { s, n } = this;
    for (;;) {
      pos = this.skipWs(pos);
      if (pos >= n) throw new Misread(`${what} does not end`);
      if (s[pos] === 0x5d) return pos + 1;
      if (s[pos] === COMMA) {
        pos++;
        continue;
      }
      if (s[pos] !== 0x7b) throw new Misread(`${what} holds something other than an object at byte ${pos}`);
      pos = entry(pos + 1);
    }
  }

  /**
   * The keys of an object (pos after its '{'), commas skipped wherever they
   * are; `value` reads the value of key `k` at `at` and returns the position
   * after it. A lossy escape in a key marks `marked`. Returns the position
   * after the '}'.
   */
  private objectKeys(pos: number, what: string, marked: { lossyEscape: boolean }, value: (k: string, at: number) => number): number {
    const { s, n } = this;
    for (;;) {
      pos = this.skipWs(pos);
      if (pos >= n) throw new Misread(`an ${what} entry does not end`);
      if (s[pos] === 0x7d) return pos + 1;
      if (s[pos] === COMMA) {
        pos++;
        continue;
      }
      const key = this.parseString(pos);
      if (key.end === NPOS) throw new Misread(`an ${what} key is not a string at byte ${pos}`);
      marked.lossyEscape ||= key.lossy;
      pos = this.skipWs(key.end);
      if (pos >= n || s[pos] !== COLON) throw new Misread(`no ":" after an ${what} key at byte ${pos}`);
      pos = value(text(key.bytes), this.skipWs(pos + 1));
    }
  }

  private skipWs(pos: number): number {
    const { s, n } = this;
    while (pos < n && (s[pos] === 0x20 || s[pos] === 0x09 || s[pos] === 0x0a || s[pos] === 0x0d)) pos++;
    return pos;
  }

  /**
   * A string at `pos`: the position after the closing quote (NPOS when
   * there is none), the bytes read and whether an escape was one upstream
   * decodes wrongly.
   */
  private parseString(pos: number): { end: number; bytes: number[]; lossy: boolean } {
    const { s, n } = this;
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
  }

  /** Skips the value at `pos`: a string, a bracketed value, or a bare word up to a delimiter. */
  private skipValue(pos: number): number {
    const { s, n } = this;
    pos = this.skipWs(pos);
    if (pos >= n) return NPOS;
    if (s[pos] === QUOTE) return this.parseString(pos).end;
    if (s[pos] === 0x7b || s[pos] === 0x5b) {
      // Only the opening bracket's own kind is counted, as upstream does.
      const open = s[pos];
      const close = open === 0x7b ? 0x7d : 0x5d;
      let depth = 1;
      pos++;
      while (pos < n && depth > 0) {
        if (s[pos] === QUOTE) {
          pos = this.parseString(pos).end;
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
  }

  /** The first occurrence of `needle` (ASCII) at or after `from`, or NPOS. */
  private find(needle: string, from: number): number {
    const { s, n } = this;
    const pat = [...needle].map((c) => c.charCodeAt(0));
    outer: for (let i = Math.max(0, from); i + pat.length <= n; i++) {
      for (let k = 0; k < pat.length; k++) if (s[i + k] !== pat[k]) continue outer;
      return i;
    }
    return NPOS;
  }

  private startsWith(pos: number, word: string): boolean {
    const { s, n } = this;
    if (pos + word.length > n) return false;
    for (let k = 0; k < word.length; k++) if (s[pos + k] !== word.charCodeAt(k)) return false;
    return true;
  }
}
