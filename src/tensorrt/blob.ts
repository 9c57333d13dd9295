// The Torch-TensorRT ExecuTorch delegate blob (`TR01` / `TR02`): a 32-byte
// little-endian header, compact JSON metadata, then the TensorRT engine at a
// 16-aligned offset (domain brief section 3).
//
// Reading is split so a caller inside a .pte never touches the engine, which
// is gigabytes: the header (32 bytes) says where the metadata is, the metadata
// says everything trtx checks. `readBlobFromRange` makes exactly those two
// reads.
//
// Order of refusals (a blob with several faults reports the first; the native
// runner's parser follows the same order so the shared vectors agree):
//   header:   TRT_BLOB_TRUNCATED, TRT_BLOB_MAGIC, TRT_BLOB_METADATA_IN_HEADER,
//             TRT_BLOB_ENGINE_ALIGN, TRT_BLOB_METADATA_EXTENT,
//             TRT_BLOB_ENGINE_EXTENT, TRT_BLOB_OVERLAP
//   metadata: TRT_BLOB_METADATA_JSON (whole document: syntax, then types);
//             per binding in order: TRT_BINDING_NAME_EMPTY, _NAME_NUL,
//             TRT_BINDING_DUPLICATE; then TRT_ALIAS_IN_TR01; then per
//             aliased_io entry in order: TRT_ALIAS_MISSING_SIDE, TRT_ALIAS_KIND,
//             TRT_ALIAS_UNKNOWN_BINDING (output side first),
//             TRT_ALIAS_DIRECTION, TRT_ALIAS_DUPLICATE_OUTPUT,
//             TRT_ALIAS_DUPLICATE_INPUT.
//
// Metadata document rules (what TRT_BLOB_METADATA_JSON means):
//   - strict RFC 8259 JSON in UTF-8 (see strict-json.ts: no repeated keys, no
//     raw control characters, no BOM, nesting <= 64), root an object;
//   - `io_bindings` required, a list of objects with `name` (string) and
//     `is_input` (boolean) required, `dtype` (string, default "") and `shape`
//     (list of integers, default []) optional;
//   - `aliased_io` optional (older blobs have none), a list of objects whose
//     `output`, `input`, `kind` are strings when present; a missing or empty
//     side is TRT_ALIAS_MISSING_SIDE, a missing kind means `kv_cache_update`;
//   - `hardware_compatible` boolean (default false), `device_id` integer in
//     int32 range (default 0), `serialized_metadata` and `target_platform`
//     strings (default ""); other keys are ignored.

import { TrtxError } from '../util/errors.js';
import {
  isJsonObject,
  isWellFormedText,
  parseStrictJsonBytes,
  pyJsonCompact,
  utf8Bytes,
  type JsonObject,
  type JsonValue,
} from './strict-json.js';

export const TRT_BACKEND_ID = 'TensorRTBackend';
export const BLOB_HEADER_SIZE = 32;
export const ENGINE_ALIGNMENT = 16;
/** Upper bound on metadata `readBlobFromRange` will read; real metadata is kilobytes. */
export const DEFAULT_MAX_METADATA_BYTES = 64 * 1024 * 1024;

export type BlobMagic = 'TR01' | 'TR02';
export type AliasKind = 'kv_cache_update' | 'user';
export const ALIAS_KINDS: readonly AliasKind[] = ['kv_cache_update', 'user'];

export type BlobErrorCode =
  | 'TRT_BLOB_TRUNCATED'
  | 'TRT_BLOB_MAGIC'
  | 'TRT_BLOB_METADATA_IN_HEADER'
  | 'TRT_BLOB_METADATA_EXTENT'
  | 'TRT_BLOB_ENGINE_EXTENT'
  | 'TRT_BLOB_OVERLAP'
  | 'TRT_BLOB_ENGINE_ALIGN'
  | 'TRT_BLOB_METADATA_JSON'
  | 'TRT_BINDING_NAME_EMPTY'
  | 'TRT_BINDING_NAME_NUL'
  | 'TRT_BINDING_DUPLICATE'
  | 'TRT_ALIAS_MISSING_SIDE'
  | 'TRT_ALIAS_UNKNOWN_BINDING'
  | 'TRT_ALIAS_DIRECTION'
  | 'TRT_ALIAS_DUPLICATE_OUTPUT'
  | 'TRT_ALIAS_DUPLICATE_INPUT'
  | 'TRT_ALIAS_KIND'
  | 'TRT_ALIAS_IN_TR01';

