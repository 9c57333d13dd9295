// Temporary files a killed writer left beside a target. A writer writes a
// whole new file to `.NAME.<pid>-<hex>.tmp` and renames it over NAME
// (src/util/target.ts); SIGKILL, a crash or a power cut between the two
// leaves the temporary file (as large as the program: hundreds of MiB).
// Ctrl-C and SIGTERM remove it on the way out (src/util/cleanup.ts), but
// nothing runs after SIGKILL, so the next writer of the same target
// sweeps: under the writer lock (src/util/file-lock.ts), it removes each
// file that has exactly trtx's name for this target and whose writer
// process is gone. It never removes anything else: another name, a name
// of another target, a directory or link, a file whose process still runs
// (a reused pid is reported instead), or one named by an earlier trtx that
// did not record its process (reported with the command that removes it).
//
// Process ids are this host's: a target on a filesystem that several hosts
// write at once is outside what the writer lock promises too.

import { lstat, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { legacyTempPath, tempPath } from './target.js';
import { ownPid, processAlive } from './os-process.js';

export interface LeftTemp {
  path: string;
  why: string;
  /** The command that removes it, quoted for a POSIX shell. */
  remove: string;
}

export interface StaleTemps {
  removed: string[];
  left: LeftTemp[];
}

const CURRENT = /^\..+\.([0-9]+)-([0-9a-f]{12})\.tmp$/;
const LEGACY = /^\..+\.([0-9a-f]{12})\.tmp$/;

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Removes the temporary files of `owners` (a target, and the sidecars
 * written by rename beside it, such as the in-place journal) whose writer
 * is gone; reports those it may not remove. All owners share a folder.
 * Call it holding the target's writer lock.
 */
export async function sweepStaleTemps(owners: readonly string[]): Promise<StaleTemps> {
  const out: StaleTemps = { removed: [], left: [] };
  const [first] = owners;
  if (first === undefined) return out;
  const dir = dirname(first);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return out; // a folder trtx cannot list is reported by the write itself
  }
  for (const name of names) {
    const current = CURRENT.exec(name);
    const legacy = current ? null : LEGACY.exec(name);
    if (!current && !legacy) continue;
    // Exactly the name trtx gives a temporary file of one of the owners.
    const ours = owners.some((o) =>
      current
        ? basename(tempPath(o, Number(current[1]), current[2] ?? '')) === name
        : basename(legacyTempPath(o, legacy?.[1] ?? '')) === name,
    );
    if (!ours) continue;
    const path = join(dir, name);
    const st = await lstat(path).catch(() => null);
    if (!st?.isFile()) continue;
    const pid = current ? Number(current[1]) : null;
    if (pid === ownPid) continue;
    if (pid !== null && !processAlive(pid)) {
      await rm(path, { force: true });
      out.removed.push(path);
      continue;
    }
    out.left.push({
      path,
      why:
        pid === null
          ? 'written by an earlier trtx that did not record its process; remove it if no trtx is writing this target'
          : `its writer, process ${pid}, is running (or its id was reused); remove it once no trtx is writing this target`,
      remove: `rm -- ${shellQuote(path)}`,
    });
  }
  return out;
}
