// The programs one `trtx verify` reads, each opened once for the whole run:
// the input (opened first, so a file that cannot be read leaves no temp
// folder), a twin given with --zero-copy-twin (opened when first asked for),
// and the programs verify makes itself (the derived zero-copy twin, the copies
// naming unnamed buffers), which are read as they were made, in memory, over
// the input's segments: no pass or naming changes a segment, so their bytes
// are the input's. The check, the naming and the state roles all ask here,
// so no variant is reopened for each of them.

import { openPte, type PteFile } from '../pte/open.js';
import type { Program } from '../pte/model.js';

export class ProgramFiles {
  /** By path: what was opened here, or a program made from `source` in memory. */
  private readonly byPath = new Map<string, Promise<PteFile>>();
  /** Only these are closed: a view shares its source's descriptor. */
  private readonly opened: Promise<PteFile>[] = [];

  constructor(input: PteFile) {
    this.byPath.set(input.path, Promise.resolve(input));
    this.opened.push(Promise.resolve(input));
  }

  /** The program at `path`: one verify made or opened already, else opened now (once, with the input's report budget). */
  get(path: string, reportBudget: PteFile['reportBudget']): Promise<PteFile> {
    let pte = this.byPath.get(path);
    if (pte === undefined) {
      pte = openPte(path, { reportBudget });
      this.byPath.set(path, pte);
      this.opened.push(pte);
    }
    return pte;
  }

  /**
   * Records `program`, written to `path` from `source`'s segments, as read
   * through `source`. It adds to the report budget as an opened program
   * does: reports about it are allowed for as much (its FlatBuffer is, up to
   * a few names, the size of its source's).
   */
  made(path: string, source: PteFile, program: Program): PteFile {
    source.reportBudget.allowFor(source.programBytes.length);
    const view: PteFile = { ...source, program, close: async () => {} };
    this.byPath.set(path, Promise.resolve(view));
    return view;
  }

  /** Closes every file opened here (one that failed to open has nothing to close). */
  async close(): Promise<void> {
    for (const p of this.opened) await p.then((pte) => pte.close()).catch(() => {});
  }
}
