// bin/trtx, the entry point: it runs the bundle while the bundle is newer
// than the sources, and the sources otherwise, saying so on stderr: once per
// change on a terminal, on every run under --log-level debug, never under
// --quiet or into a pipe otherwise. Run on a copy of bin/trtx in a folder
// whose src/ and node_modules/ link to this checkout's, with a dist/ of its
// own, so the real bundle is left alone.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const NOTICE = /^trtx: running from the TypeScript sources, /m;

function fakeRoot(state: 'stale' | 'fresh') {
  const root = tempDir('bin-entry');
  mkdirSync(join(root, 'bin'));
  copyFileSync(join(REPO, 'bin', 'trtx'), join(root, 'bin', 'trtx'));
  copyFileSync(join(REPO, 'package.json'), join(root, 'package.json'));
  for (const d of ['src', 'node_modules']) symlinkSync(join(REPO, d), join(root, d));
  mkdirSync(join(root, 'dist'));
  const bundle = join(root, 'dist', 'trtx.mjs');
  writeFileSync(
    bundle,
    "export const installSignalCleanup = () => {};\nexport async function main() { process.stdout.write('the bundle ran\\n'); return 0; }\n",
  );
  const t = state === 'stale' ? new Date(1000) : new Date(Date.now() + 3600_000);
  utimesSync(bundle, t, t);
  return root;
}

/** Runs the copy of bin/trtx with stderr a pipe. */
const piped = (root: string, args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'trtx'), ...args], { encoding: 'utf8' });

/** Runs it on a terminal (a pseudo-terminal from script(1)); stdout and stderr come back together. */
function onTerminal(root: string, args: string[]) {
  const cmd = [process.execPath, join(root, 'bin', 'trtx'), ...args].map((a) => `'${a}'`).join(' ');
  return spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8' });
}

describe('bin/trtx', () => {
  it('runs a bundle newer than the sources, and says nothing', () => {
    const root = fakeRoot('fresh');
    const r = onTerminal(root, ['--version']);
    expect(r.stdout).toContain('the bundle ran');
    expect(r.stdout).not.toMatch(NOTICE);
  });

  it('watches src/ only: a test fixture edited after the bundle leaves it current', () => {
    const root = fakeRoot('fresh');
    // Shipped code never imports fixtures/ (npm run deps), so the bundle does not hold it.
    mkdirSync(join(root, 'fixtures'));
    const later = join(root, 'fixtures', 'edited.ts');
    writeFileSync(later, 'export {};\n');
    const t = new Date(Date.now() + 7200_000);
    utimesSync(later, t, t);
    const r = piped(root, ['--version', '--log-level', 'debug']);
    expect(r.stdout).toContain('the bundle ran');
    expect(r.stderr).not.toMatch(NOTICE);
  });

  it('with a stale bundle: runs the sources and says so once on a terminal', { timeout: 60_000 }, () => {
    const root = fakeRoot('stale');
    const first = onTerminal(root, ['--version']);
    expect(first.status, first.stdout).toBe(0);
    expect(first.stdout).toMatch(NOTICE);
    expect(first.stdout).toContain('0.1.0');
    expect(first.stdout).not.toContain('the bundle ran');
    const second = onTerminal(root, ['--version']);
    expect(second.stdout).toContain('0.1.0');
    expect(second.stdout).not.toMatch(NOTICE);
  });

  it('with a stale bundle, into a pipe: only under --log-level debug, never with --quiet', { timeout: 60_000 }, () => {
    const root = fakeRoot('stale');
    expect(piped(root, ['--version']).stderr).not.toMatch(NOTICE);
    expect(piped(root, ['--log-level', 'debug', '--version']).stderr).toMatch(NOTICE);
    expect(piped(root, ['--log-level=trace', '--version']).stderr).toMatch(NOTICE);
    expect(piped(root, ['--log-level', 'debug', '--quiet', '--version']).stderr).not.toMatch(NOTICE);
  });
});