export const BLOB_ERROR_CODES: readonly BlobErrorCode[] = [
  'TRT_BLOB_TRUNCATED',
  'TRT_BLOB_MAGIC',
  'TRT_BLOB_METADATA_IN_HEADER',
  'TRT_BLOB_METADATA_EXTENT',
  'TRT_BLOB_ENGINE_EXTENT',
  'TRT_BLOB_OVERLAP',
  'TRT_BLOB_ENGINE_ALIGN',
  'TRT_BLOB_METADATA_JSON',
  'TRT_BINDING_NAME_EMPTY',
  'TRT_BINDING_NAME_NUL',
  'TRT_BINDING_DUPLICATE',
  'TRT_ALIAS_MISSING_SIDE',
  'TRT_ALIAS_UNKNOWN_BINDING',
  'TRT_ALIAS_DIRECTION',
  'TRT_ALIAS_DUPLICATE_OUTPUT',
  'TRT_ALIAS_DUPLICATE_INPUT',
  'TRT_ALIAS_KIND',
  'TRT_ALIAS_IN_TR01',
];

export interface IoBinding {
  name: string;
  dtype: string;
  shape: number[];
  is_input: boolean;
}

export interface AliasedIo {
  output: string;
  input: string;
  kind: AliasKind;
}

export interface BlobMetadata {
  io_bindings: IoBinding[];
  aliased_io: AliasedIo[];
  hardware_compatible: boolean;
  device_id: number;
  serialized_metadata: string;
  target_platform: string;
}

export interface BlobHeader {
  magic: BlobMagic;
  metadataOffset: number;
  metadataSize: number;
  /** 16-aligned, relative to the start of the blob. */
  engineOffset: number;
  /** u64 on the wire. */
  engineSize: bigint;
  /** Bytes 24..31 as stored (8 bytes). */
  reserved: Uint8Array;
}

export interface ParsedBlob extends BlobHeader {
  metadata: BlobMetadata;
}

export interface BlobLocationOptions {
  /** Prefix for every error location, e.g. `decode > delegate 0 (TensorRTBackend)`. */
  location?: string;
}

const HINT_CORRUPT = 'the delegate blob is corrupt or was not written by Torch-TensorRT; re-export the program';
const HINT_METADATA = 'the engine metadata is malformed; re-export the program with Torch-TensorRT';
const U64_MAX = (1n << 64n) - 1n;
const U32_MAX = 0xffff_ffff;

function loc(opts: BlobLocationOptions | undefined, rel: string): string {
  return opts?.location ? `${opts.location} > ${rel}` : rel;
}

function blobError(code: BlobErrorCode, opts: BlobLocationOptions | undefined, rel: string, message: string, hint = HINT_CORRUPT): TrtxError {
  return new TrtxError(code, loc(opts, rel), message, { hint });
}

/** How a binding is named in a location: bare when unambiguous, JSON-quoted otherwise. */
export function bindingLabel(name: string): string {
  return /^[\x21-\x7e]+$/.test(name) && !name.includes('>') && !name.includes('"') ? name : JSON.stringify(name);
}

function toBlobSize(blobSize: number | bigint): bigint {
  if (typeof blobSize === 'bigint') return blobSize < 0n ? 0n : blobSize;
  if (!Number.isFinite(blobSize) || blobSize < 0) return 0n;
  return BigInt(Math.floor(blobSize));
}

// ---------------------------------------------------------------------------
// Header

