// A command's handler as commander calls it: the context from the merged
// options, the exit code it returns, and every error turned into the exit
// code and the one line (or --json document) it prints. Commands import
// this, never cli/main.ts (which imports every command).

import type { Command } from 'commander';
import { makeCtx, reportError, type Ctx, type GlobalOptions } from './context.js';
import { endReportBudget, resetReportBudget } from '../util/report-budget.js';

export type Handler<O> = (ctx: Ctx, opts: O, args: string[], cmd: Command) => Promise<number>;

/** Wraps a command handler: context from the merged options, errors to exit codes. */
export function action<O extends GlobalOptions>(handler: Handler<O>) {
  return async function (this: Command, ...argv: unknown[]) {
    const cmd = argv[argv.length - 1] as Command;
    const opts = cmd.optsWithGlobals<O>();
    // A variadic argument (check FILE...) arrives as one array.
    const args = argv
      .slice(0, -2)
      .flat()
      .filter((a): a is string => typeof a === 'string');
    let ctx: Ctx | undefined;
    resetReportBudget();
    try {
      ctx = makeCtx(opts);
      process.exitCode = await handler(ctx, opts, args, cmd);
    } catch (e) {
      process.exitCode = reportError(e, Boolean(opts.json));
    } finally {
      endReportBudget();
    }
  };
}
