// The `.pte` file header: the FlatBuffers root offset and `ET12` identifier,
// then the optional ExecuTorch extended header at byte 8:
//   [8..11]  magic "eh" + two digits ("eh00")
//   [12..15] u32 header length, counting the magic and this field
//   [16..23] u64 program size (flatbuffer bytes from offset 0)
//   [24..31] u64 segment base offset (0 when there are no segments)
//   [32..39] u64 segment data size (only when length >= 32)
// Every 64-bit field is compared against the real file size before it is
// turned into a number, so a hostile value cannot wrap or lose precision. A
// header that agrees with itself but promises more than the file holds is a
// file cut short (PTE_TRUNCATED, truncated.ts), refused with both sizes.

import type { PteCode } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';
import { FLATBUFFERS_MAX_BUFFER_SIZE } from './flatbuffer-verify.js';
import { claimedFileSize, TRUNCATED_HINT, truncatedFile } from './truncated.js';

export const FILE_IDENTIFIER = 'ET12';
export const EXTENDED_MAGIC = 'eh00';
/** Bytes a reader needs to see the whole header (ExecuTorch's kNumHeadBytes). */
export const HEAD_BYTES = 64;
/** Length of the extended header trtx writes (with segment_data_size). */
export const EXTENDED_HEADER_LENGTH = 32;
const MIN_EXTENDED_LENGTH = 24;
/**
 * What an in-place rewrite (src/pte/in-place.ts) puts at bytes 4..7 while
 * the head is being rewritten, so that no reader takes a half-written head
 * for a program.
 */
export const IN_PLACE_MARKER = 'TXIP';
export const IN_PLACE_JOURNAL_SUFFIX = '.trtx-inplace';

/** The marker, or a torn 4-byte write between it and ET12 (each byte from one of the two). */
function isInterruptedMarker(identifier: string): boolean {
  return [...identifier].every((c, i) => c === IN_PLACE_MARKER[i] || c === FILE_IDENTIFIER[i]);
}

export interface ExtendedHeader {
  magic: string;
  length: number;
  programSize: number;
  segmentBaseOffset: number;
  /** null when the header is too short to carry the field (older files). */
  segmentDataSize: number | null;
}

export interface PteHeader {
  rootOffset: number;
  identifier: string;
  extended: ExtendedHeader | null;
}

const ascii = (b: Uint8Array, at: number, n: number) =>
  Array.from(b.subarray(at, at + n), (c) => (c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '?')).join('');

function fail(code: PteCode, location: string, message: string): never {
  throw new TrtxError(code, location, message);
}

/** Reads a u64 and checks it against `limit` (inclusive) before narrowing. */
function u64Within(view: DataView, at: number, limit: number, code: PteCode, location: string, what: string): number {
  const v = view.getBigUint64(at, true);
  if (v > BigInt(limit)) fail(code, location, `${what} ${v} is past the end of the file (${limit} bytes)`);
  return Number(v);
}

/**
 * Parses the header from the first bytes of a file (at least HEAD_BYTES, or
 * the whole file when it is shorter) and checks it against the file size.
 */
export function parseHeader(head: Uint8Array, fileSize: number): PteHeader {
  if (fileSize < 8 || head.length < 8) refuseShortFile(head, fileSize);
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const identifier = checkIdentifier(head);
  const rootOffset = view.getUint32(0, true);
  const extended = head.length >= 12 && head[8] === 0x65 && head[9] === 0x68 ? parseExtendedHeader(head, view, fileSize) : null;
  checkProgramBounds(rootOffset, extended, fileSize);
  return { rootOffset, identifier, extended };
}

/**
 * Under 8 bytes there is no identifier to read. What is there decides: the
 * start of "ET12" at byte 4 is a program cut short (the file failed, exit
 * 1); anything else, an empty file included, is not a program at all, like
 * any other file without the identifier (exit 2).
 */