export interface ParseHeaderOptions extends BlobLocationOptions {
  /** Total blob size; when given, extents and overlap are checked too. */
  blobSize?: number | bigint;
}

/** Reads and checks the 32-byte header. Extents need `opts.blobSize`. */
export function parseBlobHeader(bytes: Uint8Array, opts: ParseHeaderOptions = {}): BlobHeader {
  const size = opts.blobSize === undefined ? undefined : toBlobSize(opts.blobSize);
  const have = size === undefined ? BigInt(bytes.length) : size < BigInt(bytes.length) ? size : BigInt(bytes.length);
  if (have < BigInt(BLOB_HEADER_SIZE)) {
    throw blobError('TRT_BLOB_TRUNCATED', opts, 'header', `blob has ${have} bytes; the header needs ${BLOB_HEADER_SIZE}`);
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, BLOB_HEADER_SIZE);
  const magicText = String.fromCharCode(bytes[0], bytes[1], bytes[2], bytes[3]);
  if (magicText !== 'TR01' && magicText !== 'TR02') {
    throw blobError('TRT_BLOB_MAGIC', opts, 'header.magic', `unknown magic ${JSON.stringify(magicText)} (expected "TR01" or "TR02")`);
  }
  const header: BlobHeader = {
    magic: magicText,
    metadataOffset: dv.getUint32(4, true),
    metadataSize: dv.getUint32(8, true),
    engineOffset: dv.getUint32(12, true),
    engineSize: dv.getBigUint64(16, true),
    reserved: bytes.slice(24, 32),
  };
  if (header.metadataOffset < BLOB_HEADER_SIZE) {
    throw blobError(
      'TRT_BLOB_METADATA_IN_HEADER',
      opts,
      'header.metadata_offset',
      `metadata offset ${header.metadataOffset} is inside the ${BLOB_HEADER_SIZE}-byte header`,
    );
  }
  if (header.engineOffset % ENGINE_ALIGNMENT !== 0) {
    throw blobError(
      'TRT_BLOB_ENGINE_ALIGN',
      opts,
      'header.engine_offset',
      `engine offset ${header.engineOffset} is not ${ENGINE_ALIGNMENT}-byte aligned`,
    );
  }
  if (size !== undefined) checkExtents(header, size, opts);
  return header;
}

// Every extent is checked as `size > bound - offset` after `offset <= bound`,
// never as `offset + size > bound`: the C++ runner does the same in u64, where
// the sum of an attacker's offset and size wraps past the check.
function checkExtents(h: BlobHeader, blobSize: bigint, opts: BlobLocationOptions | undefined): void {
  const mOff = BigInt(h.metadataOffset);
  const mSize = BigInt(h.metadataSize);
  const eOff = BigInt(h.engineOffset);
  if (mOff > blobSize || mSize > blobSize - mOff) {
    throw blobError(
      'TRT_BLOB_METADATA_EXTENT',
      opts,
      'header.metadata_size',
      `metadata [offset ${h.metadataOffset}, size ${h.metadataSize}] extends past the ${blobSize}-byte blob`,
    );
  }
  if (eOff > blobSize || h.engineSize > blobSize - eOff) {
    throw blobError(
      'TRT_BLOB_ENGINE_EXTENT',
      opts,
      'header.engine_size',
      `engine [offset ${h.engineOffset}, size ${h.engineSize}] extends past the ${blobSize}-byte blob`,
    );
  }
  if (mOff > eOff || mSize > eOff - mOff) {
    throw blobError(
      'TRT_BLOB_OVERLAP',
      opts,
      'header.engine_offset',
      `metadata [${h.metadataOffset}, ${mOff + mSize}) does not end before the engine at ${h.engineOffset}`,
    );
  }
}

// ---------------------------------------------------------------------------
// Metadata

function jsonError(opts: BlobLocationOptions | undefined, rel: string, message: string): TrtxError {
  return blobError('TRT_BLOB_METADATA_JSON', opts, rel, message, HINT_METADATA);
}

