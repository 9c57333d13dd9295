// Runs the Python bridge: one request in, validated events out. Every stdout
// line must be a protocol event; the first thing that is not ends the run as
// BRIDGE_PROTOCOL. stderr is the bridge's log: forwarded to a callback and
// kept only as a bounded tail for error messages. A timeout, an abort or a
// protocol failure kills the bridge's whole process group. The process and
// its state are bridge-process.ts; the order of events, event-order.ts.

import { rm } from 'node:fs/promises';
import { BRIDGE_ERROR_TYPES, type BridgeErrorType } from '../codes/index.js';
import { BridgeProcess, type BridgeProcessOptions } from './bridge-process.js';
import { EventOrder } from './event-order.js';
import { BridgeFailure, describeExit, diedHint } from './failure.js';
import { LineSplitter, OversizedLine, quoteLine } from './lines.js';
import { BridgeRequest, type BridgeEvent, type ResultEvent } from './protocol.js';

export { BridgeFailure } from './failure.js';
export { quoteLine } from './lines.js';

export interface RunBridgeOptions extends BridgeProcessOptions {
  /** Every validated event, in order, hello and the final one included. A throw ends the run. */
  onEvent?: (event: BridgeEvent) => void;
  /** Longest stdout line accepted (default 8 MiB). */
  maxLineBytes?: number;
}

/**
 * Runs `python -m trtx_bridge` on `request`. Resolves with the result event;
 * rejects with a BridgeFailure: BRIDGE_<TYPE> for an error event (with its
 * hint), BRIDGE_PROTOCOL, BRIDGE_DIED, BRIDGE_TIMEOUT, BRIDGE_CANCELLED,
 * BRIDGE_PYTHON_NOT_FOUND or BRIDGE_REQUEST; or with whatever onEvent threw.
 */
export async function runBridge(request: BridgeRequest, opts: RunBridgeOptions): Promise<ResultEvent> {
  const location = request.model || opts.python;
  const checked = validRequest(request, location);
  if (opts.signal?.aborted) {
    throw new BridgeFailure('BRIDGE_CANCELLED', location, 'cancelled before the bridge started', {});
  }
  const proc = new BridgeProcess(JSON.stringify(checked) + '\n', location, opts);
  const order = new EventOrder();
  const maxLine = opts.maxLineBytes ?? 8 * 1024 * 1024;
  const splitter = new LineSplitter(maxLine);
  const onLine = (line: string) => handleLine(proc, order, line, opts.onEvent);
  proc.onStdout((chunk) => {
    let lines: string[];
    try {
      lines = splitter.push(chunk);
    } catch (err) {
      if (err instanceof OversizedLine) return proc.fail(protocolFailure(proc, err.head, `longer than ${maxLine} bytes`));
      throw err;
    }
    for (const line of lines) onLine(line);
  });
  proc.watch();
  const spawnCode = await proc.settled();
  try {
    throwFailure(proc, spawnCode, opts.python);
    readLastLine(proc, splitter.rest(), onLine);
    return verdict(proc, order);
  } catch (err) {
    await removeOutputs(checked);
    throw err;
  }
}

/**
 * A failed run leaves nothing at the paths the request named: they are the
 * caller's temporaries (protocol.ts: `output`, `reference.path`), and a
 * bridge stopped for a bad line (BRIDGE_PROTOCOL) may well have finished
 * writing before the signal reached it.
 */
async function removeOutputs(request: BridgeRequest): Promise<void> {
  const paths = [request.output, request.reference?.path ?? ''].filter((p) => p !== '');
  await Promise.all(paths.map((p) => rm(p, { force: true }).catch(() => {})));
}

function validRequest(request: BridgeRequest, location: string): BridgeRequest {
  const checked = BridgeRequest.safeParse(request);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0];
  throw new BridgeFailure(
    'BRIDGE_REQUEST',
    location,
    `invalid bridge request: ${issue?.path.join('.') || 'request'}: ${issue?.message}`,
    {},
  );
}

function protocolFailure(proc: BridgeProcess, line: string, reason: string): BridgeFailure {
  return proc.bridgeFailure(
    'BRIDGE_PROTOCOL',
    `the Python bridge wrote a line that is ${reason}: ${quoteLine(line)}`,
    'Something in the Python environment writes to the bridge\u2019s stdout, or python-bridge does not match this trtx; run with --log-level debug to see the bridge log.',
  );
}

