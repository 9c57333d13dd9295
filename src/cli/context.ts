// What every command shares: output streams, --json, colour, the logger,
// the report budget and the exit-code contract (src/codes/exit.ts: 0 ok, 1
// the program or model is refused or a check failed, 2 usage or
// environment). Commands print through this; the library never prints. A
// context belongs to one command of one run (session.ts): its streams and
// environment are the run's, its budget the command's.

import type pino from 'pino';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { isAbsolute, resolve } from 'node:path';
import { TrtxError, isTrtxError } from '../util/errors.js';
import { escapeControls } from '../util/escape.js';
import type { ReportBudget } from '../util/report-budget.js';
import type { OutStream } from './io.js';
import type { CliSession } from './session.js';
import type { Terminal } from './status-line.js';
import type { ErrorDocument } from '../util/error-document.js';

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
  /** The run's terminal: progress draws its status line there. */
  terminal: Terminal;
  /** The run's environment (io.ts): what the command reads of it, and passes on to the library as a value (with `cwd`: a relative path in a TRTX_* setting means the run's folder). */
  env: Readonly<Record<string, string | undefined>>;
  /** The run's working folder (io.ts): what relative paths mean; passed on to the library and its children. */
  cwd: string;
  /** The run's cancellation (io.ts): passed on to the library's long work. */
  signal: AbortSignal | undefined;
  /** A path the user gave, as the library is to open it: absolute, in the run's folder (inRunFolder), and shown as typed in what the run writes; `-` is a usage error (namedPath). */
  at(path: string, role?: PathRole): string;
  /** The command's report budget: what it opens adds to it, what it reports and prints is charged to it. */
  budget: ReportBudget;
  /** A document the run writes to a file (an HTML page), with the paths the user typed shown as typed, as its output shows them (path-names.ts). */
  asTyped(text: string): string;
}

/** The part of a run (session.ts) a context and an error report write to: its streams, environment and terminal. */
export type CtxSource = Pick<CliSession, 'io' | 'terminal' | 'names'>;

/** Colour only on a terminal, never with NO_COLOR or --no-color. */
export function colorEnabled(opts: GlobalOptions, stream: OutStream, env: CliSession['io']['env']): boolean {
  if (opts.color === false) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
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
function textLogStream(withTime: boolean, terminal: Terminal): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        try {
          terminal.writeStderr(formatLogLine(JSON.parse(line) as { level: number; time?: number; msg: string }, withTime));
        } catch {
          terminal.writeStderr(line + '\n');
        }
      }
      done();
    },
  });
}

/** pino's JSON lines, whole, on the run's stderr. */
function jsonLogStream(terminal: Terminal): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      terminal.writeStderr(String(chunk));
      done();
    },
  });
}

export function makeCtx(opts: GlobalOptions, run: CtxSource, budget: ReportBudget): Ctx {
  const { io, terminal, names } = run;
  const json = Boolean(opts.json);
  const color = !json && colorEnabled(opts, io.stdout, io.env);
  const stderrIsTTY = Boolean(io.stderr.isTTY);
  const level = opts.quiet ? 'error' : (opts.logLevel ?? 'info');
  // pino is loaded on the first log line: most runs of a fast command log nothing.
  let logger: pino.Logger | undefined;
  const getLog = () => {
    if (!logger) {
      const pinoFn = createRequire(import.meta.url)('pino') as typeof pino;
      if (opts.logFormat === 'json') {
        logger = pinoFn({ level, base: undefined, timestamp: pinoFn.stdTimeFunctions.isoTime }, jsonLogStream(terminal));
      } else {
        logger = pinoFn({ level, base: undefined }, textLogStream(!stderrIsTTY, terminal));
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
    stderrIsTTY,
    terminal,
    env: io.env,
    cwd: io.cwd,
    signal: io.signal,
    at: (path, role = 'input') => {
      const typed = namedPath(path, role);
      const absolute = inRunFolder(typed, io.cwd);
      names.note(absolute, typed);
      return absolute;
    },
    budget,
    asTyped: (text) => names.show(text),
    // Everything a command writes to stdout is metered against the report
    // budget (src/util/report-budget.ts); the refusal is written apart.
    print: (line = '') => {
      if (json) return;
      budget.chargeOutput(line.length + 1, 'stdout');
      terminal.writeStdout(escapeControls(line, color) + '\n');
    },
    printDocument: (text) => {
      budget.chargeOutput(text.length + 1, 'stdout');
      terminal.writeStdout(text + '\n');
    },
    emitJson: (value) => {
      terminal.writeStdout(budget.stringifyWithinBudget(value, 'the --json document') + '\n');
    },
  };
}

/** What a path names: a file or folder trtx reads, or one it writes. */
export type PathRole = 'input' | 'output';

/**
 * A path the user gave, unless it is `-`: by convention standard input or
 * output, which no command of trtx reads or writes (it would otherwise be a
 * file named `-` in the run's folder: `rewrite f -o -` wrote `./-`). A file
 * of that name is `./-`.
 */
export function namedPath(path: string, role: PathRole): string {
  if (path !== '-') return path;
  const stream = role === 'input' ? 'reading standard input' : 'writing to standard output';
  throw usage(
    `- as ${role === 'input' ? 'an input' : 'an output'}: ${stream} is not supported; trtx ${role === 'input' ? 'reads' : 'writes'} named files only`,
    'name a file (./- for a file called -)',
  );
}

/**
 * A path the user gave, as the library opens it: resolved against the run's
 * folder (io.cwd), whatever folder the process is in. What the run writes
 * names it as typed again (path-names.ts).
 */
export function inRunFolder(path: string, cwd: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/** The one line a refusal prints, plus its hint. */
export function reportError(e: unknown, json: boolean, run: CtxSource): number {
  const { terminal, io } = run;
  if (isTrtxError(e)) {
    const code = e.kind === 'usage' ? EXIT_USAGE : EXIT_CHECK;
    if (json) {
      const doc: ErrorDocument = {
        error: {
          code: e.code,
          location: e.location,
          message: e.message,
          hint: e.hint ?? null,
          ...(e.diagnostics ? { diagnostics: [...e.diagnostics] } : {}),
        },
      };
      terminal.writeStdout(JSON.stringify(doc, null, 2) + '\n');
    }
    terminal.writeStderr(`error: ${escapeControls(e.oneLine())}\n`);
    if (e.hint) terminal.writeStderr(`hint: ${escapeControls(e.hint)}\n`);
    return code;
  }
  // A bug in trtx, not in the input: still one line, and the detail on request.
  const err = e as Error;
  // A script reading --json must still get the error document (schemas/error.schema.json).
  if (json) {
    const doc: ErrorDocument = {
      error: { code: 'INTERNAL', location: '', message: err?.message ?? String(e), hint: 'set TRTX_DEBUG=1 for the stack' },
    };
    terminal.writeStdout(JSON.stringify(doc, null, 2) + '\n');
  }
  terminal.writeStderr(`error: INTERNAL: ${escapeControls(err?.message ?? String(e))} (set TRTX_DEBUG=1 for the stack)\n`);
  if (io.env.TRTX_DEBUG) terminal.writeStderr(`${err?.stack}\n`);
  return EXIT_USAGE;
}

export function usage(message: string, hint?: string): TrtxError {
  return new TrtxError('USAGE', '', message, { hint });
}
