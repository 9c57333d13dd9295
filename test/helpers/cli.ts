// Runs the trtx command line in this process (`main(argv, io)` from
// src/cli/main.ts, what bin/trtx calls) on streams of its own, capturing what
// it writes to stdout and stderr (log lines included, in either format) and
// the exit code it returns. Far faster than a process per case;
// test/cli-check.test.ts also runs bin/trtx once to prove the wiring.
//
// Runs go at once: each has its own streams, exit status, report budget,
// environment and working folder (a relative path means io.cwd, and what
// the run prints names it as typed: src/cli/path-names.ts). Below src/cli/ nothing reads the
// process's (eslint.config.js forbids `process` there), so a run's
// variables, the ones children read included (TRTX_PYTHON, the Python
// doubles' TRTX_DOUBLE_*, TRTX_RUNNER_BIN), travel in its io.env alone and
// process.env is never changed.
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Both streams in the order they were written, as one pipe for both (a terminal) shows them. */
  output: string;
}

export interface CliOptions {
  /** Environment variables for this run over the process's (undefined removes one). */
  env?: Record<string, string | undefined>;
  /** Whether stdout claims to be a terminal (colour); default not. */
  stdoutIsTTY?: boolean;
  /** The run's working folder, what the paths in args mean (as a user who typed the command there); default the process's. */
  cwd?: string;
  /** Cancels the run (as Ctrl-C does the binary's). */
  signal?: AbortSignal;
}

export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  let output = '';
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  // A variable set to undefined is removed, as in process.env.
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const io: CliIo = {
    stdout: {
      isTTY: Boolean(options.stdoutIsTTY),
      write: (text: string) => {
        output += text;
        stdout += text;
      },
    },
    stderr: {
      isTTY: false,
      write: (text: string) => {
        output += text;
        stderr += text;
      },
    },
    env,
    cwd: options.cwd ?? process.cwd(),
    signal: options.signal,
  };
  const code = await main(args, io);
  return { code, stdout, stderr, output };
}
