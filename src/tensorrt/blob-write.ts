// Writing TensorRT delegate blobs byte for byte as Torch-TensorRT's Python
// serializer does (pytorch/TensorRT py/torch_tensorrt/executorch/serialization.py,
// TensorRTBlobMetadata.to_json and serialize_engine): compact JSON with keys
// in a fixed order, json.dumps' escaping, a 32-byte header, zero padding to a
// 16-aligned engine. The writer runs every check the reader runs, on the
// exact bytes it is about to write, so it never emits a blob trtx refuses.

import {
  BLOB_HEADER_SIZE,
  ENGINE_ALIGNMENT,
  HINT_METADATA,
  U32_MAX,
  U64_MAX,
  blobError,
  jsonError,
  type AliasedIo,
  type BlobLocationOptions,
  type BlobMagic,
  type BlobMetadata,
  type IoBinding,
} from './blob-format.js';
import { validateMetadata } from './blob-metadata.js';
import { isWellFormedText, pyJsonCompact, utf8Bytes } from './strict-json.js';

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
  if (!Number.isInteger(m.device_id) || m.device_id < -(2 ** 31) || m.device_id >= 2 ** 31)
    bad('metadata.device_id', 'must be a 32-bit integer');
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
  const json = encodeBlobMetadata(meta);
  validateMetadata(meta, magic, json, opts);
  return layoutBlobHead(magic, json, args.engineSize, opts);
}

/**
 * The bytes before the engine for metadata `json` already encoded, with no
 * check of what the metadata says: serialize_engine's layout alone. Writers
 * go through writeBlobHead; this is for tests that compare the layout with
 * the real serializer's on metadata trtx refuses.
 */
export function layoutBlobHead(
  magic: BlobMagic,
  json: Uint8Array,
  engineSize: number | bigint,
  opts: BlobLocationOptions = {},
): Uint8Array {
  const engineOffset = Math.ceil((BLOB_HEADER_SIZE + json.length) / ENGINE_ALIGNMENT) * ENGINE_ALIGNMENT;
  if (engineOffset > U32_MAX) {
    throw blobError(
      'TRT_BLOB_METADATA_EXTENT',
      opts,
      'header.metadata_size',
      `metadata of ${json.length} bytes does not fit a u32 engine offset`,
      HINT_METADATA,
    );
  }
  const size = BigInt(engineSize);
  if (size < 0n || size > U64_MAX) {
    throw blobError('TRT_BLOB_ENGINE_EXTENT', opts, 'header.engine_size', `engine size ${size} is not a u64`);
  }
  const out = new Uint8Array(engineOffset);
  const dv = new DataView(out.buffer);
  out.set(utf8Bytes(magic), 0);
  dv.setUint32(4, BLOB_HEADER_SIZE, true);
  dv.setUint32(8, json.length, true);
  dv.setUint32(12, engineOffset, true);
  dv.setBigUint64(16, size, true);
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
