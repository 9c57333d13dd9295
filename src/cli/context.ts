// What every command shares: output streams, --json, colour, the logger and
// the exit-code contract (src/codes/exit.ts: 0 ok, 1 the program or model is
// refused or a check failed, 2 usage or environment). Commands print through
// this; the library never prints.

import type pino from 'pino';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { TrtxError, isTrtxError } from '../util/errors.js';
import { escapeControls } from '../util/escape.js';
import { chargeOutput, stringifyWithinBudget } from '../util/report-budget.js';
import { writeStderr as toStderr, writeStdout as toStdout } from './status-line.js';

export { EXIT_OK, EXIT_USAGE, EXIT_REFUSED as EXIT_CHECK } from '../codes/exit.js';
import { EXIT_REFUSED as EXIT_CHECK, EXIT_USAGE } from '../codes/exit.js';

export interface GlobalOptions {
  json?: boolean;
  logLevel?: string;
  logFormat?: 'text' | 'json';
  quiet?: boolean;
  color?: boolean;
}

export interface Ctx {
  json: boolean;
  color: boolean;
  quiet: boolean;
  log: pino.Logger;
  /** Human output (stdout), one line, control characters escaped; suppressed under --json. */
  print(line?: string): void;
  /** A machine-format document (JUnit XML) on stdout as it is: its format escapes its own text. */
  printDocument(text: string): void;
  /** The --json document (stdout). */
  emitJson(value: unknown): void;
  stderrIsTTY: boolean;
}

/** Colour only on a terminal, never with NO_COLOR or --no-color. */
export function colorEnabled(opts: GlobalOptions, stream: NodeJS.WriteStream = process.stdout): boolean {
  if (opts.color === false) return false;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  return Boolean(stream.isTTY);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** One log record as a line people read: `trtx warn: message`, after the time (ISO 8601, UTC) when `withTime`. */
export function formatLogLine(rec: { level: number; time?: number; msg: string }, withTime: boolean): string {
  const time = withTime && typeof rec.time === 'number' ? `${new Date(rec.time).toISOString()} ` : '';
  // A message of several lines (a subprocess's log) keeps its lines, indented under the first.
  // Each line's control characters escaped: a name in a message cannot forge a line.
  return `${time}trtx ${LEVEL_NAMES[rec.level] ?? rec.level}: ${String(rec.msg)
    .split('\n')
    .map((l) => escapeControls(l))
    .join('\n  ')}\n`;
}

/**
 * Logs as text lines on stderr: `trtx warn: message` on a terminal, and
 * the same after the time when stderr is a file or a pipe (a CI log).
 * `--log-format json` keeps pino's JSON lines instead.
 */
function textLogStream(withTime: boolean): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        try {
          toStderr(formatLogLine(JSON.parse(line) as { level: number; time?: number; msg: string }, withTime));
        } catch {
          toStderr(line + '\n');
        }
      }
      done();
    },
  });
}

export function makeCtx(opts: GlobalOptions): Ctx {
  const json = Boolean(opts.json);
  const color = !json && colorEnabled(opts);
  const level = opts.quiet ? 'error' : (opts.logLevel ?? 'info');
  // pino is loaded on the first log line: most runs of a fast command log nothing.
  let logger: pino.Logger | undefined;
  const getLog = () => {
    if (!logger) {
      const pinoFn = createRequire(import.meta.url)('pino') as typeof pino;
      if (opts.logFormat === 'json') {
        logger = pinoFn({ level, base: undefined, timestamp: pinoFn.stdTimeFunctions.isoTime }, pinoFn.destination({ fd: 2, sync: true }));
      } else {
        logger = pinoFn({ level, base: undefined }, textLogStream(!process.stderr.isTTY));
      }
    }
    return logger;
  };
  return {
    json,
    quiet: Boolean(opts.quiet),
    color,
    get log() {
      return getLog();
    },
    stderrIsTTY: Boolean(process.stderr.isTTY),
    // Everything a command writes to stdout is metered against the report
    // budget (src/util/report-budget.ts); the refusal is written apart.
    print: (line = '') => {
      if (json) return;
      chargeOutput(line.length + 1, 'stdout');
      toStdout(escapeControls(line, color) + '\n');
    },
    printDocument: (text) => {
      chargeOutput(text.length + 1, 'stdout');
      toStdout(text + '\n');
    },
    emitJson: (value) => {
      toStdout(stringifyWithinBudget(value, 'the --json document') + '\n');
    },
  };
}

/** The one line a refusal prints, plus its hint. */
export function reportError(e: unknown, json: boolean): number {
  if (isTrtxError(e)) {
    const code = e.kind === 'usage' ? EXIT_USAGE : EXIT_CHECK;
    if (json) {
      const doc = {
        error: {
          code: e.code,
          location: e.location,
          message: e.message,
          hint: e.hint ?? null,
          ...(e.diagnostics ? { diagnostics: e.diagnostics } : {}),
        },
      };
      toStdout(JSON.stringify(doc, null, 2) + '\n');
    }
    toStderr(`error: ${escapeControls(e.oneLine())}\n`);
    if (e.hint) toStderr(`hint: ${escapeControls(e.hint)}\n`);
    return code;
  }
  // A bug in trtx, not in the input: still one line, and the detail on request.
  const err = e as Error;
  // A script reading --json must still get the error document (schemas/error.schema.json).
  if (json) {
    const doc = { error: { code: 'INTERNAL', location: '', message: err?.message ?? String(e), hint: 'set TRTX_DEBUG=1 for the stack' } };
    toStdout(JSON.stringify(doc, null, 2) + '\n');
  }
  toStderr(`error: INTERNAL: ${escapeControls(err?.message ?? String(e))} (set TRTX_DEBUG=1 for the stack)\n`);
  if (process.env.TRTX_DEBUG) toStderr(`${err?.stack}\n`);
  return EXIT_USAGE;
}

export function usage(message: string, hint?: string): TrtxError {
  return new TrtxError('USAGE', '', message, { hint });
}
