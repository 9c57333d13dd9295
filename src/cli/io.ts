// What one run of the command line talks to: its two output streams, what
// they are (a terminal, how wide), its environment, its working folder and
// what cancels it. `main(argv, io)` takes them as a value, so a test (or
// any embedder) runs the CLI with its own, several runs at once; bin/trtx
// passes the process's. Below src/cli/ nothing reads them from `process`:
// the commands pass them on as values (eslint.config.js holds that).

import { homedir } from 'node:os';

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
  /** The folder relative paths are resolved against (the process's, for bin/trtx). */
  cwd: string;
  /** Aborting it cancels the run's long work (children: the bridge, the runner, builds); absent, nothing cancels it. */
  signal?: AbortSignal;
}

/**
 * The process's own streams, environment and working folder (bin/trtx adds
 * the signal its handlers abort). The one place the operating system's
 * defaults come in: a process with no HOME gets the home folder the system
 * names for its user (os.homedir()'s fallback), so below src/cli/ the run's
 * HOME and TMPDIR (util/env.ts) are all there is.
 */
export function processIo(signal?: AbortSignal): CliIo {
  const env = process.env.HOME ? process.env : { ...process.env, HOME: homedir() };
  return { stdout: process.stdout, stderr: process.stderr, env, cwd: process.cwd(), signal };
}
