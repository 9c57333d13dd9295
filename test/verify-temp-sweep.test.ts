// verify's temporary folder after a kill -9 (issue 43): `verify
// --zero-copy-kv` writes its zero-copy twin, as large as the program, into
// `$TMPDIR/trtx-verify-<pid>-<hex>`; SIGKILL runs no handler, so the folder
// stays. The next verify removes every such folder (and the runner's,
// `trtx-runner-<pid>-<hex>`) whose process is gone, and nothing else: a live
// owner's folder, another user's name, a file of that name.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { makeTempDir } from '../src/util/cleanup.js';
import { tempDirOwner } from '../src/util/stale-temp-dirs.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/** A process standing in for verify: it runs until killed. */
function owner() {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return { pid: child.pid!, kill9: async () => (child.kill('SIGKILL'), await exited) };
}

/** A folder as makeTempDir names it for process `pid`, with a twin in it. */
function folderOf(root: string, prefix: string, pid: number): string {
  const path = join(root, `${prefix}${pid}-0123456789ab`);
  mkdirSync(path);
  writeFileSync(join(path, 'zero-copy-twin.pte'), new Uint8Array(4096));
  return path;
}

describe('verify sweeps what a killed verify left in TMPDIR', () => {
  it('names its folder for its process', async () => {
    const root = tempDir('sweep-name');
    const t = await makeTempDir('trtx-verify-', root);
    try {
      expect(tempDirOwner(basename(t.path), 'trtx-verify-')).toBe(process.pid);
    } finally {
      await t.remove();
    }
  });

  it(
    'removes a killed owner\u2019s twin folder and the runner\u2019s, keeps a live one\u2019s and other names',
    { timeout: 60_000 },
    async () => {
      const tmp = tempDir('sweep-tmp');
      const dead = owner();
      const live = owner();
      try {
        const killedTwin = folderOf(tmp, 'trtx-verify-', dead.pid);
        const killedRunner = folderOf(tmp, 'trtx-runner-', dead.pid);
        await dead.kill9();
        const liveTwin = folderOf(tmp, 'trtx-verify-', live.pid);
        const other = folderOf(tmp, 'trtx-verify-keep-', dead.pid);
        const unnamed = join(tmp, 'trtx-verify-0123456789ab'); // an earlier trtx's name, no owner recorded
        mkdirSync(unnamed);
        const file = join(tmp, `trtx-verify-${dead.pid}-ba9876543210`);
        writeFileSync(file, 'not a folder');

        const work = tempDir('sweep-work');
        const pte = join(work, 'broken.pte');
        await writeFixture(pte, catalogueEntry('broken-host-planned-arena.pte').build());
        // Check refuses this program before anything runs: the sweep comes first all the same.
        const r = await runCli(['verify', pte, '--zero-copy-kv'], { env: { TMPDIR: tmp } });
        expect(r.code, r.stderr).not.toBe(0);
        expect(existsSync(killedTwin)).toBe(false);
        expect(existsSync(killedRunner)).toBe(false);
        expect(readdirSync(tmp).sort()).toEqual([basename(liveTwin), basename(other), basename(unnamed), basename(file)].sort());
      } finally {
        await live.kill9();
      }
    },
  );
});
