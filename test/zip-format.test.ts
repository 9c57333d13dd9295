// util/zip-format is trtx's one reader of ZIP records (the SDK's wheel, a
// model file's kind). Archives written by Python's zipfile, the writer
// torch.save and pip's wheels come from: classic, ZIP64 (forced), with an
// archive comment, stored and deflated.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  EOCD_SEARCH,
  LOCAL_HEADER_SIZE,
  localDataStart,
  readCentralDirectory,
  readZip64End,
  readZipEnd,
  ZIP64_END_SIZE,
} from '../src/util/zip-format.js';
import { PYTHON } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const WRITE = `
import sys, zipfile
path, zip64, comment = sys.argv[1], sys.argv[2] == '1', sys.argv[3].encode()
with zipfile.ZipFile(path, 'w') as z:
    z.comment = comment
    with z.open(zipfile.ZipInfo('a/stored.txt'), 'w', force_zip64=zip64) as f:
        f.write(b'stored bytes')
    info = zipfile.ZipInfo('a/deflated.bin')
    info.compress_type = zipfile.ZIP_DEFLATED
    with z.open(info, 'w', force_zip64=zip64) as f:
        f.write(b'x' * 5000)
`;

function entriesOf(zip: Buffer) {
  const tailStart = Math.max(0, zip.length - EOCD_SEARCH);
  const end = readZipEnd(zip.subarray(tailStart));
  if (!end) throw new Error('no end record');
  let { cdOffset, cdSize } = end;
  if (end.zip64 && end.zip64EndOffset !== null) {
    const z64 = readZip64End(zip.subarray(end.zip64EndOffset, end.zip64EndOffset + ZIP64_END_SIZE));
    if (!z64) throw new Error('no zip64 end record');
    ({ cdOffset, cdSize } = z64);
  }
  return readCentralDirectory(zip.subarray(cdOffset, cdOffset + cdSize)).map((e) => {
    const start = localDataStart(zip.subarray(e.localOffset, e.localOffset + LOCAL_HEADER_SIZE), e.localOffset);
    if (start === null) throw new Error(`no local header for ${e.name}`);
    const raw = zip.subarray(start, start + e.compressedSize);
    return { name: e.name, size: e.size, data: e.method === 8 ? inflateRawSync(raw) : raw };
  });
}

describe('util/zip-format', () => {
  const dir = tempDir('zip-format');
  for (const [zip64, comment] of [
    ['0', ''],
    ['1', ''],
    ['0', 'c'.repeat(300)],
    ['1', 'a comment'],
  ] as const) {
    it(`reads what zipfile writes (zip64 ${zip64}, comment of ${comment.length} bytes)`, () => {
      const path = join(dir, `z-${zip64}-${comment.length}.zip`);
      execFileSync(PYTHON, ['-c', WRITE, path, zip64, comment]);
      const zip = readFileSync(path);
      const end = readZipEnd(zip.subarray(Math.max(0, zip.length - EOCD_SEARCH)));
      expect(end?.count).toBe(2);
      const entries = entriesOf(zip);
      expect(entries.map((e) => e.name)).toEqual(['a/stored.txt', 'a/deflated.bin']);
      expect(entries[0]?.data.toString()).toBe('stored bytes');
      expect(entries[1]?.data.equals(Buffer.alloc(5000, 'x'))).toBe(true);
      expect(entries.map((e) => e.size)).toEqual([12, 5000]);
    });
  }

  it('answers null or stops, never throws, on what is not a zip', () => {
    expect(readZipEnd(Buffer.from('not a zip at all, no end record here'))).toBeNull();
    expect(readZip64End(Buffer.alloc(ZIP64_END_SIZE))).toBeNull();
    expect(readCentralDirectory(Buffer.from('PK\x01\x02 cut short'))).toEqual([]);
    expect(localDataStart(Buffer.alloc(LOCAL_HEADER_SIZE), 0)).toBeNull();
  });
});
