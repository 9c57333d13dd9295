// Every refusal trtx makes is a TrtxError: a stable code a script can match
// (src/codes/ lists them all), the location in the input it concerns, and a
// one-line message. The CLI prints `code: location: message` and never a
// stack trace; under --json it prints the error document
// (schemas/error.schema.json), with the findings behind a refusal when a
// check refused it.

import { exitStatusOf, EXIT_USAGE, type Code } from '../codes/index.js';
import type { Finding } from './finding.js';

export type ExitKind = 'check' | 'usage';

export interface TrtxErrorOptions {
  hint?: string;
  /**
   * Only `trtx diff`, whose exit 1 means "the programs differ": every error it
   * ends with is 2. Everywhere else the exit status is the code's, from the
   * one table (src/codes/exit.ts), never chosen where it is thrown.
   */
  kind?: ExitKind;
  /** The check findings that made this refusal (a rewrite or export whose result fails a check). */
  diagnostics?: readonly Finding[];
}

export class TrtxError extends Error {
  readonly code: Code;
  readonly location: string;
  readonly hint: string | undefined;
  /** 'check': the input is refused (exit 1); 'usage': usage or environment (exit 2); the code's, from src/codes/exit.ts. */
  readonly kind: ExitKind;
  readonly diagnostics: readonly Finding[] | undefined;

  constructor(code: Code, location: string, message: string, opts: TrtxErrorOptions = {}) {
    super(message);
    this.name = 'TrtxError';
    this.code = code;
    this.location = location;
    this.hint = opts.hint;
    this.kind = opts.kind ?? (exitStatusOf(code) === EXIT_USAGE ? 'usage' : 'check');
    this.diagnostics = opts.diagnostics;
  }

  /** The one-line form the CLI prints. */
  oneLine(): string {
    return `${this.code}: ${this.location ? this.location + ': ' : ''}${this.message}`;
  }
}

export function isTrtxError(e: unknown): e is TrtxError {
  return e instanceof TrtxError;
}