function refuseShortFile(head: Uint8Array, fileSize: number): never {
  const seen = ascii(head, 4, Math.max(0, Math.min(head.length, fileSize) - 4));
  if (seen.length > 0 && FILE_IDENTIFIER.startsWith(seen))
    throw new TrtxError('PTE_TRUNCATED', 'header', `the file is ${fileSize} bytes, too short for a program header (8)`, {
      hint: TRUNCATED_HINT,
    });
  throw new TrtxError(
    'PTE_NOT_A_PROGRAM',
    'header',
    fileSize === 0
      ? 'not an ExecuTorch program: the file is empty'
      : `not an ExecuTorch program: ${fileSize} bytes, too short for a program header (8)`,
  );
}

/** Bytes 4..7: ET12, or why the file is not a program trtx reads (an interrupted in-place rewrite, another format version, not a program). */
function checkIdentifier(head: Uint8Array): string {
  const identifier = ascii(head, 4, 4);
  if (identifier === FILE_IDENTIFIER) return identifier;
  if (isInterruptedMarker(identifier)) {
    throw new TrtxError(
      'PTE_REWRITE_INTERRUPTED',
      'header.file_identifier',
      'an in-place rewrite by trtx was interrupted before it finished; the program head is incomplete',
      {
        hint: `rerun \`trtx rewrite FILE --in-place\` (any flags): it finishes the interrupted write from FILE${IN_PLACE_JOURNAL_SUFFIX}`,
      },
    );
  }
  // "ET" and two digits is an ExecuTorch program of another format version
  // (the file failed); anything else is not a program at all (wrong input).
  if (/^ET[0-9]{2}$/.test(identifier)) {
    fail('PTE_IDENTIFIER', 'header.file_identifier', `unsupported program format version "${identifier}" (trtx reads ${FILE_IDENTIFIER})`);
  }
  throw new TrtxError(
    'PTE_NOT_A_PROGRAM',
    'header.file_identifier',
    `not an ExecuTorch program: bytes 4..7 are ${JSON.stringify(identifier)}, a .pte has "${FILE_IDENTIFIER}"`,
  );
}

/** The extended header at byte 8 (its magic starts "eh"): its length, then each field checked against the file. */
function parseExtendedHeader(head: Uint8Array, view: DataView, fileSize: number): ExtendedHeader {
  const magic = ascii(head, 8, 4);
  if (magic !== EXTENDED_MAGIC)
    fail('PTE_EXTENDED_HEADER', 'header.extended.magic', `unsupported extended header "${magic}" (trtx reads ${EXTENDED_MAGIC})`);
  if (head.length < 16)
    throw new TrtxError(
      'PTE_TRUNCATED',
      'header.extended',
      `the file is ${fileSize} bytes and ends inside its extended header (at byte 16 at least)`,
      {
        hint: TRUNCATED_HINT,
      },
    );
  const length = view.getUint32(12, true);
  if (length < MIN_EXTENDED_LENGTH || length > HEAD_BYTES - 8) {
    fail(
      'PTE_EXTENDED_HEADER',
      'header.extended.length',
      `extended header length ${length} is outside [${MIN_EXTENDED_LENGTH}, ${HEAD_BYTES - 8}]`,
    );
  }
  if (head.length < 8 + length) throw truncatedFile('header.extended', fileSize, BigInt(8 + length), `its ${length}-byte extended header`);
  refuseCutShort(view, length, fileSize);
  const programSize = u64Within(view, 16, fileSize, 'PTE_PROGRAM_SIZE', 'header.extended.program_size', 'program size');
  if (programSize < 8 + length)
    fail('PTE_PROGRAM_SIZE', 'header.extended.program_size', `program size ${programSize} is smaller than the headers (${8 + length})`);
  const segmentBaseOffset = u64Within(view, 24, fileSize, 'PTE_SEGMENT_BASE', 'header.extended.segment_base_offset', 'segment base offset');
  if (segmentBaseOffset !== 0 && segmentBaseOffset < programSize) {
    fail(
      'PTE_SEGMENT_BASE',
      'header.extended.segment_base_offset',
      `segment base offset ${segmentBaseOffset} lies inside the program (${programSize} bytes)`,
    );
  }
  let segmentDataSize: number | null = null;
  if (length >= 32) {
    const room = segmentBaseOffset === 0 ? 0 : fileSize - segmentBaseOffset;
    segmentDataSize = u64Within(view, 32, room, 'PTE_SEGMENT_DATA_SIZE', 'header.extended.segment_data_size', 'segment data size');
  }
  return { magic, length, programSize, segmentBaseOffset, segmentDataSize };
}

