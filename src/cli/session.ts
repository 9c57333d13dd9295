// One run of the command line (`main(argv, io)`): the streams it writes to,
// the terminal whose status line they share, and the exit status its
// command ends with. main makes one and passes it to every command it
// registers; the action wrapper (action.ts) records the status in it, and
// main returns it: nothing of a run lives in the process (process.exitCode,
// process.stdout), so runs in one process do not share anything.

import type { CliIo } from './io.js';
import { PathNames } from './path-names.js';
import { Terminal } from './status-line.js';

export interface CliSession {
  readonly io: CliIo;
  readonly terminal: Terminal;
  /** The paths the run's user typed, resolved against io.cwd for the library and shown as typed in what it writes. */
  readonly names: PathNames;
  /** The exit status of the command that ran; undefined until one ends. */
  status: number | undefined;
}

export function newSession(io: CliIo): CliSession {
  const names = new PathNames();
  return { io, terminal: new Terminal(io, names), names, status: undefined };
}
