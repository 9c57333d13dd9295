// Names from a program (tensor, operator, binding names; string values)
// as reports show them. A program references a name by index, as often as
// it likes, for four bytes each: a 64 KiB name referenced 50,000 times
// from a 270 KB file would otherwise print 3 GB. Reports therefore show at
// most DISPLAY_NAME_MAX characters of a name, then its length and a hash of
// the whole (so two long names that share a prefix still read, and compare,
// as different). Real names are far shorter and are never touched.

import { createHash } from 'node:crypto';

export const DISPLAY_NAME_MAX = 200;

// Shortened once per name: the same name comes back once per reference, and
// hashing it each time would be the amplification over again.
const shortened = new Map<string, string>();

export function shortName(name: string): string {
  if (name.length <= DISPLAY_NAME_MAX) return name;
  let short = shortened.get(name);
  if (short === undefined) {
    const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
    short = `${name.slice(0, DISPLAY_NAME_MAX)}…(${Buffer.byteLength(name)} bytes, #${hash})`;
    if (shortened.size > 4096) shortened.clear();
    shortened.set(name, short);
  }
  return short;
}

export const shortNameOrNull = (name: string | null): string | null => (name === null ? null : shortName(name));

/** A line of text from a finding, cut after `max` characters (messages embed names). */
export function boundedText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length - max} more characters)`;
}

/**
 * A list of names as reports show it: the first `keep`, then how many more
 * ("a, b, c, d and 44 more"). `trtx check`'s findings and every text
 * output's name lists read the same way; --json keeps the whole list.
 */
export function shortList(names: readonly string[], keep = 4): string {
  return names.length > keep ? `${names.slice(0, keep).join(', ')} and ${names.length - keep} more` : names.join(', ');
}

// A run of at least five comma-separated names (no spaces, commas, brackets
// or semicolons inside a name; a sentence's colon or full stop after the
// last is left to the sentence): a list a library message spelled out whole.
const NAME = String.raw`[^\s,;()]*[^\s,;():.]`;
const NAME_RUN = new RegExp(`${NAME}(?:, ${NAME}){4,}`, 'g');

/** Text with every long comma-separated name list in it shortened by shortList (text output only). */
export function shortenNameLists(text: string, keep = 4): string {
  return text.replace(NAME_RUN, (run) => shortList(run.split(', '), keep));
}
