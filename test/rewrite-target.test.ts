// Where `trtx rewrite` may write: a regular file or a new path (never a
// FIFO, a device node, a symbolic link or a directory, which the rename
// would replace), not the input itself unless --in-place or --force; temp,
// journal and lock names that fit any legal target name; permission errors
// as coded refusals; and file names with control characters escaped in
// human output, so a name cannot forge an `error:` line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { escapeControls } from '../src/util/escape.js';
import { sidecarPath, tempPath, NAME_MAX } from '../src/util/target.js';
import { runTrtxAsUser } from './helpers/as-user.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

let dir: string;
let source: string;
beforeAll(async () => {
  dir = tempDir('target');
  source = join(dir, 'source.pte');
  await writeFixture(source, kvDecoder({ mode: 'staged' }));
});
afterAll(() => {
  chmodSync(dir, 0o755); // tempDir's own afterAll, which runs after this one, removes it
});

// The cases go at once (runCli's runs share nothing): each reads the shared inputs or writes files of its own names.
describe.concurrent('-o must be a regular file or a new path', () => {
  const refuse = async (output: string, kind: string) => {
    const r = await runCli(['rewrite', source, '-o', output, '--json']);
    expect(r.code, r.stderr).toBe(2);
    const err = JSON.parse(r.stdout).error;
    expect(err.code).toBe('OUTPUT_NOT_REGULAR');
    expect(err.message).toContain(kind);
  };

  it('refuses a FIFO and leaves it a FIFO', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await refuse(fifo, 'a FIFO');
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it('refuses a symbolic link (the rename would replace the link) and a directory', async () => {
    const link = join(dir, 'link.pte');
    symlinkSync(source, link);
    await refuse(link, 'a symbolic link');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    await refuse(sub, 'a directory');
  });

  it.runIf(process.getuid?.() === 0)('refuses a device node and leaves it a device node', async () => {
    const dev = join(dir, 'null-device');
    execFileSync('mknod', ['-m', '666', dev, 'c', '1', '3']);
    await refuse(dev, 'a device node');
    expect(lstatSync(dev).isCharacterDevice()).toBe(true);
  });

  it('asks for --in-place (or --force) when -o names the input', async () => {
    const file = join(dir, 'self.pte');
    copyFileSync(source, file);
    const before = readFileSync(file);
    const r = await runCli(['rewrite', file, '-o', file, '--budget', '1GiB', '--json']);
    expect(r.code).toBe(2);
    const err = JSON.parse(r.stdout).error;
    expect(err.code).toBe('OUTPUT_IS_INPUT');
    expect(err.hint).toMatch(/--in-place.*--force/);
    expect(readFileSync(file).equals(before)).toBe(true);
    // The same file by another name (a hard link is the same inode) counts too.
    const alias = join(dir, 'self-alias.pte');
    execFileSync('ln', [file, alias]);
    const aliased = await runCli(['rewrite', file, '-o', alias, '--json']);
    expect(aliased.code).toBe(2);
    expect(JSON.parse(aliased.stdout).error).toMatchObject({ code: 'OUTPUT_IS_INPUT', location: alias });
    expect(readFileSync(file).equals(before)).toBe(true);
    expect((await runCli(['rewrite', file, '-o', file, '--force', '--budget', '1GiB', '-q'])).code).toBe(0);
    expect((await runCli(['rewrite', file, '--in-place', '-o', file, '--budget', '2GiB', '-q'])).code).toBe(0);
    // --force with --in-place is a usage error, refused before the file is opened.
    const both = await runCli(['rewrite', file, '--in-place', '--force', '--budget', '1GiB', '--json']);
    expect(both.code).toBe(2);
    expect(JSON.parse(both.stdout).error).toMatchObject({ code: 'USAGE', message: expect.stringMatching(/--in-place needs no --force/) });
  });

  it('refuses a missing output directory as OUTPUT_DIR', async () => {
    const r = await runCli(['rewrite', source, '-o', join(dir, 'missing', 'x.pte'), '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('OUTPUT_DIR');
  });
});

describe.concurrent('names near NAME_MAX', () => {
  it('temp, journal and lock names fit, and stay distinct for distinct long names', () => {
    for (const n of [1, 200, 238, 250, 255]) {
      const target = join(dir, 'é'.repeat(Math.floor(n / 2)) + 'x'.repeat(n % 2));
      for (const p of [tempPath(target), sidecarPath(target, '.trtx-inplace'), sidecarPath(target, '.trtx-lock', true)]) {
        expect(Buffer.byteLength(p.slice(dir.length + 1))).toBeLessThanOrEqual(NAME_MAX);
      }
    }
    const a = join(dir, 'a'.repeat(250) + '1');
    const b = join(dir, 'a'.repeat(250) + '2');
    expect(sidecarPath(a, '.trtx-lock', true)).not.toBe(sidecarPath(b, '.trtx-lock', true));
  });

  it.each([238, 247, 255])('rewrites to and in place on a %i-byte name, leaving nothing else behind', async (n) => {
    const sub = mkdtempSync(join(dir, 'long-'));
    const name = 'm'.repeat(n - 4) + '.pte';
    const out = join(sub, name);
    const r = await runCli(['rewrite', source, '-o', out, '-q']);
    expect(r.code, r.stderr).toBe(0);
    const inPlace = await runCli(['rewrite', out, '--in-place', '--budget', '1GiB', '-q']);
    expect(inPlace.code, inPlace.stderr).toBe(0);
    expect(inPlace.stdout).toContain('in place');
    // The full atomic path of --in-place (a program that no longer fits before the segments) uses a temp name too.
    const full = await runCli(['rewrite', out, '-o', out, '--force', '--zero-copy-kv', '-q']);
    expect(full.code, full.stderr).toBe(0);
    expect(readdirSync(sub)).toEqual([name]);
  });

  it('refuses a name longer than NAME_MAX as OUTPUT_NAME_TOO_LONG', async () => {
    const r = await runCli(['rewrite', source, '-o', join(dir, 'n'.repeat(256)), '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('OUTPUT_NAME_TOO_LONG');
  });
});

describe.concurrent('permission errors are coded refusals', () => {
  it('--in-place on a read-only file: WRITE_PERMISSION, exit 2, file untouched', async () => {
    const sub = mkdtempSync(join(dir, 'ro-'));
    chmodSync(sub, 0o777);
    const file = join(sub, 'ro.pte');
    copyFileSync(source, file);
    chmodSync(file, 0o444);
    const before = readFileSync(file);
    const r = await runTrtxAsUser(['rewrite', file, '--in-place', '--budget', '1GiB', '--json'], sub);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('WRITE_PERMISSION');
    expect(r.stderr).not.toContain('INTERNAL');
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(sub).filter((n) => !n.startsWith('home-'))).toEqual(['ro.pte']);
  }, 60_000);

  it('-o into a directory it cannot write: WRITE_PERMISSION', async () => {
    const sub = mkdtempSync(join(dir, 'rodir-'));
    chmodSync(sub, 0o555);
    const r = await runTrtxAsUser(['rewrite', source, '-o', join(sub, 'x.pte'), '--json'], dir);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('WRITE_PERMISSION');
    expect(statSync(sub).isDirectory()).toBe(true);
    expect(readdirSync(sub)).toEqual([]);
  }, 60_000);
});

describe.concurrent('control characters in names', () => {
  it('a file name with a newline cannot forge an error line', async () => {
    const evil = join(dir, 'evil\nerror: FORGED: all is lost.pte');
    copyFileSync(source, evil);
    for (const args of [
      ['check', evil],
      ['inspect', evil],
      ['check', evil + '.missing'],
      ['rewrite', evil, '-o', evil, '--budget', '1GiB'],
    ]) {
      const r = await runCli(args);
      const lines = (r.stdout + r.stderr).split('\n');
      expect(
        lines.filter((l) => l.startsWith('error: FORGED')),
        args.join(' '),
      ).toEqual([]);
      expect(r.stdout + r.stderr).toContain('evil\\nerror: FORGED');
    }
  });

  it('escapes every C0 and C1 control and the Unicode line separators, and keeps only colour sequences', () => {
    expect(escapeControls('a\nb\rc\td\x00e\x1b[2Jf\x9bg\u2028h')).toBe('a\\nb\\rc\\td\\x00e\\x1b[2Jf\\x9bg\\u2028h');
    expect(escapeControls('\x1b[31mred\x1b[39m\x1b[2J', true)).toBe('\x1b[31mred\x1b[39m\\x1b[2J');
  });
});
