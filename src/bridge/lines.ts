// The bridge's stdout as lines, and a line as a message may quote it. A
// line is held only up to a limit: a bridge (or a library inside it) that
// writes one endless line must not grow trtx's memory without bound
// (run.ts refuses it as BRIDGE_PROTOCOL, quoting its head).

const QUOTE_CHARS = 160;

/** A line as it may appear in a one-line message: JSON-quoted, cut, with its size. */
export function quoteLine(line: string): string {
  const cut = line.length > QUOTE_CHARS ? line.slice(0, QUOTE_CHARS) + '\u2026' : line;
  const size = Buffer.byteLength(line, 'utf8');
  return JSON.stringify(cut) + (line.length > QUOTE_CHARS ? ` (${size} bytes)` : '');
}

/** Splits a byte stream into lines without holding more than `max` bytes of one. */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly max: number) {}

  /** Complete lines in `chunk`; throws the oversized prefix as a string when a line passes `max`. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      if (this.pendingBytes + piece.length > this.max) throw new OversizedLine(this.head(piece));
      this.pending.push(piece);
      lines.push(Buffer.concat(this.pending).toString('utf8').replace(/\r$/, ''));
      this.pending = [];
      this.pendingBytes = 0;
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length > 0) {
      if (this.pendingBytes + rest.length > this.max) throw new OversizedLine(this.head(rest));
      this.pending.push(Buffer.from(rest));
      this.pendingBytes += rest.length;
    }
    return lines;
  }

  /** What is left without a newline when the stream ends. */
  rest(): string {
    return Buffer.concat(this.pending).toString('utf8');
  }

  private head(extra: Buffer): string {
    return Buffer.concat([...this.pending, extra])
      .subarray(0, 4 * QUOTE_CHARS)
      .toString('utf8');
  }
}

export class OversizedLine extends Error {
  constructor(readonly head: string) {
    super('oversized line');
  }
}
