// The program bytes as the verifier reads them: from memory, or paged from
// the file. A header may claim a program of up to 2 GiB; reading that much
// before knowing whether the flatbuffer uses it would let a 60-byte header
// cost a gigabyte of memory. Verifying from pages first finds the extent the
// program really uses (one past the last byte any table, vector or string
// touches), and only that prefix is then read whole.

import { readSync } from 'node:fs';
import { TRUNCATED_HINT } from './truncated.js';
import { TrtxError } from '../util/errors.js';

export interface ProgramSource {
  readonly length: number;
  u8(at: number): number;
  u16(at: number): number;
  i32(at: number): number;
  u32(at: number): number;
}

export function bytesSource(bytes: Uint8Array): ProgramSource {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    length: bytes.length,
    u8: (at) => view.getUint8(at),
    u16: (at) => view.getUint16(at, true),
    i32: (at) => view.getInt32(at, true),
    u32: (at) => view.getUint32(at, true),
  };
}

const PAGE = 64 * 1024;

/**
 * Bytes [0, length) of an open file, read a 64 KiB page at a time on first
 * touch (synchronously: the verifier is synchronous). Every multi-byte read
 * the verifier makes is aligned to its size, so none straddles a page.
 */
export function pagedFileSource(fd: number, length: number, path: string): ProgramSource & { pagesRead(): number } {
  const pages = new Map<number, DataView>();
  const page = (at: number): [DataView, number] => {
    const index = Math.floor(at / PAGE);
    let view = pages.get(index);
    if (!view) {
      const start = index * PAGE;
      const buf = new Uint8Array(Math.min(PAGE, length - start));
      let done = 0;
      while (done < buf.length) {
        const n = readSync(fd, buf, done, buf.length - done, start + done);
        if (n === 0)
          throw new TrtxError('PTE_TRUNCATED', path, `file ended at byte ${start + done} inside the program (${length} bytes)`, {
            hint: TRUNCATED_HINT,
          });
        done += n;
      }
      view = new DataView(buf.buffer);
      pages.set(index, view);
    }
    return [view, at - index * PAGE];
  };
  return {
    length,
    u8: (at) => {
      const [v, o] = page(at);
      return v.getUint8(o);
    },
    u16: (at) => {
      const [v, o] = page(at);
      return v.getUint16(o, true);
    },
    i32: (at) => {
      const [v, o] = page(at);
      return v.getInt32(o, true);
    },
    u32: (at) => {
      const [v, o] = page(at);
      return v.getUint32(o, true);
    },
    pagesRead: () => pages.size,
  };
}
