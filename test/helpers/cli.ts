// Runs the trtx command line in this process (`main(argv)` from
// src/cli/main.ts, what bin/trtx calls), capturing what it writes to stdout
// and stderr and the exit code it returns. Far faster than a process per
// case; test/cli-check.test.ts also runs bin/trtx once to prove the wiring.
// Log lines are captured with stderr in the default text format; under
// --log-format json pino writes straight to fd 2 and they are not.
import { main } from '../../src/cli/main.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Environment variables for this run (undefined removes one), put back as they were after it. */
  env?: Record<string, string | undefined>;
}

// The streams, process.exitCode and process.env are global: calls take
// turns, and each sets its environment only while its turn lasts.
let queue: Promise<unknown> = Promise.resolve();

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const run = queue.then(() => withEnv(options.env ?? {}, () => runOnce(args)));
  queue = run.catch(() => {});
  return run;
}

async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (vs: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(vs)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(before);
  }
}

async function runOnce(args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  // Saved to be put back as they were; never called detached.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- restored as is after the run
  const out = process.stdout.write;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- restored as is after the run
  const err = process.stderr.write;
  const capture = (sink: (s: string) => void) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      sink(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      cb?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture((s) => (stdout += s));
  process.stderr.write = capture((s) => (stderr += s));
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exitCode = before;
  }
}