function kindOf(v: JsonValue | undefined): string {
  if (v === undefined) return 'nothing (the key is missing)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

// Pre-validation shape: aliased_io sides and kind may be missing or unknown,
// which the semantic pass reports under their own codes.
interface RawAlias {
  output: string | undefined;
  input: string | undefined;
  kind: string;
}

function readMetadataDocument(doc: JsonValue, opts: BlobLocationOptions | undefined): { meta: Omit<BlobMetadata, 'aliased_io'>; aliases: RawAlias[] } {
  if (!isJsonObject(doc)) throw jsonError(opts, 'metadata', `metadata must be a JSON object, got ${kindOf(doc)}`);

  const str = (o: JsonObject, key: string, where: string, dflt?: string): string => {
    const v = o[key];
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== 'string') throw jsonError(opts, where, `${where} must be a string, got ${kindOf(v)}`);
    return v;
  };
  const bool = (o: JsonObject, key: string, where: string, dflt?: boolean): boolean => {
    const v = o[key];
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== 'boolean') throw jsonError(opts, where, `${where} must be true or false, got ${kindOf(v)}`);
    return v;
  };
  const list = (o: JsonObject, key: string, where: string, optional: boolean): JsonValue[] => {
    const v = o[key];
    if (v === undefined && optional) return [];
    if (!Array.isArray(v)) throw jsonError(opts, where, `${where} must be a list, got ${kindOf(v)}`);
    return v;
  };

  const bindings: IoBinding[] = list(doc, 'io_bindings', 'metadata.io_bindings', false).map((b, i) => {
    const where = `metadata.io_bindings[${i}]`;
    if (!isJsonObject(b)) throw jsonError(opts, where, `${where} must be an object, got ${kindOf(b)}`);
    const shape = list(b, 'shape', `${where}.shape`, true).map((d, k) => {
      if (typeof d !== 'number' || !Number.isSafeInteger(d)) {
        throw jsonError(opts, `${where}.shape[${k}]`, `${where}.shape[${k}] must be an integer, got ${typeof d === 'number' ? d : kindOf(d)}`);
      }
      return d;
    });
    return {
      name: str(b, 'name', `${where}.name`),
      dtype: str(b, 'dtype', `${where}.dtype`, ''),
      shape,
      is_input: bool(b, 'is_input', `${where}.is_input`),
    };
  });

  const aliases: RawAlias[] = list(doc, 'aliased_io', 'metadata.aliased_io', true).map((a, j) => {
    const where = `metadata.aliased_io[${j}]`;
    if (!isJsonObject(a)) throw jsonError(opts, where, `${where} must be an object, got ${kindOf(a)}`);
    const side = (key: string): string | undefined => (a[key] === undefined ? undefined : str(a, key, `${where}.${key}`));
    return { output: side('output'), input: side('input'), kind: str(a, 'kind', `${where}.kind`, 'kv_cache_update') };
  });

  const deviceId = doc['device_id'];
  if (deviceId !== undefined && (typeof deviceId !== 'number' || !Number.isInteger(deviceId) || deviceId < -(2 ** 31) || deviceId >= 2 ** 31)) {
    throw jsonError(opts, 'metadata.device_id', `metadata.device_id must be a 32-bit integer, got ${typeof deviceId === 'number' ? deviceId : kindOf(deviceId)}`);
  }

  return {
    meta: {
      io_bindings: bindings,
      hardware_compatible: bool(doc, 'hardware_compatible', 'metadata.hardware_compatible', false),
      device_id: deviceId === undefined ? 0 : (deviceId as number),
      serialized_metadata: str(doc, 'serialized_metadata', 'metadata.serialized_metadata', ''),
      target_platform: str(doc, 'target_platform', 'metadata.target_platform', ''),
    },
    aliases,
  };
}

