// The trtx command line: global options, one file per command, and the
// exit-code contract. Usage errors (bad flags, missing arguments) exit 2.
// `main(argv, io)` is one run: it writes to io's streams only and returns
// the exit status (bin/trtx sets the process's from it).

import { Command, CommanderError, Option } from 'commander';
import { EXIT_USAGE, reportError } from './context.js';
import { EXIT_SIGNALS, EXIT_TABLE } from '../codes/exit.js';
import { registerCheck } from './commands/check.js';
import { registerDiff } from './commands/diff.js';
import { registerInspect } from './commands/inspect.js';
import { registerRewrite } from './commands/rewrite.js';
import { registerVerify } from './commands/verify.js';
import { registerExport } from './commands/export.js';
import { registerDemo } from './commands/demo.js';
import { registerFixtures } from './commands/fixtures.js';
import { registerEnv } from './commands/env.js';
import { TRTX_VERSION } from '../util/version.js';
import { processIo, type CliIo } from './io.js';
import { newSession, type CliSession } from './session.js';

// bin/trtx installs it; tests that call main() in process do not.
export { installSignalCleanup } from './signals.js';

/** The exit-code table (src/codes/exit.ts), the same for every command; docs/exit-codes.md has the notes per command. */
export const EXIT_CODES_HELP = [
  '',
  'Exit codes (every command; docs/exit-codes.md):',
  ...EXIT_TABLE.map((r) => `  ${r.status}  ${r.meaning}`),
  `  ${EXIT_SIGNALS.status}  ${EXIT_SIGNALS.meaning}`,
].join('\n');

/** The command line of one run: every command writes to the session's streams (help and usage errors included). */
export function buildProgram(session: CliSession = newSession(processIo())): Command {
  const program = new Command('trtx')
    .description('Export, check, rewrite and verify ExecuTorch programs with TensorRT delegates')
    .version(TRTX_VERSION, '--version')
    .addOption(
      new Option('--log-level <level>', 'log level on stderr').choices(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
    )
    .addOption(
      new Option(
        '--log-format <format>',
        "log lines on stderr: 'text' (trtx warn: ..., after the time when not a terminal) or 'json' (pino)",
      )
        .choices(['text', 'json'])
        .default('text'),
    )
    .option('-q, --quiet', 'only errors on stderr')
    .option('--no-color', 'no colour (also NO_COLOR)')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', EXIT_CODES_HELP)
    .exitOverride();
  // Before the commands are added: each copies its parent's output settings.
  const { io, terminal } = session;
  program.configureOutput({
    writeOut: (str) => terminal.writeStdout(str),
    writeErr: (str) => terminal.writeStderr(str),
    outputError: (str, write) => write(str),
    // As commander's defaults read them from process.stdout and stderr (80 off a terminal); help has no colour of its own.
    getOutHelpWidth: () => (io.stdout.isTTY ? (io.stdout.columns ?? 80) : 80),
    getErrHelpWidth: () => (io.stderr.isTTY ? (io.stderr.columns ?? 80) : 80),
    getOutHasColors: () => false,
    getErrHasColors: () => false,
  });
  // In the order of the work: --help lists them so.
  registerExport(program, session);
  registerCheck(program, session);
  registerInspect(program, session);
  registerRewrite(program, session);
  registerDiff(program, session);
  registerVerify(program, session);
  registerDemo(program, session);
  registerEnv(program, session);
  registerFixtures(program, session);
  return program;
}

/** Runs the command line once on `io` (the process's streams by default) and returns its exit status. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const session = newSession(io);
  const program = buildProgram(session);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here too, with code 0.
      return e.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    return reportError(e, false, session);
  }
  return session.status ?? 0;
}
