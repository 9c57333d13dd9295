// A child process in a process group of its own, registered with the
// interrupt handler (cleanup.ts) while it runs. A SIGINT or SIGTERM sent to
// trtx alone (not to the terminal's whole group) must also stop everything
// the child started (make and the compilers under cmake, pip and the
// unpackers it forks) before the handler removes the folders they write in;
// a child left in trtx's own group would only get execa's exit-time SIGTERM,
// after those folders are gone, and could write them back. The bridge keeps
// its own group handling (src/bridge/process-group.ts) for its grace timers.
import { execa, type Options, type ResultPromise } from 'execa';
import { trackProcessGroup } from './cleanup.js';

export function execaTracked<O extends Options>(file: string, args: readonly string[], options: O): ResultPromise<O> {
  // detached changes nothing in the result's type; execa types the spread as
  // `{} & O`, which TypeScript cannot relate to O, hence the cast.
  const child = execa(file, args, { ...options, detached: true }) as unknown as ResultPromise<O>;
  if (child.pid !== undefined) {
    const untrack = trackProcessGroup(child.pid);
    // Settles with the child; reject: false or not, the handlers consume the outcome here only.
    child.then(untrack, untrack);
  }
  return child;
}
