// The one redrawn status line a terminal shows (progress.ts draws it). Any
// other output to the terminal clears it first, so a later log line, result
// or error never lands on the end of a half-drawn progress line
// ("...putting copy-back mutations firsterror: BRIDGE_FINALIZE"). The
// terminal is one per process, so this state is too.

let drawn = false;

/** Redraws the status line on stderr (a terminal). */
export function drawStatusLine(text: string): void {
  process.stderr.write(`\r\u001b[2K${text}`);
  drawn = true;
}

/** Erases the status line if one is drawn; every writer of the CLI calls this before it writes. */
export function clearStatusLine(): void {
  if (!drawn) return;
  drawn = false;
  process.stderr.write('\r\u001b[2K');
}

/** What the CLI writes to stderr: the status line cleared first. */
export function writeStderr(text: string): void {
  clearStatusLine();
  process.stderr.write(text);
}

/** What the CLI writes to stdout: the status line cleared first (both streams are often one terminal). */
export function writeStdout(text: string): void {
  clearStatusLine();
  process.stdout.write(text);
}
