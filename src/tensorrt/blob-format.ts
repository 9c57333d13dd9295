// The Torch-TensorRT ExecuTorch delegate blob (`TR01` / `TR02`): its types,
// constants and refusal codes, shared by the reader (blob-header.ts,
// blob-metadata.ts), the writer (blob-write.ts) and blob.ts, which puts them
// together. Layout: a 32-byte little-endian header, compact JSON metadata,
// then the TensorRT engine at a 16-aligned offset (docs/file-format.md;
// pytorch/TensorRT py/torch_tensorrt/executorch/serialization.py).
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
//             TRT_ALIAS_DUPLICATE_INPUT;
//   then agreement with Torch-TensorRT's own parser (upstream-agreement.ts):
//             per binding TRT_NAME_ESCAPED or TRT_BLOB_UPSTREAM_MISREAD, then
//             aliased_io (TRT_BLOB_KEY_ORDER, TRT_NAME_ESCAPED,
//             TRT_BLOB_UPSTREAM_MISREAD), then device_id (TRT_BLOB_KEY_ORDER,
//             TRT_BLOB_UPSTREAM_MISREAD); a document the upstream walk cannot
//             read at all is TRT_BLOB_UPSTREAM_MISREAD before any of them.
//
// Metadata document rules (what TRT_BLOB_METADATA_JSON means):
//   - strict RFC 8259 JSON in UTF-8 (see strict-json.ts: no repeated keys, no
//     raw control characters, no BOM, nesting <= 64), root an object;
//   - `io_bindings` required, a list of objects with `name` (string) and
//     `is_input` (boolean) required, `dtype` (string, default "") and `shape`
//     (list of integers, default []) optional. The real export writes names
//     only: dtype "" and shape [] mean "not recorded" (backend.py preprocess);
//   - `aliased_io` optional (older blobs have none), a list of objects whose
//     `output`, `input`, `kind` are strings when present; a missing or empty
//     side is TRT_ALIAS_MISSING_SIDE, a missing or empty kind means
//     `kv_cache_update` (as TensorRTBlobHeader.cpp reads it);
//   - `hardware_compatible` boolean (default false), `device_id` integer in
//     int32 range (default 0), `serialized_metadata` and `target_platform`
//     strings (default ""); other keys are ignored.

import { TRT_BLOB_CODES, type TrtBlobCode } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';

export const TRT_BACKEND_ID = 'TensorRTBackend';
export const BLOB_HEADER_SIZE = 32;
export const ENGINE_ALIGNMENT = 16;
/** Upper bound on metadata `readBlobFromRange` will read; real metadata is kilobytes. */
export const DEFAULT_MAX_METADATA_BYTES = 64 * 1024 * 1024;

export type BlobMagic = 'TR01' | 'TR02';
export type AliasKind = 'kv_cache_update' | 'user';
export const ALIAS_KINDS: readonly AliasKind[] = ['kv_cache_update', 'user'];

/** The blob codec's codes (src/codes/formats.ts TRT_BLOB_CODES), shared with the runner and the test vectors. */
export type BlobErrorCode = TrtBlobCode;
export const BLOB_ERROR_CODES = Object.keys(TRT_BLOB_CODES) as BlobErrorCode[];

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

export const HINT_CORRUPT = 'the delegate blob is corrupt or was not written by Torch-TensorRT; re-export the program';
export const HINT_METADATA = 'the engine metadata is malformed; re-export the program with Torch-TensorRT';
export const U64_MAX = (1n << 64n) - 1n;
export const U32_MAX = 0xffff_ffff;

export function loc(opts: BlobLocationOptions | undefined, rel: string): string {
  return opts?.location ? `${opts.location} > ${rel}` : rel;
}

export function blobError(
  code: BlobErrorCode,
  opts: BlobLocationOptions | undefined,
  rel: string,
  message: string,
  hint = HINT_CORRUPT,
): TrtxError {
  return new TrtxError(code, loc(opts, rel), message, { hint });
}

/** How a binding is named in a location: bare when unambiguous, JSON-quoted otherwise. */
export function bindingLabel(name: string): string {
  return /^[\x21-\x7e]+$/.test(name) && !name.includes('>') && !name.includes('"') ? name : JSON.stringify(name);
}

export function toBlobSize(blobSize: number | bigint): bigint {
  if (typeof blobSize === 'bigint') return blobSize < 0n ? 0n : blobSize;
  if (!Number.isFinite(blobSize) || blobSize < 0) return 0n;
  return BigInt(Math.floor(blobSize));
}

export function jsonError(opts: BlobLocationOptions | undefined, rel: string, message: string): TrtxError {
  return blobError('TRT_BLOB_METADATA_JSON', opts, rel, message, HINT_METADATA);
}
