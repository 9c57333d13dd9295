// The paths a run's user typed, as they typed them. The command line
// resolves each path it is given against the run's folder once (Ctx.at) and
// hands the library the absolute path, so the library opens the right file
// whichever folder the process is in; the library then names that file by
// the path it was given. What the run writes (its results, log lines,
// refusals and --json documents) shows each such path as the user typed it
// again, relative paths staying relative, as in a terminal where trtx ran
// in its own folder. A path the library made from one (`OUT.reference.json`
// beside OUT, a file in a folder the user named) reads as made from the typed one.

import { escapeControls } from '../util/escape.js';

/** A character that can be part of a file name in text: an absolute path found right after one is inside a longer path, not one the run was given. */
const NAME_CHAR = /[\w.~/-]/;
/** Right after a path, one of these makes it part of another name (`/run` in `/run-2`); `.` and `/` continue it (`OUT.reference.json`, a file in a typed folder). */
const NAME_TAIL = /[\w~-]/;

export class PathNames {
  /** Absolute path -> as typed, longest first when shown (one typed path may be a folder of another). */
  private readonly typed = new Map<string, string>();
  private pairs: [string, string][] | undefined;

  /** Remembers that the user typed `typed` for `absolute`. */
  note(absolute: string, typed: string): void {
    if (absolute === typed || this.typed.get(absolute) === typed) return;
    this.typed.set(absolute, typed);
    this.pairs = undefined;
  }

  /** `text` with every remembered path as the user typed it: as written, JSON-escaped (--json) and control-escaped (human output). */
  show(text: string): string {
    if (this.typed.size === 0) return text;
    let out = text;
    for (const [from, to] of this.forms()) {
      if (!out.includes(from)) continue;
      let at = out.indexOf(from);
      let shown = '';
      let done = 0;
      while (at !== -1) {
        const whole = (at === 0 || !NAME_CHAR.test(out.charAt(at - 1))) && !NAME_TAIL.test(out.charAt(at + from.length));
        if (whole) {
          shown += out.slice(done, at) + to;
          done = at + from.length;
        }
        at = out.indexOf(from, at + from.length);
      }
      out = shown + out.slice(done);
    }
    return out;
  }

  private forms(): [string, string][] {
    if (this.pairs) return this.pairs;
    const pairs = new Map<string, string>();
    for (const [abs, typed] of this.typed) {
      pairs.set(abs, typed);
      pairs.set(JSON.stringify(abs).slice(1, -1), JSON.stringify(typed).slice(1, -1));
      pairs.set(escapeControls(abs), escapeControls(typed));
    }
    this.pairs = [...pairs].sort((a, b) => b[0].length - a[0].length);
    return this.pairs;
  }
}
