// Just enough of the ZIP format (PKWARE APPNOTE 6.3.10, sections 4.3.7,
// 4.3.12 and 4.3.16) to take the C++ SDK out of an executorch wheel: walk the
// central directory, and for each entry under the folders asked for, inflate
// (method 8) or copy (method 0) its bytes. The wheel's sha256 is checked
// before this runs; the checks here still refuse what a wheel never holds
// (ZIP64, encryption, a path leaving the target folder, a size that does
// not add up) rather than writing something unexpected.

import { inflateRawSync } from 'node:zlib';
import { TrtxError } from '../util/errors.js';

export interface ZipEntry {
  name: string;
  /** Unix permission bits from the entry's external attributes (0 when the archive made on Windows). */
  mode: number;
  data(): Buffer;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

function invalid(where: string, why: string): TrtxError {
  return new TrtxError('SDK_WHEEL_INVALID', where, `the executorch wheel is not a ZIP archive trtx can read: ${why}`);
}

function endOfCentralDirectory(zip: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65535.
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === EOCD) return at;
  }
  throw invalid('end of central directory', 'no end-of-central-directory record');
}

/** The entries of `zip` whose names start with one of `prefixes`, in archive order. */
export function zipEntries(zip: Buffer, prefixes: readonly string[]): ZipEntry[] {
  if (zip.length < 22) throw invalid('byte 0', 'shorter than an empty archive');
  const eocd = endOfCentralDirectory(zip);
  const count = zip.readUInt16LE(eocd + 10);
  const cdSize = zip.readUInt32LE(eocd + 12);
  const cdOffset = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdOffset === 0xffffffff) throw invalid('end of central directory', 'ZIP64 archives are not read');
  if (cdOffset + cdSize > eocd) throw invalid('end of central directory', 'the central directory runs past its end');
  const out: ZipEntry[] = [];
  let at = cdOffset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > eocd || zip.readUInt32LE(at) !== CENTRAL) throw invalid(`central directory entry ${i}`, 'bad signature');
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLen = zip.readUInt16LE(at + 28);
    const extraLen = zip.readUInt16LE(at + 30);
    const commentLen = zip.readUInt16LE(at + 32);
    const external = zip.readUInt32LE(at + 38);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    if (!prefixes.some((p) => name.startsWith(p)) || name.endsWith('/')) continue;
    const parts = name.split('/');
    if (name.includes('\\') || name.includes('\0') || parts.some((p) => p === '..' || p === '.' || p === '')) {
      throw invalid(name, 'an entry name that leaves its folder');
    }
    if (flags & 1) throw invalid(name, 'an encrypted entry');
    if (method !== 0 && method !== 8) throw invalid(name, `compression method ${method} (only stored and deflate are read)`);
    const mode = (external >>> 16) & 0o7777;
    if (((external >>> 16) & 0o170000) === 0o120000) throw invalid(name, 'a symbolic link');
    out.push({
      name,
      mode,
      data: () => {
        if (local + 30 > zip.length || zip.readUInt32LE(local) !== LOCAL) throw invalid(name, 'bad local header');
        const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
        if (start + compressed > cdOffset) throw invalid(name, 'the entry runs into the central directory');
        const raw = zip.subarray(start, start + compressed);
        let bytes: Buffer;
        try {
          bytes = method === 0 ? raw : inflateRawSync(raw, { maxOutputLength: Math.max(size, 1) });
        } catch (e) {
          throw invalid(name, `its data does not inflate (${(e as Error).message})`);
        }
        if (bytes.length !== size) throw invalid(name, `${bytes.length} bytes where the directory says ${size}`);
        return bytes;
      },
    });
  }
  return out;
}
