// Takes the C++ SDK out of an executorch wheel held in memory: walk the
// central directory (the records are read by util/zip-format, trtx's one
// reader of the format), and for each entry under the folders asked for,
// inflate (method 8) or copy (method 0) its bytes. The wheel's sha256 is checked
// before this runs; the checks here still refuse what a wheel never holds
// (ZIP64, encryption, a path leaving the target folder, a size that does
// not add up) rather than writing something unexpected.

import { inflateRawSync } from 'node:zlib';
import { TrtxError } from '../util/errors.js';
import { EOCD_SEARCH, LOCAL_HEADER_SIZE, localDataStart, readCentralDirectory, readZipEnd } from '../util/zip-format.js';

export interface ZipEntry {
  name: string;
  /** Unix permission bits from the entry's external attributes (0 when the archive made on Windows). */
  mode: number;
  data(): Buffer;
}

function invalid(where: string, why: string): TrtxError {
  return new TrtxError('SDK_WHEEL_INVALID', where, `the executorch wheel is not a ZIP archive trtx can read: ${why}`);
}

export function zipEntries(zip: Buffer, prefixes: readonly string[]): ZipEntry[] {
  if (zip.length < 22) throw invalid('byte 0', 'shorter than an empty archive');
  const tailStart = Math.max(0, zip.length - EOCD_SEARCH);
  const end = readZipEnd(zip.subarray(tailStart));
  if (!end) throw invalid('end of central directory', 'no end-of-central-directory record');
  const eocd = tailStart + end.offset;
  const { count, cdOffset, cdSize } = end;
  if (end.zip64 || count === 0xffff || cdOffset === 0xffffffff) throw invalid('end of central directory', 'ZIP64 archives are not read');
  if (cdOffset + cdSize > eocd) throw invalid('end of central directory', 'the central directory runs past its end');
  const directory = readCentralDirectory(zip.subarray(cdOffset, cdOffset + cdSize));
  if (directory.length !== count) throw invalid(`central directory entry ${directory.length}`, 'bad signature');
  const out: ZipEntry[] = [];
  for (const { name, flags, method, compressedSize: compressed, size, localOffset: local, external } of directory) {
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
        const start = localDataStart(zip.subarray(local, local + LOCAL_HEADER_SIZE), local);
        if (start === null) throw invalid(name, 'bad local header');
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
