// What the TensorRT blob suites (test/tensorrt-blob*.test.ts) share: a
// parse's outcome as a code, and a range reader that records its reads.

import { expect } from 'vitest';
import { TrtxError } from '../../src/util/errors.js';

export const enc = new TextEncoder();
export const dec = new TextDecoder();

export function outcome(f: () => unknown): { code: string; location: string; message: string } {
  try {
    f();
  } catch (e) {
    if (!(e instanceof TrtxError)) throw e;
    return { code: e.code, location: e.location, message: e.message };
  }
  return { code: 'ok', location: '', message: '' };
}

export async function outcomeAsync(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
  } catch (e) {
    if (!(e instanceof TrtxError)) throw e;
    return e.code;
  }
  return 'ok';
}

/** A range reader over `blob` that records every request. */
export function recorder(blob: Uint8Array) {
  const calls: [number, number][] = [];
  const read = (offset: number, length: number): Promise<Uint8Array> => {
    calls.push([offset, length]);
    return Promise.resolve(blob.slice(offset, offset + length));
  };
  return { calls, read };
}

export function expectRangesAvoidEngine(calls: [number, number][], h: { engineOffset: number; engineSize: bigint }): void {
  for (const [off, len] of calls) {
    const start = BigInt(off);
    const end = start + BigInt(len);
    const eStart = BigInt(h.engineOffset);
    const eEnd = eStart + h.engineSize;
    // Half-open ranges intersect when each starts before the other ends.
    expect(start < eEnd && eStart < end, `read [${start}, ${end}) touches engine [${eStart}, ${eEnd})`).toBe(false);
  }
}
