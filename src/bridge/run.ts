// Runs the Python bridge: one request in, validated events out. Every stdout
// line must be a protocol event; the first thing that is not ends the run as
// BRIDGE_PROTOCOL. stderr is the bridge's log: forwarded to a callback and
// kept only as a bounded tail for error messages. A timeout, an abort or a
// protocol failure kills the bridge's whole process group.

import { StringDecoder } from 'node:string_decoder';
import { execa } from 'execa';
import { BRIDGE_ERROR_TYPES, type BridgeCode, type BridgeErrorType, type Code } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';
import { BridgeRequest, parseEventLine, type BridgeEvent, type ErrorEvent, type ResultEvent } from './protocol.js';
import { bridgeEnv, bridgePackageDir } from './env.js';
import { signalGroup, trackGroup, untrackGroup } from './process-group.js';
import { TailBuffer } from './tail-buffer.js';

export interface RunBridgeOptions {
  /** The interpreter (see resolvePython). */
  python: string;
  /** Kill the bridge after this long; 0 or absent: no limit. */
  timeoutMs?: number;
  /** Aborting kills the bridge's process tree and rejects with BRIDGE_CANCELLED. */
  signal?: AbortSignal;
  /** Every validated event, in order, hello and the final one included. A throw ends the run. */
  onEvent?: (event: BridgeEvent) => void;
  /** The bridge's log (stderr) as it arrives. */
  onStderr?: (text: string) => void;
  /** Extra environment; PYTHONPATH here is appended after the bridge package (tests put doubles there). */
  env?: Record<string, string | undefined>;
  /** What relative paths mean inside the bridge; default process.cwd(). */
  cwd?: string;
  /** stderr bytes kept for messages (default 64 KiB). */
  stderrTailBytes?: number;
  /** Longest stdout line accepted (default 8 MiB). */
  maxLineBytes?: number;
  /** Between SIGTERM and SIGKILL when stopping the bridge (default 3 s). */
  killGraceMs?: number;
}

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

const QUOTE_CHARS = 160;

/** A line as it may appear in a one-line message: JSON-quoted, cut, with its size. */
export function quoteLine(line: string): string {
  const cut = line.length > QUOTE_CHARS ? line.slice(0, QUOTE_CHARS) + '\u2026' : line;
  const size = Buffer.byteLength(line, 'utf8');
  return JSON.stringify(cut) + (line.length > QUOTE_CHARS ? ` (${size} bytes)` : '');
}

/** Splits a byte stream into lines without holding more than `max` bytes of one. */
class LineSplitter {
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

class OversizedLine extends Error {
  constructor(readonly head: string) {
    super('oversized line');
  }
}

function describeExit(exitCode: number | null, signal: string | null): string {
  if (signal) return `was killed by ${signal}`;
  if (exitCode !== null) return `exited with code ${exitCode}`;
  return 'ended';
}

/**
 * Runs `python -m trtx_bridge` on `request`. Resolves with the result event;
 * rejects with a BridgeFailure: BRIDGE_<TYPE> for an error event (with its
 * hint), BRIDGE_PROTOCOL, BRIDGE_DIED, BRIDGE_TIMEOUT, BRIDGE_CANCELLED,
 * BRIDGE_PYTHON_NOT_FOUND or BRIDGE_REQUEST; or with whatever onEvent threw.
 */
export async function runBridge(request: BridgeRequest, opts: RunBridgeOptions): Promise<ResultEvent> {
  const location = request.model || opts.python;
  const checked = BridgeRequest.safeParse(request);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new BridgeFailure(
      'BRIDGE_REQUEST',
      location,
      `invalid bridge request: ${issue?.path.join('.') || 'request'}: ${issue?.message}`,
      {},
    );
  }
  if (opts.signal?.aborted) {
    throw new BridgeFailure('BRIDGE_CANCELLED', location, 'cancelled before the bridge started', {});
  }

  const tail = new TailBuffer(opts.stderrTailBytes ?? 64 * 1024);
  const splitter = new LineSplitter(opts.maxLineBytes ?? 8 * 1024 * 1024);
  const decoder = new StringDecoder('utf8');
  const grace = opts.killGraceMs ?? 3000;

