// Temporary folders a killed trtx left in TMPDIR. A command's folder
// (cleanup.ts's makeTempDir: `<prefix><pid>-<12 hex>`) holds what it wrote
// for a run: verify's zero-copy twin and the runner's files are as large as
// the program (issue 43: a kill -9 of `verify --zero-copy-kv` left a 2.2 GB
// twin that nothing removed). Ctrl-C and SIGTERM remove it on the way out;
// after SIGKILL the next command of the same kind sweeps: it removes each
// folder in the temporary root that has exactly such a name, is a folder
// (not a link) owned by this user, and whose process is gone. It never
// removes a folder whose process still runs (a reused id keeps it: left,
// not guessed at), another user's, or a name it did not make.

import { lstat, readdir, rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { ownPid, processAlive } from './os-process.js';

const OWNED = /^([0-9]+)-[0-9a-f]{12}$/;

/** The process that made the folder `name` with `prefix` (makeTempDir's name), or null when it is not such a name. */
export function tempDirOwner(name: string, prefix: string): number | null {
  if (!name.startsWith(prefix)) return null;
  const m = OWNED.exec(name.slice(prefix.length));
  return m ? Number(m[1]) : null;
}

/**
 * Removes the folders in `root` named by makeTempDir with one of `prefixes`
 * whose process is gone; returns their paths. Errors (a folder that cannot
 * be listed or removed) leave it as it was: a sweep never fails a command.
 */
export async function sweepStaleTempDirs(root: string, prefixes: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return removed;
  }
  const uid = userInfo().uid;
  for (const name of names) {
    const pid = prefixes.map((p) => tempDirOwner(name, p)).find((p) => p !== null);
    if (pid === undefined || pid === null || pid === ownPid || processAlive(pid)) continue;
    const path = join(root, name);
    const st = await lstat(path).catch(() => null);
    if (!st?.isDirectory() || st.uid !== uid) continue;
    try {
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // left as it was; the next sweep tries again
    }
  }
  return removed;
}