/**
 * A header whose fields agree with each other but promise a longer file than
 * this one is a file cut short (truncated.ts): refused with both sizes before
 * any field is refused for running past the end.
 */
function refuseCutShort(view: DataView, length: number, fileSize: number): void {
  const claimed = claimedFileSize({
    headerLength: length,
    programSize: view.getBigUint64(16, true),
    segmentBase: view.getBigUint64(24, true),
    segmentDataSize: length >= 32 ? view.getBigUint64(32, true) : null,
  });
  if (claimed !== null && claimed.size > BigInt(fileSize)) throw truncatedFile('header.extended', fileSize, claimed.size, claimed.what);
}

/**
 * The program's size within what a FlatBuffer can be (its offsets are signed
 * 32-bit, so a bigger claim is refused before any program byte is read), and
 * the root table inside the program, past the headers.
 */
function checkProgramBounds(rootOffset: number, extended: ExtendedHeader | null, fileSize: number): void {
  const programSize = extended ? extended.programSize : fileSize;
  if (programSize > FLATBUFFERS_MAX_BUFFER_SIZE) {
    fail(
      'PTE_PROGRAM_SIZE',
      extended ? 'header.extended.program_size' : 'file',
      `program size ${programSize} is larger than a FlatBuffer can be (${FLATBUFFERS_MAX_BUFFER_SIZE} bytes)${extended ? '' : '; a file with no extended header is all program'}`,
    );
  }
  const headerEnd = extended ? 8 + extended.length : 8;
  if (rootOffset < headerEnd || rootOffset > programSize - 4) {
    fail(
      'PTE_ROOT_OFFSET',
      'header.root_offset',
      `root table offset ${rootOffset} is outside the program bytes [${headerEnd}, ${programSize - 4}]`,
    );
  }
}

/** The 32-byte extended header trtx writes. */
export function encodeExtendedHeader(programSize: number, segmentBaseOffset: number, segmentDataSize: number): Uint8Array {
  const out = new Uint8Array(EXTENDED_HEADER_LENGTH);
  const view = new DataView(out.buffer);
  out.set([0x65, 0x68, 0x30, 0x30], 0);
  view.setUint32(4, EXTENDED_HEADER_LENGTH, true);
  view.setBigUint64(8, BigInt(programSize), true);
  view.setBigUint64(16, BigInt(segmentBaseOffset), true);
  view.setBigUint64(24, BigInt(segmentDataSize), true);
  return out;
}

/**
 * The file head: the encoded flatbuffer with the extended header inserted at
 * byte 8 (the root offset moves by the header's length; every other offset
 * in a flatbuffer is relative and unchanged), padded with zeros to `length`.
 */
export function headWithExtendedHeader(fb: Uint8Array, segmentBase: number, segmentDataSize: number, length: number): Uint8Array {
  const programSize = fb.length + EXTENDED_HEADER_LENGTH;
  const head = new Uint8Array(Math.max(length, programSize));
  head.set(fb.subarray(0, 8), 0);
  head.set(encodeExtendedHeader(programSize, segmentBase, segmentDataSize), 8);
  head.set(fb.subarray(8), 8 + EXTENDED_HEADER_LENGTH);
  const view = new DataView(head.buffer);
  view.setUint32(0, view.getUint32(0, true) + EXTENDED_HEADER_LENGTH, true);
  return head;
}
