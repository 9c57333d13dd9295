// A command's handler as commander calls it: the context from the merged
// options, the exit code it returns, and every error turned into the exit
// code and the one line (or --json document) it prints. Commands import
// this, never cli/main.ts (which imports every command).

import type { Command } from 'commander';
import { makeCtx, reportError, usage, type Ctx, type GlobalOptions } from './context.js';
import type { CliSession } from './session.js';
import { ReportBudget } from '../util/report-budget.js';

export type Handler<O> = (ctx: Ctx, opts: O, args: string[], cmd: Command) => Promise<number>;

/**
 * Wraps a command handler of the run `session`: context from the merged
 * options and a report budget of the command's own, errors to exit codes;
 * the exit code is the session's status (main returns it).
 */
export function action<O extends GlobalOptions>(session: CliSession, handler: Handler<O>) {
  return async function (this: Command, ...argv: unknown[]) {
    const cmd = argv[argv.length - 1] as Command;
    const opts = cmd.optsWithGlobals<O>();
    // A variadic argument (check FILE...) arrives as one array.
    const args = argv
      .slice(0, -2)
      .flat()
      .filter((a): a is string => typeof a === 'string');
    try {
      const ctx = makeCtx(opts, session, ReportBudget.forCommand());
      session.status = await handler(ctx, opts, args, cmd);
    } catch (e) {
      session.status = reportError(e, Boolean(opts.json), session);
    }
  };
}

/** The command's `i`th argument (`name` in its usage), which commander requires: a usage error if it is missing after all. */
export function argAt(args: readonly string[], i: number, name: string): string {
  const arg = args[i];
  if (arg === undefined) throw usage(`missing argument ${name}`);
  return arg;
}
