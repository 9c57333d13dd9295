// `export -o`, `inspect --html` and `diff --html` check their target as
// `rewrite -o` does (src/util/target.ts): a regular file or a new path (a
// FIFO, device node, symbolic link or directory would be replaced by the
// final rename: OUTPUT_NOT_REGULAR), never an input by any name
// (OUTPUT_IS_INPUT), a name that fits (OUTPUT_NAME_TOO_LONG, and temporary
// names that fit a 255-byte target), a directory trtx may write
// (WRITE_PERMISSION, OUTPUT_DIR). Every refusal is exit 2, before any work,
// with the target left as it was. Export runs the named Python test doubles
// (test/doubles/python-with-doubles); a refusal never starts them.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { runTrtxAsUser } from './helpers/as-user.js';
import { DOUBLE_PYTHON, workspace } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

let dir: string;
let program: string;
let model: string;
let calls: string;
beforeAll(async () => {
  dir = tempDir('output-targets');
  chmodSync(dir, 0o755);
  program = join(dir, 'staged.pte');
  await writeFixture(program, kvDecoder({ mode: 'staged' }));
  const ws = workspace();
  chmodSync(ws.dir, 0o755); // read by the unprivileged user of the permission cases
  model = ws.file('model.pt2');
  calls = ws.calls;
});

const doubles = () => ({ TRTX_PYTHON: DOUBLE_PYTHON, TRTX_DOUBLE_PROGRAM: program, TRTX_DOUBLE_CALLS: calls });

/** The three writers, each aimed at `target`. */
const WRITERS: Record<string, (target: string) => string[]> = {
  'export -o': (t) => ['export', model, '-o', t],
  'inspect --html': (t) => ['inspect', program, '--html', t],
  'diff --html': (t) => ['diff', program, program, '--html', t],
};

async function refusal(args: string[]): Promise<{ code: string; message: string; hint?: string }> {
  const r = await runCli([...args, '--json'], { env: doubles() });
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).not.toContain('INTERNAL');
  return JSON.parse(r.stdout).error;
}

describe.each(Object.keys(WRITERS))('%s checks its target as rewrite -o does', (writer) => {
  const args = WRITERS[writer];

  it('refuses a FIFO and a symbolic link, and leaves them as they were; export never starts Python', async () => {
    const sub = mkdtempSync(join(dir, 'nodes-'));
    const fifo = join(sub, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const fifoErr = await refusal(args(fifo));
    expect(fifoErr.code).toBe('OUTPUT_NOT_REGULAR');
    expect(fifoErr.message).toContain('a FIFO');
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    const link = join(sub, 'link');
    symlinkSync(join(sub, 'elsewhere'), link);
    const linkErr = await refusal(args(link));
    expect(linkErr.code).toBe('OUTPUT_NOT_REGULAR');
    expect(linkErr.message).toContain('a symbolic link');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const sub2 = join(sub, 'a-directory');
    mkdirSync(sub2);
    expect((await refusal(args(sub2))).code).toBe('OUTPUT_NOT_REGULAR');
    expect(readdirSync(sub).sort()).toEqual(['a-directory', 'fifo', 'link']);
    expect(existsSync(calls)).toBe(false);
  });

  it.runIf(process.getuid?.() === 0)('refuses a device node made in the temp dir and leaves it a device node', async () => {
    const sub = mkdtempSync(join(dir, 'dev-'));
    const dev = join(sub, 'null-device');
    execFileSync('mknod', ['-m', '666', dev, 'c', '1', '3']);
    const err = await refusal(args(dev));
    expect(err.code).toBe('OUTPUT_NOT_REGULAR');
    expect(err.message).toContain('a device node');
    expect(lstatSync(dev).isCharacterDevice()).toBe(true);
  });

  it('refuses an input by another name (a hard link) as OUTPUT_IS_INPUT, input untouched', async () => {
    const input = writer === 'export -o' ? model : program;
    const alias = join(dir, `alias-${writer.replace(/\W+/g, '-')}`);
    execFileSync('ln', [input, alias]);
    const before = readFileSync(input);
    const err = await refusal(args(alias));
    expect(err.code).toBe('OUTPUT_IS_INPUT');
    expect(err.hint).not.toMatch(/--in-place/);
    expect(readFileSync(input).equals(before)).toBe(true);
    rmSync(alias);
  });

  it('refuses a name over 255 bytes and a missing directory', async () => {
    expect((await refusal(args(join(dir, 'n'.repeat(256))))).code).toBe('OUTPUT_NAME_TOO_LONG');
    expect((await refusal(args(join(dir, 'no-such-dir', 'x')))).code).toBe('OUTPUT_DIR');
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });

  it('a directory it may not write: WRITE_PERMISSION, nothing written', async () => {
    const sub = mkdtempSync(join(dir, 'ro-'));
    chmodSync(sub, 0o555);
    const r = await runTrtxAsUser([...args(join(sub, 'out')), '--json'], dir, doubles());
    expect(r.exitCode, r.stderr).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('WRITE_PERMISSION');
    expect(readdirSync(sub)).toEqual([]);
  }, 60_000);

  it('writes a 255-byte name (its temporary names fit), leaving nothing else behind', async () => {
    const sub = mkdtempSync(join(dir, 'long-'));
    chmodSync(sub, 0o755);
    const name = 'm'.repeat(250) + '.html';
    const r = await runCli(['-q', ...args(join(sub, name))], { env: doubles() });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(sub)).toEqual([name]);
    rmSync(calls, { force: true });
  });
});

describe('the --html writers', () => {
  it('refuse the program they describe with a hint for the report, not the rewrite', async () => {
    const before = readFileSync(program);
    const err = await refusal(['diff', program, program, '--html', program]);
    expect(err).toMatchObject({ code: 'OUTPUT_IS_INPUT' });
    expect(err.hint).toMatch(/report\.html/);
    expect(readFileSync(program).equals(before)).toBe(true);
  });

  it('a regular file that exists is replaced atomically', async () => {
    const target = join(dir, 'existing.html');
    writeFileSync(target, 'old');
    const r = await runCli(['inspect', program, '--html', target, '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).toMatch(/^<!doctype html>/);
  });
});

describe('export -o', () => {
  it('the model itself by its own path is still EXPORT_OUTPUT_IS_MODEL', async () => {
    expect((await refusal(['export', model, '-o', model])).code).toBe('EXPORT_OUTPUT_IS_MODEL');
  });

  it('an existing regular file is replaced, and the run reached the bridge', async () => {
    const target = join(dir, 'replaced.pte');
    copyFileSync(program, target);
    writeFileSync(target, 'an earlier program\n');
    const r = await runCli(['export', model, '-o', target, '-q'], { env: doubles() });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(target).subarray(4, 8).toString('latin1')).toBe('ET12');
    expect(existsSync(calls)).toBe(true);
    rmSync(calls);
  });
});