function checkBindings(bindings: readonly IoBinding[], opts: BlobLocationOptions | undefined): Map<string, { index: number; binding: IoBinding }> {
  const byName = new Map<string, { index: number; binding: IoBinding }>();
  bindings.forEach((b, i) => {
    const dir = b.is_input ? 'input' : 'output';
    if (b.name.length === 0) {
      throw blobError('TRT_BINDING_NAME_EMPTY', opts, `binding #${i}`, `io_bindings[${i}] (${dir}) has an empty name`, HINT_METADATA);
    }
    // TensorRT looks names up through c_str(): a NUL ends the name there, so
    // "x\0y" and "x\0z" would be one tensor to the engine and two here.
    if (b.name.includes('\0')) {
      throw blobError(
        'TRT_BINDING_NAME_NUL',
        opts,
        `binding ${bindingLabel(b.name)}`,
        `io_bindings[${i}] (${dir}) name contains a NUL character`,
        HINT_METADATA,
      );
    }
    const prev = byName.get(b.name);
    if (prev) {
      const prevDir = prev.binding.is_input ? 'input' : 'output';
      throw blobError(
        'TRT_BINDING_DUPLICATE',
        opts,
        `binding ${bindingLabel(b.name)}`,
        `io_bindings[${prev.index}] (${prevDir}) and io_bindings[${i}] (${dir}) share the name ${JSON.stringify(b.name)}; inputs and outputs share one name space`,
        HINT_METADATA,
      );
    }
    byName.set(b.name, { index: i, binding: b });
  });
  return byName;
}

function checkAliases(
  aliases: readonly RawAlias[],
  byName: Map<string, { index: number; binding: IoBinding }>,
  magic: BlobMagic,
  opts: BlobLocationOptions | undefined,
): AliasedIo[] {
  // A TR01 reader predates aliasing and would bind each aliased output to its
  // own buffer: the update would silently go nowhere.
  if (magic === 'TR01' && aliases.length > 0) {
    throw blobError(
      'TRT_ALIAS_IN_TR01',
      opts,
      'aliased_io',
      `a TR01 blob carries ${aliases.length} aliased_io entr${aliases.length === 1 ? 'y' : 'ies'}; aliasing requires magic TR02`,
    );
  }
  const outputs = new Map<string, number>();
  const inputs = new Map<string, number>();
  return aliases.map((a, j) => {
    const where = `aliased_io[${j}]`;
    for (const side of ['output', 'input'] as const) {
      if (a[side] === undefined || a[side] === '') {
        throw blobError('TRT_ALIAS_MISSING_SIDE', opts, where, `entry has no ${side} binding (needs both output and input)`, HINT_METADATA);
      }
    }
    const output = a.output as string;
    const input = a.input as string;
    if (a.kind !== 'kv_cache_update' && a.kind !== 'user') {
      throw blobError('TRT_ALIAS_KIND', opts, where, `unknown kind ${JSON.stringify(a.kind)} (expected "kv_cache_update" or "user")`, HINT_METADATA);
    }
    for (const [side, name] of [['output', output], ['input', input]] as const) {
      if (!byName.has(name)) {
        throw blobError(
          'TRT_ALIAS_UNKNOWN_BINDING',
          opts,
          where,
          `${side} ${JSON.stringify(name)} is not a binding in io_bindings`,
          HINT_METADATA,
        );
      }
    }
    if (byName.get(output)!.binding.is_input) {
      throw blobError('TRT_ALIAS_DIRECTION', opts, where, `output side ${JSON.stringify(output)} names an input binding`, HINT_METADATA);
    }
    if (!byName.get(input)!.binding.is_input) {
      throw blobError('TRT_ALIAS_DIRECTION', opts, where, `input side ${JSON.stringify(input)} names an output binding`, HINT_METADATA);
    }
    // Keyed on each side alone, not on the pair: a repeated output inflates
    // the runtime's aliased-output count whatever input it names.
    const prevOut = outputs.get(output);
    if (prevOut !== undefined) {
      throw blobError(
        'TRT_ALIAS_DUPLICATE_OUTPUT',
        opts,
        where,
        `output ${JSON.stringify(output)} is already aliased by aliased_io[${prevOut}]`,
        HINT_METADATA,
      );
    }
    const prevIn = inputs.get(input);
    if (prevIn !== undefined) {
      throw blobError(
        'TRT_ALIAS_DUPLICATE_INPUT',
        opts,
        where,
        `input ${JSON.stringify(input)} is already aliased by aliased_io[${prevIn}]`,
        HINT_METADATA,
      );
    }
    outputs.set(output, j);
    inputs.set(input, j);
    return { output, input, kind: a.kind };
  });
}

