// Every refusal trtx makes is a TrtxError: a stable code a script can match,
// the location in the input it concerns, and a one-line message. The CLI
// prints `code: location: message` and never a stack trace.

export type ExitKind = 'check' | 'usage';

export class TrtxError extends Error {
  readonly code: string;
  readonly location: string;
  readonly hint: string | undefined;
  /** 'check': the input failed (exit 1); 'usage': usage or environment (exit 2). */
  readonly kind: ExitKind;

  constructor(code: string, location: string, message: string, opts: { hint?: string; kind?: ExitKind } = {}) {
    super(message);
    this.name = 'TrtxError';
    this.code = code;
    this.location = location;
    this.hint = opts.hint;
    this.kind = opts.kind ?? 'check';
  }

  /** The one-line form the CLI prints. */
  oneLine(): string {
    return `${this.code}: ${this.location ? this.location + ': ' : ''}${this.message}`;
  }
}

export function isTrtxError(e: unknown): e is TrtxError {
  return e instanceof TrtxError;
}
