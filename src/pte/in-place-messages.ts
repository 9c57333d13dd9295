// What an in-place rewrite says it did to the file when a signal arrived
// while it held signals (src/util/cleanup.ts's withSignalsHeld): the
// process's last line names the file's state, not only the temporaries
// removed (issue 43: "temporary files removed" while the file held the new
// program). And the journal's name, which the messages give.
import { sidecarPath } from '../util/target.js';
import { IN_PLACE_JOURNAL_SUFFIX } from './header.js';

/** The journal of an in-place rewrite of `path`, beside it. */
export const journalPath = (path: string) => sidecarPath(path, IN_PLACE_JOURNAL_SUFFIX);

/** The steps of the head write (in-place.ts's protocol), in order. */
export type InPlaceStep = 'journal' | 'marker' | 'body' | 'root' | 'identifier' | 'cleanup';

/** What a head write that got as far as `reached` left in `path`, for the message of a signal that came meanwhile. */
export function headWriteNote(path: string, reached: InPlaceStep | null): string {
  switch (reached) {
    case null:
    case 'journal':
      return `${path} was left as it was (the old program): the in-place write had not begun`;
    case 'marker':
    case 'body':
    case 'root':
      return `${path} is marked as an interrupted in-place rewrite: rerun \`trtx rewrite ${path} --in-place\` to finish it from ${journalPath(path)}`;
    case 'identifier':
    case 'cleanup':
      return `${path} was changed: it holds the new program (the in-place write had finished when the signal came)`;
  }
}

/** What a roll-forward from `journal` did to `path`. */
export const rolledForwardNote = (path: string, journal: string) =>
  `${path} was changed: the interrupted in-place rewrite was finished from ${journal}, the file holds its program`;
