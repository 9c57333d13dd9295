// The one redrawn status line a terminal shows (progress.ts draws it). Any
// other output to the terminal clears it first, so a later log line, result
// or error never lands on the end of a half-drawn progress line
// ("...putting copy-back mutations firsterror: BRIDGE_FINALIZE"). A run of
// the CLI has one pair of streams (io.ts), and so one Terminal: every writer
// of that run writes through it.

import type { CliIo } from './io.js';
import type { PathNames } from './path-names.js';

export class Terminal {
  private drawn = false;

  /** `names`: what the run writes shows the paths its user typed as typed (path-names.ts). */
  constructor(
    private readonly io: Pick<CliIo, 'stdout' | 'stderr'>,
    private readonly names?: PathNames,
  ) {}

  private shown(text: string): string {
    return this.names ? this.names.show(text) : text;
  }

  /** Redraws the status line on stderr (a terminal). */
  drawStatusLine(text: string): void {
    this.io.stderr.write(`\r\u001b[2K${this.shown(text)}`);
    this.drawn = true;
  }

  /** Erases the status line if one is drawn; every writer of the CLI calls this before it writes. */
  clearStatusLine(): void {
    if (!this.drawn) return;
    this.drawn = false;
    this.io.stderr.write('\r\u001b[2K');
  }

  /** What the CLI writes to stderr: the status line cleared first. */
  writeStderr(text: string): void {
    this.clearStatusLine();
    this.io.stderr.write(this.shown(text));
  }

  /** What the CLI writes to stdout: the status line cleared first (both streams are often one terminal). */
  writeStdout(text: string): void {
    this.clearStatusLine();
    this.io.stdout.write(this.shown(text));
  }
}
