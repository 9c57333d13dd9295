// The 32-byte header of a TensorRT delegate blob: magic, metadata and engine
// extents (pytorch/TensorRT cpp/src/torch_tensorrt/executorch/TensorRTBlobHeader.cpp,
// TensorRTBlobHeader::parse; py/torch_tensorrt/executorch/serialization.py,
// HEADER_FORMAT "<4sIIIQ8s"). trtx checks what upstream checks, in an order
// the native runner shares, and does so without a wrapping sum.

import { BLOB_HEADER_SIZE, ENGINE_ALIGNMENT, blobError, toBlobSize, type BlobHeader, type BlobLocationOptions } from './blob-format.js';

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
  const magicText = String.fromCharCode(...bytes.subarray(0, 4));
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