/** Parses and checks metadata JSON bytes for a blob with the given magic. */
export function parseBlobMetadata(json: Uint8Array, magic: BlobMagic, opts: BlobLocationOptions = {}): BlobMetadata {
  const doc = parseStrictJsonBytes(json, 'TRT_BLOB_METADATA_JSON', loc(opts, 'metadata'));
  const { meta, aliases } = readMetadataDocument(doc, opts);
  const byName = checkBindings(meta.io_bindings, opts);
  const aliased_io = checkAliases(aliases, byName, magic, opts);
  return {
    io_bindings: meta.io_bindings,
    aliased_io,
    hardware_compatible: meta.hardware_compatible,
    device_id: meta.device_id,
    serialized_metadata: meta.serialized_metadata,
    target_platform: meta.target_platform,
  };
}

/** Runs the binding and alias checks on metadata built in memory (the writer's gate). */
export function validateMetadata(meta: BlobMetadata, magic: BlobMagic, opts: BlobLocationOptions = {}): void {
  const byName = checkBindings(meta.io_bindings, opts);
  checkAliases(meta.aliased_io, byName, magic, opts);
}

// ---------------------------------------------------------------------------
// Whole blob

/**
 * Parses a blob from its leading bytes. `headAndMetadata` starts at blob
 * offset 0 and must reach the end of the metadata; it may be the whole blob.
 * `blobSize` is the blob's full size (defaults to `headAndMetadata.length`).
 * The engine bytes are never read.
 */
export function parseBlob(headAndMetadata: Uint8Array, blobSize?: number | bigint, opts: BlobLocationOptions = {}): ParsedBlob {
  const size = blobSize === undefined ? BigInt(headAndMetadata.length) : toBlobSize(blobSize);
  const header = parseBlobHeader(headAndMetadata, { ...opts, blobSize: size });
  const end = header.metadataOffset + header.metadataSize;
  if (headAndMetadata.length < end) {
    throw blobError(
      'TRT_BLOB_TRUNCATED',
      opts,
      'metadata',
      `metadata ends at byte ${end} but only ${headAndMetadata.length} bytes were given`,
    );
  }
  const metadata = parseBlobMetadata(headAndMetadata.subarray(header.metadataOffset, end), header.magic, opts);
  return { ...header, metadata };
}

export interface ReadRangeOptions extends BlobLocationOptions {
  /** Refuse metadata larger than this before reading it (default 64 MiB). */
  maxMetadataBytes?: number;
}

/**
 * Parses a blob through a range reader (offsets relative to the blob start):
 * one read of the 32-byte header, one of the metadata, never the engine.
 */
export async function readBlobFromRange(
  read: (offset: number, length: number) => Promise<Uint8Array>,
  blobSize: number | bigint,
  opts: ReadRangeOptions = {},
): Promise<ParsedBlob> {
  const size = toBlobSize(blobSize);
  if (size < BigInt(BLOB_HEADER_SIZE)) {
    throw blobError('TRT_BLOB_TRUNCATED', opts, 'header', `blob has ${size} bytes; the header needs ${BLOB_HEADER_SIZE}`);
  }
  const head = await read(0, BLOB_HEADER_SIZE);
  if (head.length < BLOB_HEADER_SIZE) {
    throw blobError('TRT_BLOB_TRUNCATED', opts, 'header', `read ${head.length} header bytes of ${BLOB_HEADER_SIZE}`);
  }
  const header = parseBlobHeader(head, { ...opts, blobSize: size });
  const limit = opts.maxMetadataBytes ?? DEFAULT_MAX_METADATA_BYTES;
  if (header.metadataSize > limit) {
    throw blobError(
      'TRT_BLOB_METADATA_EXTENT',
      opts,
      'header.metadata_size',
      `metadata of ${header.metadataSize} bytes exceeds the ${limit}-byte limit`,
    );
  }
  const json = header.metadataSize === 0 ? new Uint8Array(0) : await read(header.metadataOffset, header.metadataSize);
  if (json.length < header.metadataSize) {
    throw blobError('TRT_BLOB_TRUNCATED', opts, 'metadata', `read ${json.length} metadata bytes of ${header.metadataSize}`);
  }
  const metadata = parseBlobMetadata(json.subarray(0, header.metadataSize), header.magic, opts);
  return { ...header, metadata };
}

