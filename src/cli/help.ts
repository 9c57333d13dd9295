// The end of every command's --help, in one shape, so that the helps agree
// with each other: what the command says beyond its flags, what each of its
// exit statuses means for it (the table every command shares is the top-level
// help's, src/codes/exit.ts; docs/exit-codes.md has the notes per command),
// the schema of its --json document, and examples.

import { EXIT_SIGNALS } from '../codes/exit.js';

export interface CommandHelp {
  /** Paragraphs before the exit codes. */
  about?: string;
  /** What each exit status means for this command, in its words (a status it never ends with is left out). */
  exit: readonly (readonly [0 | 1 | 2, string])[];
  /** The --json document's schema, schemas/NAME.schema.json; a refusal prints the error document. */
  schema: string;
  examples: readonly string[];
}

/** The text commander prints after the options. */
export function helpAfter(h: CommandHelp): string {
  return [
    '',
    ...(h.about ? [h.about.trim(), ''] : []),
    'Exit codes (docs/exit-codes.md):',
    ...h.exit.map(([status, meaning]) => `  ${status}  ${meaning}`),
    `  ${EXIT_SIGNALS.status}  stopped by Ctrl-C (SIGINT) or SIGTERM, every temporary file removed`,
    '',
    `--json: ${h.schema} (a refusal: schemas/error.schema.json)`,
    '',
    'Examples:',
    ...h.examples.map((e) => `  ${e}`),
  ].join('\n');
}
