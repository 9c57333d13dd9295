// Keeps the last `cap` bytes of a stream and counts the rest. The bridge's
// stderr is TensorRT's build log and can run to gigabytes; only its end says
// why a process died, so memory stays bounded at about `cap` plus one chunk.

import { lastLines } from '../util/last-lines.js';

export class TailBuffer {
  readonly cap: number;
  private buf: Buffer = Buffer.alloc(0);
  private seen = 0;
  private peak = 0;

  constructor(cap: number) {
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`tail cap must be a positive integer, got ${cap}`);
    this.cap = cap;
  }

  push(chunk: Buffer): void {
    this.seen += chunk.length;
    if (chunk.length >= this.cap) {
      // Copy: a subarray would pin the whole (possibly huge) chunk.
      this.buf = Buffer.from(chunk.subarray(chunk.length - this.cap));
    } else {
      const joined = Buffer.concat([this.buf, chunk]);
      this.peak = Math.max(this.peak, joined.length);
      this.buf = joined.length > this.cap ? Buffer.from(joined.subarray(joined.length - this.cap)) : joined;
    }
    this.peak = Math.max(this.peak, this.buf.length);
  }

  /** Bytes seen in total. */
  get total(): number {
    return this.seen;
  }

  /** Most bytes held at once (the bound a test can check). */
  get peakRetained(): number {
    return this.peak;
  }

  /** The retained tail as text; a character cut in half at the front is dropped. */
  text(): string {
    let start = 0;
    // Skip UTF-8 continuation bytes left over from the cut.
    while (start < this.buf.length && start < 4 && ((this.buf[start] ?? 0) & 0xc0) === 0x80) start++;
    return this.buf.subarray(start).toString('utf8');
  }

  /** The last `n` non-empty lines of the tail, for a one-line message. */
  lastLines(n: number): string[] {
    return lastLines(this.text(), n);
  }
}
