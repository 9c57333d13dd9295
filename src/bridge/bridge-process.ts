// One Python bridge process and the state of its life: started in a process
// group of its own (so stopping it stops whatever it started), its stderr
// kept as a bounded tail and forwarded, its exit recorded, and the first
// failure of the run (a protocol error, a timeout, an abort, a throwing
// callback) remembered while the group is stopped: SIGTERM, then SIGKILL
// after a grace period.

import { StringDecoder } from 'node:string_decoder';
import { execa } from 'execa';
import type { BridgeCode } from '../codes/index.js';
import { bridgeChildEnv, bridgePackageDir } from './env.js';
import { BridgeFailure } from './failure.js';
import { signalGroup, trackGroup, untrackGroup } from './process-group.js';
import { TailBuffer } from './tail-buffer.js';
import type { Env } from '../util/env.js';

/** How the bridge process runs (run.ts's RunBridgeOptions add what the run does with its events). */
export interface BridgeProcessOptions {
  /** The interpreter (see resolvePython). */
  python: string;
  /** Kill the bridge after this long; 0 or absent: no limit. */
  timeoutMs?: number;
  /** Aborting kills the bridge's process tree and rejects with BRIDGE_CANCELLED. */
  signal?: AbortSignal;
  /** The bridge's log (stderr) as it arrives. */
  onStderr?: (text: string) => void;
  /** Extra environment; PYTHONPATH here is appended after the bridge package (tests put doubles there). */
  env?: Record<string, string | undefined>;
  /** What relative paths mean inside the bridge; default what Node resolves them against. */
  cwd?: string;
  /** The run's environment (util/env.ts) the bridge's is made from (bridgeEnv); absent: the process's. */
  baseEnv?: Env;
  /** stderr bytes kept for messages (default 64 KiB). */
  stderrTailBytes?: number;
  /** Between SIGTERM and SIGKILL when stopping the bridge (default 3 s). */
  killGraceMs?: number;
}

/** `python -m trtx_bridge` in a process group of its own, `input` on its stdin, nothing buffered. */
function spawnBridge(input: string, opts: BridgeProcessOptions) {
  return execa(opts.python, ['-m', 'trtx_bridge'], {
    cwd: bridgePackageDir(),
    ...bridgeChildEnv({ base: opts.baseEnv, extra: opts.env, cwd: opts.cwd }),
    input,
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    detached: true,
    cleanup: false,
    stripFinalNewline: false,
  });
}

export class BridgeProcess {
  /** The first failure of the run: it ends the run, whatever comes after. */
  failure: Error | undefined;
  exited = false;
  exitCode: number | null = null;
  exitSignal: string | null = null;
  readonly tail: TailBuffer;
  private readonly child: ReturnType<typeof spawnBridge>;
  private readonly pid: number | undefined;
  private readonly decoder = new StringDecoder('utf8');
  private readonly grace: number;
  private stopping = false;
  private graceTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private readonly onAbort = (): void =>
    this.fail(
      this.bridgeFailure('BRIDGE_CANCELLED', 'cancelled; the Python bridge and its child processes were stopped', 'Nothing was written.'),
    );

  /** Starts `python -m trtx_bridge` with `input` on its stdin; `location` names failures. */
  constructor(
    input: string,
    private readonly location: string,
    private readonly opts: BridgeProcessOptions,
  ) {
    this.tail = new TailBuffer(opts.stderrTailBytes ?? 64 * 1024);
    this.grace = opts.killGraceMs ?? 3000;
    this.child = spawnBridge(input, opts);
    this.pid = this.child.pid;
    if (this.pid !== undefined) trackGroup(this.pid);
  }

  /** Hands each stdout chunk to `onChunk` until the run has failed. */
  onStdout(onChunk: (chunk: Buffer) => void): void {
    this.child.stdout?.on('data', (chunk: Buffer) => {
      if (this.failure === undefined) onChunk(chunk);
    });
  }

  /** Watches stderr, the exit, the abort signal and the timeout. */
  watch(): void {
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.tail.push(chunk);
      if (this.opts.onStderr) {
        const text = this.decoder.write(chunk);
        if (text) this.opts.onStderr(text);
      }
    });
    // The bridge may exit before it reads its request; that is reported from
    // its exit status, not as a write error.
    this.child.stdin?.on('error', () => {});
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      this.exitCode = code;
      this.exitSignal = signal;
      if (this.graceTimer) clearTimeout(this.graceTimer);
      // Whatever the bridge left running in its group would hold our pipes
      // open (and the GPU); the bridge is done, so they go too.
      if (this.pid !== undefined) signalGroup(this.pid, 'SIGKILL');
    });
    this.opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    const limit = this.opts.timeoutMs;
    if (limit && limit > 0) {
      this.timeoutTimer = setTimeout(() => {
        this.fail(
          this.bridgeFailure(
            'BRIDGE_TIMEOUT',
            `the Python bridge did not finish within ${limit} ms and was stopped`,
            'Raise --timeout (TensorRT builds of large models take many minutes), or run with --log-level debug to see where it stalls.',
          ),
        );
      }, limit);
    }
  }

  /** Records the run's first failure and stops the bridge. */
  fail(err: Error): void {
    if (this.failure === undefined) this.failure = err;
    this.stop();
  }

  private stop(): void {
    if (this.stopping || this.pid === undefined) return;
    const pid = this.pid;
    this.stopping = true;
    if (this.exited) {
      signalGroup(pid, 'SIGKILL');
      return;
    }
    signalGroup(pid, 'SIGTERM');
    this.graceTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), this.grace);
  }

  /** A failure with what the process left so far (exit status, signal, log tail); WRITE_NO_SPACE: the bridge's error event said the disk is full. */
  bridgeFailure(code: BridgeCode | 'WRITE_NO_SPACE', message: string, hint: string): BridgeFailure {
    return new BridgeFailure(code, this.location, message, {
      hint,
      exitCode: this.exitCode,
      signal: this.exitSignal,
      stderrTail: this.tail.text(),
      stderrBytes: this.tail.total,
    });
  }

  /**
   * Waits for the bridge to end, then stops its group, its timers and the
   * abort listener, and forwards the last of its log. Resolves with the
   * spawn error's code when the interpreter never started.
   */
  async settled(): Promise<string | undefined> {
    let spawnCode: string | undefined;
    try {
      const settled = await this.child;
      if (settled.failed && typeof settled.code === 'string' && !this.exited) spawnCode = settled.code;
    } finally {
      if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
      if (this.graceTimer) clearTimeout(this.graceTimer);
      this.opts.signal?.removeEventListener('abort', this.onAbort);
      if (this.pid !== undefined) {
        signalGroup(this.pid, 'SIGKILL');
        untrackGroup(this.pid);
      }
    }
    const rest = this.decoder.end();
    if (rest && this.opts.onStderr) this.opts.onStderr(rest);
    return spawnCode;
  }
}
