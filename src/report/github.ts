// `trtx check --format github`: one GitHub Actions workflow command per
// diagnostic (`::error title=...,file=...::message`), which the runner turns
// into an annotation on the run and the pull request. The escaping is the
// runner's: in the message % CR LF are percent-encoded, in property values
// also : and , (the reference is @actions/core's command formatting, which
// test/report-github.test.ts compares this with). A name from the file that
// holds a newline therefore cannot start a command of its own.

import type { Diagnostic } from '../checks/diagnostic.js';

const COMMAND: Record<Diagnostic['severity'], string> = { error: 'error', warning: 'warning', info: 'notice' };

const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** The workflow command for one diagnostic, without the line end. */
export function annotation(file: string, d: Diagnostic): string {
  // Property order as the runner's toolkit writes it: title, then file.
  const props = [`title=${escapeProperty(`${d.code} at ${d.location || 'program'}`)}`, `file=${escapeProperty(file)}`];
  return `::${COMMAND[d.severity]} ${props.join(',')}::${escapeData(`${d.message}\nhint: ${d.hint}`)}`;
}

export function toGithubAnnotations(file: string, diagnostics: readonly Diagnostic[]): string[] {
  return diagnostics.map((d) => annotation(file, d));
}
