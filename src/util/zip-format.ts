// The ZIP records trtx reads (PKWARE APPNOTE 6.3.10: 4.3.7 local file header,
// 4.3.12 central directory header, 4.3.14-4.3.16 the end-of-central-directory
// records, 4.5.3 the ZIP64 extended information field), parsed from bytes
// the caller has read. One reader of the format for both of trtx's uses:
// unpacking the ExecuTorch SDK from a wheel held in memory (src/sdk/zip.ts)
// and telling a model file's kind from a few reads of a file that may be
// gigabytes (src/export/model-kind.ts). Each caller does its own I/O and
// keeps its own policy (what it refuses, what error it raises); nothing here
// throws on malformed input: it answers null or stops at the first record
// that is not one.

export const LOCAL_HEADER_SIZE = 30;
const CENTRAL_HEADER_SIZE = 46;
const EOCD_SIZE = 22;
/** The end-of-central-directory record and the longest comment it may carry. */
export const EOCD_SEARCH = EOCD_SIZE + 0xffff;

const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;
const ZIP64_EXTRA = 0x0001;
const SATURATED = 0xffffffff;

export interface ZipEnd {
  /** Where the record starts in the tail it was read from. */
  offset: number;
  /** Entries the record announces (0xffff in a ZIP64 archive's classic record). */
  count: number;
  cdOffset: number;
  cdSize: number;
  /** The classic record's fields were saturated and a ZIP64 locator follows it. */
  zip64: boolean;
  /** Where the ZIP64 end record is, when `zip64`; read ZIP64_END_SIZE bytes there and call readZip64End. */
  zip64EndOffset: number | null;
}

export const ZIP64_END_SIZE = 56;

/**
 * The end-of-central-directory record in `tail`, the last bytes of the file
 * (at least EOCD_SEARCH of them when the file is longer), found from the
 * end; null when there is none.
 */
export function readZipEnd(tail: Buffer): ZipEnd | null {
  for (let at = tail.length - EOCD_SIZE; at >= 0 && at >= tail.length - EOCD_SEARCH; at--) {
    if (tail.readUInt32LE(at) !== SIG_EOCD) continue;
    const count = tail.readUInt16LE(at + 10);
    const cdSize = tail.readUInt32LE(at + 12);
    const cdOffset = tail.readUInt32LE(at + 16);
    const locator = at - 20;
    const zip64 = cdOffset === SATURATED && locator >= 0 && tail.readUInt32LE(locator) === SIG_ZIP64_LOCATOR;
    return { offset: at, count, cdOffset, cdSize, zip64, zip64EndOffset: zip64 ? Number(tail.readBigUInt64LE(locator + 8)) : null };
  }
  return null;
}

/** The ZIP64 end record's directory extent, or null when `record` is not one. */
export function readZip64End(record: Buffer): { count: number; cdSize: number; cdOffset: number } | null {
  if (record.length < ZIP64_END_SIZE || record.readUInt32LE(0) !== SIG_ZIP64_EOCD) return null;
  return {
    count: Number(record.readBigUInt64LE(32)),
    cdSize: Number(record.readBigUInt64LE(40)),
    cdOffset: Number(record.readBigUInt64LE(48)),
  };
}

export interface ZipDirectoryEntry {
  name: string;
  flags: number;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** The external attributes: Unix mode bits in the high 16 bits when made on Unix. */
  external: number;
}

/**
 * The central directory headers in `cd`, in order, up to the first bytes
 * that are not one (so a caller that expects `count` entries compares).
 * Sizes and the local offset come from the ZIP64 extra field where the
 * classic fields are saturated.
 */
export function readCentralDirectory(cd: Buffer): ZipDirectoryEntry[] {
  const out: ZipDirectoryEntry[] = [];
  let at = 0;
  while (at + CENTRAL_HEADER_SIZE <= cd.length && cd.readUInt32LE(at) === SIG_CENTRAL) {
    const nameLength = cd.readUInt16LE(at + 28);
    const extraLength = cd.readUInt16LE(at + 30);
    const commentLength = cd.readUInt16LE(at + 32);
    const nameEnd = at + CENTRAL_HEADER_SIZE + nameLength;
    if (nameEnd + extraLength > cd.length) break;
    const entry: ZipDirectoryEntry = {
      name: cd.toString('utf8', at + CENTRAL_HEADER_SIZE, nameEnd),
      flags: cd.readUInt16LE(at + 8),
      method: cd.readUInt16LE(at + 10),
      compressedSize: cd.readUInt32LE(at + 20),
      size: cd.readUInt32LE(at + 24),
      localOffset: cd.readUInt32LE(at + 42),
      external: cd.readUInt32LE(at + 38),
    };
    applyZip64Extra(entry, cd.subarray(nameEnd, nameEnd + extraLength));
    out.push(entry);
    at = nameEnd + extraLength + commentLength;
  }
  return out;
}

/** 4.5.3: the 8-byte values of the saturated fields, in the order size, compressed size, local offset. */
function applyZip64Extra(entry: ZipDirectoryEntry, extra: Buffer): void {
  for (let e = 0; e + 4 <= extra.length; e += 4 + extra.readUInt16LE(e + 2)) {
    if (extra.readUInt16LE(e) !== ZIP64_EXTRA) continue;
    let f = e + 4;
    const end = Math.min(extra.length, f + extra.readUInt16LE(e + 2));
    const next = (current: number): number => {
      if (current !== SATURATED || f + 8 > end) return current;
      f += 8;
      return Number(extra.readBigUInt64LE(f - 8));
    };
    entry.size = next(entry.size);
    entry.compressedSize = next(entry.compressedSize);
    entry.localOffset = next(entry.localOffset);
    return;
  }
}

/** Where an entry's data starts, from its local header (LOCAL_HEADER_SIZE bytes at its offset); null when it is not one. */
export function localDataStart(header: Buffer, localOffset: number): number | null {
  if (header.length < LOCAL_HEADER_SIZE || header.readUInt32LE(0) !== SIG_LOCAL) return null;
  return localOffset + LOCAL_HEADER_SIZE + header.readUInt16LE(26) + header.readUInt16LE(28);
}
