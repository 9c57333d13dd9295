// Two ways to get `trtx` on the PATH, each into a prefix of its own:
// - `npm i -g .` from the clone (what `npm link` does too), offline: it
//   links the clone, it downloads nothing;
// - the package: `npm pack` makes a tarball (dist/ built by prepack, the
//   native runner's and the Python bridge's sources, no tests or fixtures)
//   that `npm install -g TARBALL --prefix DIR` installs for a non-root user
//   (docs/install.md), whose `trtx demo` works from any folder. Its
//   dependencies come from npm's cache where `npm ci` left them; the
//   registry is asked only for what the cache lacks (--prefer-offline).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { trtSingle } from '../src/examples/programs.js';
import { sourceHash } from '../src/runner/build.js';
import { REPO } from './helpers/bridge.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const quietNpm = { ...process.env, npm_config_loglevel: 'error' };
const pathWith = (prefix: string) => ({ ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, NO_COLOR: '1' });

describe('npm i -g . from the clone', () => {
  it('puts a working trtx on the PATH', { timeout: 120_000 }, async () => {
    const prefix = tempDir('npm-prefix');
    const elsewhere = tempDir('npm-elsewhere');
    const install = spawnSync('npm', ['install', '--global', '.', '--prefix', prefix, '--offline', '--no-audit', '--no-fund'], {
      cwd: REPO,
      encoding: 'utf8',
      env: quietNpm,
    });
    expect(install.status, install.stderr).toBe(0);
    await writeFixture(join(elsewhere, 'one.pte'), trtSingle());
    const env = pathWith(prefix);
    const version = spawnSync('trtx', ['--version'], { cwd: elsewhere, env, encoding: 'utf8' });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);
    const check = spawnSync('trtx', ['check', 'one.pte'], { cwd: elsewhere, env, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/^one\.pte: no problems found \(runtime rules: zero-copy-trt, et-module\)$/m);
  });
});

/**
 * The working tree as a clone has it (tracked and untracked files git does
 * not ignore), with this checkout's node_modules linked in: npm pack's
 * prepack builds dist/ there, never in the checkout other tests run from.
 */
function copyOfWorkingTree(dest: string): void {
  const files = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: REPO, encoding: 'utf8' });
  expect(files.status, files.stderr).toBe(0);
  for (const rel of files.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(REPO, rel))) continue; // deleted, not yet committed
    mkdirSync(dirname(join(dest, rel)), { recursive: true });
    cpSync(join(REPO, rel), join(dest, rel));
  }
  symlinkSync(join(REPO, 'node_modules'), join(dest, 'node_modules'));
}

describe('the npm package (npm pack, npm install -g TARBALL --prefix)', () => {
  it('installs for a non-root user and runs trtx demo from any folder', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const clone = tempDir('npm-clone');
    copyOfWorkingTree(clone);
    const packed = tempDir('npm-packed');
    const pack = spawnSync('npm', ['pack', '--json', '--pack-destination', packed], { cwd: clone, encoding: 'utf8', env: quietNpm });
    expect(pack.status, pack.stderr).toBe(0);
    const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
    const paths = info.files.map((f) => f.path);
    // What trtx needs at run time is in it ...
    for (const needed of [
      'bin/trtx',
      'dist/trtx.mjs',
      'native-runner/CMakeLists.txt',
      'python-bridge/requirements.lock',
      'python-bridge/executorch-sdk.json',
      'python-bridge/trtx_bridge/__init__.py',
      'python-bridge/corpus/demo_model.py',
      'schemas/env.schema.json',
    ]) {
      expect(paths).toContain(needed);
    }
    // ... and what only develops it is not.
    expect(
      paths.filter((p) => /^(src|test|fixtures|bench|scripts)\/|__pycache__|^native-runner\/tests\/|^python-bridge\/tests/.test(p)),
    ).toEqual([]);
    // Every chunk the bundle carries is one this build wrote (no stale ones from earlier builds).
    expect(paths.filter((p) => p.startsWith('dist/')).length).toBe(
      readdirSync(join(clone, 'dist')).filter((n) => n !== '.sources-notice').length,
    );

    const prefix = tempDir('npm-local');
    const install = spawnSync(
      'npm',
      ['install', '--global', join(packed, info.filename), '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund'],
      { encoding: 'utf8', env: quietNpm },
    );
    expect(install.status, install.stderr).toBe(0);
    const installed = join(prefix, 'lib', 'node_modules', 'trtx');
    expect(existsSync(join(installed, 'src'))).toBe(false);
    // The runner it would build is the one of these sources: every build input was packed.
    expect(await sourceHash(join(installed, 'native-runner'))).toBe(await sourceHash(join(REPO, 'native-runner')));

    const elsewhere = tempDir('npm-demo');
    const demo = spawnSync('trtx', ['demo', '--out', 'out'], {
      cwd: elsewhere,
      encoding: 'utf8',
      // This checkout's runner build (built once for the tests); .ci/run runs the installed demo with its own build.
      env: { ...pathWith(prefix), TRTX_RUNNER_BIN: await testRunner() },
    });
    expect(demo.status, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/^done: the zero-copy program computes what the staged one does/m);
    expect(readdirSync(join(elsewhere, 'out')).sort()).toEqual(['kv-decode-small-staged.pte', 'kv-decode-small-zero-copy.pte']);
  });
});