  const child = execa(opts.python, ['-m', 'trtx_bridge'], {
    cwd: bridgePackageDir(),
    env: bridgeEnv({ extra: opts.env, cwd: opts.cwd }),
    extendEnv: false,
    input: JSON.stringify(checked.data) + '\n',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    detached: true,
    cleanup: false,
    stripFinalNewline: false,
  });
  const pid = child.pid;
  if (pid !== undefined) trackGroup(pid);

  let failure: Error | undefined;
  let terminal: ResultEvent | ErrorEvent | undefined;
  let sawHello = false;
  let stopping = false;
  let exited = false;
  let exitCode: number | null = null;
  let exitSignal: string | null = null;
  let graceTimer: NodeJS.Timeout | undefined;
  let timeoutTimer: NodeJS.Timeout | undefined;

  const failWith = (err: Error): void => {
    if (failure === undefined) failure = err;
    stop();
  };
  const stop = (): void => {
    if (stopping || pid === undefined) return;
    stopping = true;
    if (exited) {
      signalGroup(pid, 'SIGKILL');
      return;
    }
    signalGroup(pid, 'SIGTERM');
    graceTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), grace);
  };
  const bridgeFailure = (code: BridgeCode, message: string, hint: string): BridgeFailure =>
    new BridgeFailure(code, location, message, {
      hint,
      exitCode,
      signal: exitSignal,
      stderrTail: tail.text(),
      stderrBytes: tail.total,
    });
  const protocolFailure = (line: string, reason: string): BridgeFailure =>
    bridgeFailure(
      'BRIDGE_PROTOCOL',
      `the Python bridge wrote a line that is ${reason}: ${quoteLine(line)}`,
      'Something in the Python environment writes to the bridge\u2019s stdout, or python-bridge does not match this trtx; run with --log-level debug to see the bridge log.',
    );

  const handleLine = (line: string): void => {
    if (failure !== undefined) return;
    if (line.trim() === '') return;
    const parsed = parseEventLine(line);
    if (!parsed.ok) return failWith(protocolFailure(line, parsed.reason));
    const event = parsed.event;
    if (!sawHello) {
      if (event.event !== 'hello') return failWith(protocolFailure(line, 'an event before hello'));
      sawHello = true;
    } else if (event.event === 'hello') {
      return failWith(protocolFailure(line, 'a second hello'));
    }
    if (terminal !== undefined) return failWith(protocolFailure(line, 'an event after the final one'));
    if (event.event === 'result' || event.event === 'error') terminal = event;
    try {
      opts.onEvent?.(event);
    } catch (err) {
      failWith(err instanceof Error ? err : new Error(String(err)));
    }
  };

  child.stdout?.on('data', (chunk: Buffer) => {
    if (failure !== undefined) return;
    let lines: string[];
    try {
      lines = splitter.push(chunk);
    } catch (err) {
      if (err instanceof OversizedLine) {
        return failWith(protocolFailure(err.head, `longer than ${opts.maxLineBytes ?? 8 * 1024 * 1024} bytes`));
      }
      throw err;
    }
    for (const line of lines) handleLine(line);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    tail.push(chunk);
    if (opts.onStderr) {
      const text = decoder.write(chunk);
      if (text) opts.onStderr(text);
    }
  });
  // The bridge may exit before it reads its request; that is reported from
  // its exit status, not as a write error.
  child.stdin?.on('error', () => {});
  child.on('exit', (code, signal) => {
    exited = true;
    exitCode = code;
    exitSignal = signal;
    if (graceTimer) clearTimeout(graceTimer);
    // Whatever the bridge left running in its group would hold our pipes
    // open (and the GPU); the bridge is done, so they go too.
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
  });

  const onAbort = (): void =>
    failWith(
      bridgeFailure('BRIDGE_CANCELLED', 'cancelled; the Python bridge and its child processes were stopped', 'Nothing was written.'),
    );
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.timeoutMs && opts.timeoutMs > 0) {
    timeoutTimer = setTimeout(() => {
      failWith(
        bridgeFailure(
          'BRIDGE_TIMEOUT',
          `the Python bridge did not finish within ${opts.timeoutMs} ms and was stopped`,
          'Raise --timeout (TensorRT builds of large models take many minutes), or run with --log-level debug to see where it stalls.',
        ),
      );
    }, opts.timeoutMs);
  }

  let spawnCode: string | undefined;
  try {
    const settled = await child;
    if (settled.failed && typeof settled.code === 'string' && !exited) spawnCode = settled.code;
  } finally {
    if (timeoutTimer) clearTimeout(timeoutTimer);
    if (graceTimer) clearTimeout(graceTimer);
    opts.signal?.removeEventListener('abort', onAbort);
    if (pid !== undefined) {
      signalGroup(pid, 'SIGKILL');
      untrackGroup(pid);
    }
  }
  const rest = decoder.end();
  if (rest && opts.onStderr) opts.onStderr(rest);

  if (failure !== undefined) {
    // The failure was built when it happened; give it what the process left.
    if (failure instanceof BridgeFailure) {
      throw new BridgeFailure(failure.code, failure.location, failure.message, {
        hint: failure.hint,
        exitCode,
        signal: exitSignal,
        stderrTail: tail.text(),
        stderrBytes: tail.total,
      });
    }
    throw failure;
  }
  if (spawnCode !== undefined) {
    const notFound = spawnCode === 'ENOENT' || spawnCode === 'EACCES';
    throw bridgeFailure(
      notFound ? 'BRIDGE_PYTHON_NOT_FOUND' : 'BRIDGE_SPAWN',
      notFound ? `cannot run ${opts.python} (${spawnCode})` : `starting ${opts.python} failed (${spawnCode})`,
      'Give the interpreter that has torch, torch-tensorrt and executorch with --python PATH or TRTX_PYTHON.',
    );
  }

  const leftover = splitter.rest();
  if (leftover.trim() !== '') {
    if (exitCode !== 0) {
      throw bridgeFailure(
        'BRIDGE_DIED',
        `the Python bridge ${describeExit(exitCode, exitSignal)} in the middle of writing an event: ${quoteLine(leftover)}`,
        diedHint(tail),
      );
    }
    handleLine(leftover);
    // handleLine may have set it; the compiler's narrowing does not see that.
    const late = failure as Error | undefined;
    if (late !== undefined) throw late;
  }

  if (terminal?.event === 'error') {
    const type = terminal.type;
    if (!Object.hasOwn(BRIDGE_ERROR_TYPES, type)) {
      // Only a python-bridge from another trtx names a type this one does not list (src/codes/environment.ts).
      throw bridgeFailure(
        'BRIDGE_PROTOCOL',
        `the Python bridge reported an error of a type this trtx does not know (${type}): ${terminal.message}`,
        terminal.hint,
      );
    }
    // Its exit status is the code's (src/codes/exit.ts: a refused model 1, usage or environment 2).
    throw bridgeFailure(`BRIDGE_${type as BridgeErrorType}`, terminal.message, terminal.hint);
  }
  if (terminal?.event === 'result') {
    if (exitCode === 0) return terminal;
    throw bridgeFailure(
      'BRIDGE_DIED',
      `the Python bridge reported a result but then ${describeExit(exitCode, exitSignal)}`,
      diedHint(tail),
    );
  }
  const last = tail.lastLines(1)[0];
  throw bridgeFailure(
    'BRIDGE_DIED',
    `the Python bridge ${describeExit(exitCode, exitSignal)} before reporting a result` +
      (last ? `; its log ends: ${quoteLine(last)}` : ''),
    diedHint(tail),
  );
}

function diedHint(tail: TailBuffer): string {
  const lines = tail.lastLines(5);
  const shown = lines.length ? ` Last log lines: ${lines.map((l) => quoteLine(l)).join(' | ')}.` : '';
  return (
    'A crash inside TensorRT or CUDA, or running out of host memory (the kernel\u2019s OOM killer sends SIGKILL), ends the bridge this way; run with --log-level debug for its full log.' +
    shown
  );
}