/** One stdout line: an event in its place goes to onEvent; anything else fails the run. */
function handleLine(proc: BridgeProcess, order: EventOrder, line: string, onEvent: RunBridgeOptions['onEvent']): void {
  if (proc.failure !== undefined) return;
  if (line.trim() === '') return;
  const accepted = order.accept(line);
  if (!accepted.ok) return proc.fail(protocolFailure(proc, line, accepted.reason));
  try {
    onEvent?.(accepted.event);
  } catch (err) {
    proc.fail(err instanceof Error ? err : new Error(String(err)));
  }
}

/** The run's failure, if it had one (given what the process left), or the interpreter that never started. */
function throwFailure(proc: BridgeProcess, spawnCode: string | undefined, python: string): void {
  const failure = proc.failure;
  if (failure !== undefined) {
    // The failure was built when it happened; give it what the process left.
    if (failure instanceof BridgeFailure) {
      throw new BridgeFailure(failure.code, failure.location, failure.message, {
        hint: failure.hint,
        exitCode: proc.exitCode,
        signal: proc.exitSignal,
        stderrTail: proc.tail.text(),
        stderrBytes: proc.tail.total,
      });
    }
    throw failure;
  }
  if (spawnCode !== undefined) {
    const notFound = spawnCode === 'ENOENT' || spawnCode === 'EACCES';
    throw proc.bridgeFailure(
      notFound ? 'BRIDGE_PYTHON_NOT_FOUND' : 'BRIDGE_SPAWN',
      notFound ? `cannot run ${python} (${spawnCode})` : `starting ${python} failed (${spawnCode})`,
      'Give the interpreter that has torch, torch-tensorrt and executorch with --python PATH or TRTX_PYTHON.',
    );
  }
}

/** A last line without a newline: an event when the bridge exited 0, else it died while writing. */
function readLastLine(proc: BridgeProcess, leftover: string, onLine: (line: string) => void): void {
  if (leftover.trim() === '') return;
  if (proc.exitCode !== 0) {
    throw proc.bridgeFailure(
      'BRIDGE_DIED',
      `the Python bridge ${describeExit(proc.exitCode, proc.exitSignal)} in the middle of writing an event: ${quoteLine(leftover)}`,
      diedHint(proc.tail),
    );
  }
  onLine(leftover);
  if (proc.failure !== undefined) throw proc.failure;
}

/** The errno names of a full disk or a spent quota (util/target.ts fileRefusal: WRITE_NO_SPACE). */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);
const NO_SPACE_HINT =
  'Free space (or raise the quota) on the device of the output folder, where the program and its reference file are written, and of TMPDIR, where the libraries write theirs; then run it again.';

/** What the final event says: the result, the bridge's error as its code (WRITE_NO_SPACE for a full disk), or how the bridge died. */
function verdict(proc: BridgeProcess, order: EventOrder): ResultEvent {
  const terminal = order.terminal;
  if (terminal?.event === 'error') {
    const type = terminal.type;
    if (!Object.hasOwn(BRIDGE_ERROR_TYPES, type)) {
      // Only a python-bridge from another trtx names a type this one does not list (src/codes/environment.ts).
      throw proc.bridgeFailure(
        'BRIDGE_PROTOCOL',
        `the Python bridge reported an error of a type this trtx does not know (${type}): ${terminal.message}`,
        terminal.hint,
      );
    }
    // A full disk, whichever stage met it (the program's write, the reference file's, a library's
    // temporary): the machine's state, as a rewrite onto a full disk says, not a bridge failure.
    if (terminal.errno !== undefined && NO_SPACE.has(terminal.errno))
      throw proc.bridgeFailure('WRITE_NO_SPACE', `no space left on the device (${terminal.errno}): ${terminal.message}`, NO_SPACE_HINT);
    // Its exit status is the code's (src/codes/exit.ts: a refused model 1, usage or environment 2).
    throw proc.bridgeFailure(`BRIDGE_${type as BridgeErrorType}`, terminal.message, terminal.hint);
  }
  if (terminal?.event === 'result') {
    if (proc.exitCode === 0) return terminal;
    throw proc.bridgeFailure(
      'BRIDGE_DIED',
      `the Python bridge reported a result but then ${describeExit(proc.exitCode, proc.exitSignal)}`,
      diedHint(proc.tail),
    );
  }
  const last = proc.tail.lastLines(1)[0];
  throw proc.bridgeFailure(
    'BRIDGE_DIED',
    `the Python bridge ${describeExit(proc.exitCode, proc.exitSignal)} before reporting a result` +
      (last ? `; its log ends: ${quoteLine(last)}` : ''),
    diedHint(proc.tail),
  );
}
