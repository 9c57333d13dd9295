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
/** Pages a paged source keeps (16 MiB): a FlatBuffer touching every page of 2 GiB is verified in this much, not in 2 GiB held. */
/**
 * The little-endian scalar reads of a source whose bytes come in pages:
 * `page(at)` gives the page holding `at` and the offset in it. The verifier
 * reads every scalar aligned to its size, so none straddles a page.
 */
export function scalarsOverPages(page: (at: number) => [DataView, number]): Pick<ProgramSource, 'u8' | 'u16' | 'i32' | 'u32'> {
  return {
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
  };
}

export const MAX_KEPT_PAGES = 256;

export interface PagedOptions {
  /** File offset of the source's byte 0 (an engine inside a segment). */
  base?: number;
  /** Pages kept at once, the least recently read dropped first (default MAX_KEPT_PAGES). */
  maxPages?: number;
}

function readFully(fd: number, buf: Uint8Array, at: number, path: string, length: number): void {
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, at + done);
    if (n === 0)
      throw new TrtxError('PTE_TRUNCATED', path, `file ended at byte ${at + done} inside the program (${length} bytes)`, {
        hint: TRUNCATED_HINT,
      });
    done += n;
  }
}

/**
 * Bytes [0, length) of an open file (from `base`), read a 64 KiB page at a
 * time on first touch (synchronously: the verifier is synchronous), at most
 * `maxPages` kept: a page dropped and touched again is read again, so what a
 * walk over a hostile buffer holds is bounded whatever pages it touches.
 * Every multi-byte read the verifier makes is aligned to its size, so none
 * straddles a page. `bytes` reads a range directly, kept by nobody.
 */
export function pagedFileSource(
  fd: number,
  length: number,
  path: string,
  opts: PagedOptions = {},
): ProgramSource & { bytes(offset: number, length: number): Uint8Array; pagesRead(): number; pagesKept(): number; bytesRead(): number } {
  const base = opts.base ?? 0;
  const maxPages = opts.maxPages ?? MAX_KEPT_PAGES;
  const pages = new Map<number, DataView>();
  let reads = 0;
  let readBytes = 0;
  const page = (at: number): [DataView, number] => {
    const index = Math.floor(at / PAGE);
    let view = pages.get(index);
    if (view) {
      // Most recently used last: Map keeps insertion order.
      pages.delete(index);
      pages.set(index, view);
    } else {
      const start = index * PAGE;
      const size = Math.min(PAGE, length - start);
      // The page dropped is the one read into: a walk over every page makes no garbage for the collector to find.
      let buf: Uint8Array | undefined;
      if (pages.size >= maxPages) {
        const [oldest, old] = pages.entries().next().value!;
        pages.delete(oldest);
        if (old.byteLength === size) buf = new Uint8Array(old.buffer, old.byteOffset, size);
      }
      buf ??= new Uint8Array(size);
      readFully(fd, buf, base + start, path, length);
      reads += 1;
      readBytes += buf.length;
      view = new DataView(buf.buffer, buf.byteOffset, size);
      pages.set(index, view);
    }
    return [view, at - index * PAGE];
  };
  return {
    length,
    ...scalarsOverPages(page),
    bytes: (offset, n) => {
      const buf = new Uint8Array(n);
      readFully(fd, buf, base + offset, path, length);
      readBytes += n;
      return buf;
    },
    pagesRead: () => reads,
    pagesKept: () => pages.size,
    bytesRead: () => readBytes,
  };
}
