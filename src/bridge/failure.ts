// How a bridge run fails: a TrtxError with the code (BRIDGE_*) plus what the
// process left behind (exit status, signal, the end of its log), and the
// words a message uses for how it ended.

import type { Code } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';
import { quoteLine } from './lines.js';
import type { TailBuffer } from './tail-buffer.js';

/** A bridge failure: a TrtxError plus what the process left behind. */
export class BridgeFailure extends TrtxError {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** The end of the bridge's stderr (bounded). */
  readonly stderrTail: string;
  /** How many stderr bytes the bridge wrote in all. */
  readonly stderrBytes: number;

  constructor(
    code: Code,
    location: string,
    message: string,
    opts: { hint?: string; exitCode?: number | null; signal?: string | null; stderrTail?: string; stderrBytes?: number },
  ) {
    super(code, location, message, { hint: opts.hint });
    this.name = 'BridgeFailure';
    this.exitCode = opts.exitCode ?? null;
    this.signal = opts.signal ?? null;
    this.stderrTail = opts.stderrTail ?? '';
    this.stderrBytes = opts.stderrBytes ?? 0;
  }
}

export function describeExit(exitCode: number | null, signal: string | null): string {
  if (signal) return `was killed by ${signal}`;
  if (exitCode !== null) return `exited with code ${exitCode}`;
  return 'ended';
}

export function diedHint(tail: TailBuffer): string {
  const lines = tail.lastLines(5);
  const shown = lines.length ? ` Last log lines: ${lines.map((l) => quoteLine(l)).join(' | ')}.` : '';
  return (
    'A crash inside TensorRT or CUDA, or running out of host memory (the kernel\u2019s OOM killer sends SIGKILL), ends the bridge this way; run with --log-level debug for its full log.' +
    shown
  );
}
