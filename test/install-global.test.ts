// The README's way to get `trtx` on the PATH: `npm i -g .` from the clone
// (what `npm link` does too) makes a `trtx` command that works from any
// folder. Installed into a prefix of its own, offline: it links the clone,
// it downloads nothing.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { trtSingle } from '../src/examples/programs.js';
import { REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

describe('npm i -g . from the clone', () => {
  it('puts a working trtx on the PATH', { timeout: 120_000 }, async () => {
    const prefix = tempDir('npm-prefix');
    const elsewhere = tempDir('npm-elsewhere');
    const install = spawnSync('npm', ['install', '--global', '.', '--prefix', prefix, '--offline', '--no-audit', '--no-fund'], {
      cwd: REPO,
      encoding: 'utf8',
      env: { ...process.env, npm_config_loglevel: 'error' },
    });
    expect(install.status, install.stderr).toBe(0);
    await writeFixture(join(elsewhere, 'one.pte'), trtSingle());
    const env = { ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, NO_COLOR: '1' };
    const version = spawnSync('trtx', ['--version'], { cwd: elsewhere, env, encoding: 'utf8' });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);
    const check = spawnSync('trtx', ['check', 'one.pte'], { cwd: elsewhere, env, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/^one\.pte: no problems found \(runtime rules: zero-copy-trt, et-module\)$/m);
  });
});
