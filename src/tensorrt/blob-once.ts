// Each TensorRT blob of an opened file is read and parsed once, whatever
// number of delegates name it. Nothing in the format says a segment (or an
// inline entry) belongs to one delegate: ExecuTorch's emitter shares one
// processed blob between delegates whose lowered bytes are equal, and a
// hostile file can name one segment from every delegate. Parsing per delegate
// held the metadata once per name: 129 delegates on one segment with 60 MiB
// of metadata took V8 down (issue 43). Here the parse is keyed by where the
// blob lives, its parsed form is shared, and what every distinct blob's
// metadata costs is charged once:
//   - to the command's report budget (the metadata read adds to what may be
//     reported, as the FlatBuffer's bytes do, and its parsed form is charged
//     against it), and
//   - to a per-file ceiling, MAX_FILE_METADATA_BYTES: past it the blob is
//     refused with TRT_METADATA_FILE_LIMIT before its metadata is read.
// A refusal is kept location-free and placed under each delegate that asks,
// exactly what parsing with the delegate's location would give.

import type { PteFile } from '../pte/open.js';
import { TrtxError } from '../util/errors.js';
import { DEFAULT_MAX_METADATA_BYTES, readBlobFromRange, type ParsedBlob } from './blob.js';

/** What the TensorRT metadata of one file may add up to, every distinct blob once (real metadata is kilobytes a blob). */
export const MAX_FILE_METADATA_BYTES = DEFAULT_MAX_METADATA_BYTES;

export const METADATA_FILE_LIMIT_HINT =
  'real TensorRT metadata is kilobytes a delegate; the file was not written by Torch-TensorRT or is corrupt';

/** Where a blob lives: a key that names it in its file, and for inline data the bytes it was read from. */
export interface BlobSource {
  key: string;
  size: number;
  /** Inline data: a program edited in memory may swap the bytes under one index, so the memo is checked against them. */
  bytes: Uint8Array | null;
  read: (offset: number, length: number) => Promise<Uint8Array>;
}

interface FileBlobs {
  reads: Map<string, { bytes: Uint8Array | null; result: Promise<ParsedBlob | TrtxError> }>;
  metadataBytes: number;
}

const perFile = new WeakMap<PteFile, FileBlobs>();

function fileBlobs(pte: PteFile): FileBlobs {
  let f = perFile.get(pte);
  if (f === undefined) {
    f = { reads: new Map(), metadataBytes: 0 };
    perFile.set(pte, f);
  }
  return f;
}

function admit(pte: PteFile, f: FileBlobs, bytes: number): void {
  if (f.metadataBytes + bytes > MAX_FILE_METADATA_BYTES) {
    throw new TrtxError(
      'TRT_METADATA_FILE_LIMIT',
      'header.metadata_size',
      `metadata of ${bytes} bytes would bring the file's TensorRT metadata to ${f.metadataBytes + bytes} bytes, past the ${MAX_FILE_METADATA_BYTES}-byte limit for one file`,
      { hint: METADATA_FILE_LIMIT_HINT },
    );
  }
  f.metadataBytes += bytes;
  pte.reportBudget.allowFor(bytes);
  pte.reportBudget.chargeReport(bytes, 'TensorRT blob metadata');
}

async function parseOnce(pte: PteFile, f: FileBlobs, source: BlobSource): Promise<ParsedBlob | TrtxError> {
  try {
    return await readBlobFromRange(source.read, source.size, { admitMetadata: (bytes) => admit(pte, f, bytes) });
  } catch (e) {
    if (e instanceof TrtxError) return e;
    throw e;
  }
}

/** The blob at `source` parsed once per file; a refusal is thrown located under `location`. */
export async function blobOnce(pte: PteFile, source: BlobSource, location: string): Promise<ParsedBlob> {
  const f = fileBlobs(pte);
  let known = f.reads.get(source.key);
  if (known === undefined || known.bytes !== source.bytes) {
    known = { bytes: source.bytes, result: parseOnce(pte, f, source) };
    f.reads.set(source.key, known);
  }
  const result = await known.result;
  if (!(result instanceof TrtxError)) return result;
  const at = result.location ? (location ? `${location} > ${result.location}` : result.location) : location;
  throw new TrtxError(result.code, at, result.message, { hint: result.hint });
}