/** The engine bytes of a whole blob already in memory (a view, not a copy). */
export function engineBytes(blob: Uint8Array, parsed: BlobHeader): Uint8Array {
  return blob.subarray(parsed.engineOffset, parsed.engineOffset + Number(parsed.engineSize));
}

// ---------------------------------------------------------------------------
// Writing

export interface MetadataInit {
  io_bindings: IoBinding[];
  aliased_io?: AliasedIo[];
  hardware_compatible?: boolean;
  device_id?: number;
  serialized_metadata?: string;
  target_platform?: string;
}

function completeMetadata(m: MetadataInit): BlobMetadata {
  return {
    io_bindings: m.io_bindings,
    aliased_io: m.aliased_io ?? [],
    hardware_compatible: m.hardware_compatible ?? false,
    device_id: m.device_id ?? 0,
    serialized_metadata: m.serialized_metadata ?? '',
    target_platform: m.target_platform ?? '',
  };
}

// Types are checked at run time too: metadata may come from a decoded file or
// a caller's JSON, and the writer must not emit what the parser refuses.
function checkMetadataTypes(m: BlobMetadata, opts: BlobLocationOptions | undefined): void {
  const bad = (where: string, what: string): never => {
    throw jsonError(opts, where, `${where} ${what}`);
  };
  const text = (v: unknown, where: string): void => {
    if (typeof v !== 'string') bad(where, 'must be a string');
    else if (!isWellFormedText(v)) bad(where, 'has an unpaired surrogate (no UTF-8 form)');
  };
  if (!Array.isArray(m.io_bindings)) bad('metadata.io_bindings', 'must be a list');
  m.io_bindings.forEach((b, i) => {
    const w = `metadata.io_bindings[${i}]`;
    if (typeof b !== 'object' || b === null) bad(w, 'must be an object');
    text(b.name, `${w}.name`);
    text(b.dtype, `${w}.dtype`);
    if (!Array.isArray(b.shape) || !b.shape.every((d) => Number.isSafeInteger(d))) bad(`${w}.shape`, 'must be a list of integers');
    if (typeof b.is_input !== 'boolean') bad(`${w}.is_input`, 'must be true or false');
  });
  if (!Array.isArray(m.aliased_io)) bad('metadata.aliased_io', 'must be a list');
  m.aliased_io.forEach((a, j) => {
    const w = `metadata.aliased_io[${j}]`;
    if (typeof a !== 'object' || a === null) bad(w, 'must be an object');
    for (const k of ['output', 'input', 'kind'] as const) text(a[k], `${w}.${k}`);
  });
  if (typeof m.hardware_compatible !== 'boolean') bad('metadata.hardware_compatible', 'must be true or false');
  if (!Number.isInteger(m.device_id) || m.device_id < -(2 ** 31) || m.device_id >= 2 ** 31) bad('metadata.device_id', 'must be a 32-bit integer');
  text(m.serialized_metadata, 'metadata.serialized_metadata');
  text(m.target_platform, 'metadata.target_platform');
}

/**
 * Metadata as compact JSON with keys in the documented order, byte for byte
 * what Torch-TensorRT's Python writer produces for the same metadata.
 */
