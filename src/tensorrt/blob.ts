// The Torch-TensorRT ExecuTorch delegate blob (`TR01` / `TR02`), whole: the
// one module callers import. The parts live beside it: blob-format.ts (types,
// codes and the order of refusals), blob-header.ts, blob-metadata.ts,
// upstream-agreement.ts (what Torch-TensorRT's own parser would read) and
// blob-write.ts.
//
// Reading is split so a caller inside a .pte never touches the engine, which
// is gigabytes: the header (32 bytes) says where the metadata is, the metadata
// says everything trtx checks. `readBlobFromRange` makes exactly those two
// reads.

import { parseBlobHeader } from './blob-header.js';
import { parseBlobMetadata } from './blob-metadata.js';
import {
  BLOB_HEADER_SIZE,
  DEFAULT_MAX_METADATA_BYTES,
  blobError,
  toBlobSize,
  type BlobHeader,
  type BlobLocationOptions,
  type BlobMetadata,
  type IoBinding,
  type ParsedBlob,
} from './blob-format.js';

export * from './blob-format.js';
export { parseBlobHeader, type ParseHeaderOptions } from './blob-header.js';
export { parseBlobMetadata, validateMetadata } from './blob-metadata.js';
export {
  encodeBlobMetadata,
  layoutBlobHead,
  writeBlob,
  writeBlobHead,
  type MetadataInit,
  type WriteBlobArgs,
  type WriteBlobHeadArgs,
} from './blob-write.js';

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
  /** Called with the metadata's size once the header is read, before the metadata is: may refuse (throw) or charge it. */
  admitMetadata?: (bytes: number) => void;
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
  opts.admitMetadata?.(header.metadataSize);
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
