// Runs bin/trtx as an unprivileged user, for the permission refusals: root
// ignores permission bits, so under root the command runs as uid 65534
// (setpriv). The test run's temp dir is private (0700, test/global-temp-dir.ts),
// so the folders down to the test's own are made searchable (0711: entered,
// not listed) and the child gets a temp dir and HOME it may write (tsx keeps
// its compile cache there), inside the test's folder.
import { execa } from 'execa';
import { chmodSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { BIN } from './spawn-trtx.js';

const AS_USER = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];

/** Every folder from the run's temp dir down to `dir` searchable by others. */
function reachable(dir: string): void {
  const top = resolve(tmpdir());
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (relative(top, d).startsWith('..')) break;
    const mode = statSync(d).mode & 0o777;
    if ((mode & 0o001) === 0) chmodSync(d, mode | 0o011);
    if (d === top || d === dirname(d)) break;
  }
}

export async function runTrtxAsUser(args: string[], dir: string, env: Record<string, string> = {}) {
  reachable(dir);
  const home = mkdtempSync(join(dir, 'home-'));
  chmodSync(home, 0o777);
  const cmd = [...AS_USER, process.execPath, BIN, ...args];
  return execa(cmd[0], cmd.slice(1), { reject: false, env: { HOME: home, TMPDIR: home, NO_COLOR: '1', ...env } });
}