export function encodeBlobMetadata(meta: MetadataInit): Uint8Array {
  const m = completeMetadata(meta);
  checkMetadataTypes(m, undefined);
  return utf8Bytes(
    pyJsonCompact({
      io_bindings: m.io_bindings.map((b) => ({ name: b.name, dtype: b.dtype, shape: b.shape, is_input: b.is_input })),
      aliased_io: m.aliased_io.map((a) => ({ output: a.output, input: a.input, kind: a.kind })),
      hardware_compatible: m.hardware_compatible,
      device_id: m.device_id,
      serialized_metadata: m.serialized_metadata,
      target_platform: m.target_platform,
    }),
  );
}

export interface WriteBlobHeadArgs {
  /** Default: TR02 when `aliased_io` is non-empty, else TR01. */
  magic?: BlobMagic;
  metadata: MetadataInit;
  engineSize: number | bigint;
}

/**
 * Header, metadata and padding: every byte of the blob before the engine, for
 * writers that stream the engine from elsewhere. Length == engine offset.
 */
export function writeBlobHead(args: WriteBlobHeadArgs, opts: BlobLocationOptions = {}): Uint8Array {
  const meta = completeMetadata(args.metadata);
  checkMetadataTypes(meta, opts);
  const magic: BlobMagic = args.magic ?? (meta.aliased_io.length > 0 ? 'TR02' : 'TR01');
  validateMetadata(meta, magic, opts);
  const json = encodeBlobMetadata(meta);
  const engineOffset = Math.ceil((BLOB_HEADER_SIZE + json.length) / ENGINE_ALIGNMENT) * ENGINE_ALIGNMENT;
  if (engineOffset > U32_MAX) {
    throw blobError('TRT_BLOB_METADATA_EXTENT', opts, 'header.metadata_size', `metadata of ${json.length} bytes does not fit a u32 engine offset`, HINT_METADATA);
  }
  const engineSize = BigInt(args.engineSize);
  if (engineSize < 0n || engineSize > U64_MAX) {
    throw blobError('TRT_BLOB_ENGINE_EXTENT', opts, 'header.engine_size', `engine size ${engineSize} is not a u64`);
  }
  const out = new Uint8Array(engineOffset);
  const dv = new DataView(out.buffer);
  out.set(utf8Bytes(magic), 0);
  dv.setUint32(4, BLOB_HEADER_SIZE, true);
  dv.setUint32(8, json.length, true);
  dv.setUint32(12, engineOffset, true);
  dv.setBigUint64(16, engineSize, true);
  // Current Torch-TensorRT writers set the first reserved byte; keep it so a
  // blob rewritten by trtx is byte-identical to one they wrote.
  out[24] = 0x01;
  out.set(json, BLOB_HEADER_SIZE);
  return out;
}

export interface WriteBlobArgs {
  magic?: BlobMagic;
  metadata: MetadataInit;
  engine: Uint8Array;
}

/** A complete blob: header, metadata, zero padding to 16, engine. */
export function writeBlob(args: WriteBlobArgs, opts: BlobLocationOptions = {}): Uint8Array {
  const head = writeBlobHead({ magic: args.magic, metadata: args.metadata, engineSize: args.engine.length }, opts);
  const out = new Uint8Array(head.length + args.engine.length);
  out.set(head, 0);
  out.set(args.engine, head.length);
  return out;
}

// ---------------------------------------------------------------------------
// Helpers

/** Input bindings in delegate-argument order. */
export function inputs(meta: BlobMetadata): IoBinding[] {
  return meta.io_bindings.filter((b) => b.is_input);
}

/** Output bindings in output order. */
export function outputs(meta: BlobMetadata): IoBinding[] {
  return meta.io_bindings.filter((b) => !b.is_input);
}

/** Output bindings that an `aliased_io` entry names, in output order. */
export function aliasedOutputs(meta: BlobMetadata): IoBinding[] {
  const aliased = new Set(meta.aliased_io.map((a) => a.output));
  return outputs(meta).filter((b) => aliased.has(b.name));
}
