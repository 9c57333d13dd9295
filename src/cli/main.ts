// The trtx command line: global options, one file per command, and the
// exit-code contract. Usage errors (bad flags, missing arguments) exit 2.

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

// bin/trtx installs it; tests that call main() in process do not.
export { installSignalCleanup } from '../util/cleanup.js';

/** The exit-code table (src/codes/exit.ts), the same for every command; docs/exit-codes.md has the notes per command. */
export const EXIT_CODES_HELP = [
  '',
  'Exit codes (every command; docs/exit-codes.md):',
  ...EXIT_TABLE.map((r) => `  ${r.status}  ${r.meaning}`),
  `  ${EXIT_SIGNALS.status}  ${EXIT_SIGNALS.meaning}`,
].join('\n');

export function buildProgram(): Command {
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
  program.configureOutput({ outputError: (str, write) => write(str) });
  registerInspect(program);
  registerCheck(program);
  registerRewrite(program);
  registerDiff(program);
  registerVerify(program);
  registerExport(program);
  registerDemo(program);
  registerFixtures(program);
  registerEnv(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here too, with code 0.
      return e.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    return reportError(e, false);
  }
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}
