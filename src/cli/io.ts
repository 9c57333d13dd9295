// What one run of the command line talks to: its two output streams, what
// they are (a terminal, how wide) and its environment. `main(argv, io)`
// takes them as a value, so a test (or any embedder) runs the CLI with its
// own streams, several runs at once; bin/trtx passes the process's.

/** A stream the CLI writes text to; a Node stream (process.stdout) is one. */
export interface OutStream {
  write(text: string): unknown;
  /** True on a terminal: colour (stdout), the redrawn status line (stderr). */
  isTTY?: boolean;
  /** The terminal's width, for --help. */
  columns?: number;
}

export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  /** What the CLI reads of the environment itself (NO_COLOR, TRTX_DEBUG, and the defaults it passes on). */
  env: Readonly<Record<string, string | undefined>>;
}

/** The process's own streams and environment (bin/trtx). */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}
