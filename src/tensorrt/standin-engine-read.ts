// Reading a reference engine by what it says, not by its size. A version-2
// engine carries its partition's whole program, weights included, and a
// version-3 engine's weights live in the outer program's named data; either
// way what a reader needs is the engine's table, the program's header and
// its flatbuffer: a few pages, however many gigabytes the engine or the
// file holds. So the engine is read through a source that fetches only the
// bytes asked for:
//   - the FlatBuffers verifier walks the engine from 64 KiB pages (a
//     `[ubyte]` vector is checked by its length prefix, never by its body);
//   - the table's fields are read from the same pages;
//   - the program's first HEAD_BYTES say its flatbuffer's size (its extended
//     header), and only those bytes are then read; its segments never are.
// The verifier is synchronous and a file is read asynchronously, so a miss
// throws `Missing`, the driver fetches what was missed and runs the read
// again (a real engine misses 2 to 4 times); past MAX_MISSES it reads the
// engine whole, which is what every read cost before.

import { scalarsOverPages, type ProgramSource } from '../pte/program-source.js';

const PAGE = 64 * 1024;
/** Misses before a read gives up on pages and takes the engine whole (a hostile engine scattered over many pages). */
const MAX_MISSES = 64;

/** Bytes of an engine as its reader sees them: scalars from pages, ranges on demand. */
export interface EngineSource extends ProgramSource {
  /** `length` bytes at `offset` (inside the engine; the caller checks bounds first). */
  bytes(offset: number, length: number): Uint8Array;
}

/** What a source lacks: the read is run again once it is fetched. */
class Missing extends Error {
  constructor(
    readonly offset: number,
    readonly length: number,
    /** A page (kept by index) or a range (kept by offset and length). */
    readonly page: boolean,
  ) {
    super(`engine bytes ${offset}+${length} not read yet`);
  }
}

/** An engine held in memory. */
export function memoryEngineSource(engine: Uint8Array): EngineSource {
  const view = new DataView(engine.buffer, engine.byteOffset, engine.byteLength);
  return {
    length: engine.length,
    u8: (at) => view.getUint8(at),
    u16: (at) => view.getUint16(at, true),
    i32: (at) => view.getInt32(at, true),
    u32: (at) => view.getUint32(at, true),
    bytes: (offset, length) => engine.subarray(offset, offset + length),
  };
}

/** The pages and ranges fetched so far; a read of anything else throws Missing. */
function cachedSource(length: number, pages: Map<number, DataView>, ranges: Map<string, Uint8Array>): EngineSource {
  const page = (at: number): [DataView, number] => {
    const index = Math.floor(at / PAGE);
    const view = pages.get(index);
    if (!view) throw new Missing(index * PAGE, Math.min(PAGE, length - index * PAGE), true);
    return [view, at - index * PAGE];
  };
  return {
    length,
    ...scalarsOverPages(page),
    bytes: (offset, n) => {
      const known = ranges.get(`${offset}+${n}`);
      if (!known) throw new Missing(offset, n, false);
      return known;
    },
  };
}

/** How many bytes of an engine a bounded read fetched, and in how many reads. */
export interface EngineReadCost {
  bytesRead: number;
  reads: number;
}

/**
 * Runs `fn` over an engine of `length` bytes that `read` fetches (offsets
 * inside the engine), fetching only what `fn` touches. `fn` must be
 * deterministic: it is run again after each miss.
 */
export async function readBounded<T>(
  length: number,
  read: (offset: number, length: number) => Promise<Uint8Array>,
  fn: (src: EngineSource) => T,
  cost: EngineReadCost = { bytesRead: 0, reads: 0 },
): Promise<T> {
  const pages = new Map<number, DataView>();
  const ranges = new Map<string, Uint8Array>();
  const src = cachedSource(length, pages, ranges);
  for (let misses = 0; ; misses++) {
    if (misses > MAX_MISSES) {
      const whole = await read(0, length);
      cost.bytesRead += length;
      cost.reads += 1;
      return fn(memoryEngineSource(whole));
    }
    try {
      return fn(src);
    } catch (e) {
      if (!(e instanceof Missing)) throw e;
      const bytes = await read(e.offset, e.length);
      cost.bytesRead += e.length;
      cost.reads += 1;
      if (e.page) pages.set(e.offset / PAGE, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      else ranges.set(`${e.offset}+${e.length}`, bytes);
    }
  }
}

// ---------------------------------------------------------------------------
// Fields of a verified table, read from a source by vtable slot (the
// generated accessors need the whole buffer in memory).

/** The absolute position of a table's field, or 0 when the vtable leaves it out. */
export function fieldPos(src: ProgramSource, table: number, slot: number): number {
  const vtable = table - src.i32(table);
  const vsize = src.u16(vtable);
  const at = 4 + 2 * slot < vsize ? src.u16(vtable + 4 + 2 * slot) : 0;
  return at ? table + at : 0;
}

export function u64At(src: ProgramSource, at: number): bigint {
  return BigInt(src.u32(at)) | (BigInt(src.u32(at + 4)) << 32n);
}

/** The target of the uoffset at `at`. */
export const deref = (src: ProgramSource, at: number) => at + src.u32(at);
