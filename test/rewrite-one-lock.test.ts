// One file, one writer lock, whatever its name (issue 43): the lock was a
// file beside the path as given, so two in-place rewrites of one file named
// through a hard link or a symbolic link took two locks and one update was
// lost. Now a symbolic link's lock, journal and write are its file's, and the
// file itself is locked too (a hard link is the same file). An in-place
// rewrite through a link rewrites the file and leaves the link a link;
// devices, FIFOs and sockets are refused as in-place targets and outputs.
import { beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { trtBesideCuda } from '../src/examples/programs.js';
import { budgetPass } from '../src/passes/budget.js';
import { journalPath, publishRewrite } from '../src/pte/in-place.js';
import { decodePteBytes, openPte } from '../src/pte/open.js';
import { writePte } from '../src/pte/write.js';
import { lockTarget } from '../src/util/file-lock.js';
import { runCli } from './helpers/cli.js';
import { BIN } from './helpers/spawn-trtx.js';
import { tempDir } from './helpers/temp.js';

let source: string;
beforeAll(async () => {
  source = join(tempDir('one-lock'), 'source.pte');
  await writeFixture(source, kvDecoder({ mode: 'staged' }));
});

/** A folder with the program as `model.pte`, a hard link `alias.pte` and a symbolic link `link.pte` to it. */
function names() {
  const dir = tempDir('one-lock');
  const file = join(dir, 'model.pte');
  copyFileSync(source, file);
  const hard = join(dir, 'alias.pte');
  linkSync(file, hard);
  const soft = join(dir, 'link.pte');
  symlinkSync('model.pte', soft);
  return { dir, file, hard, soft };
}

/** weight_streaming_budget of each method's TensorRT delegates, by method. */
function budgets(file: string): Record<string, string[]> {
  const { program } = decodePteBytes(new Uint8Array(readFileSync(file)));
  return Object.fromEntries(
    program.executionPlan.map((p) => [
      p.name,
      p.delegates.map((d) =>
        new TextDecoder().decode(d.compileSpecs.find((c) => c.key === 'weight_streaming_budget')?.value ?? new Uint8Array()),
      ),
    ]),
  );
}

const refusal = (r: { stdout: string }) => JSON.parse(r.stdout).error as { code: string; message: string; location: string };

describe('one lock per file', () => {
  it('a writer holding the file by its name locks out an in-place rewrite through a hard link', async () => {
    const { file, hard } = names();
    const lock = await lockTarget(file, { wait: false, command: 'test holder' });
    try {
      const r = await runCli(['rewrite', hard, '--in-place', '--budget', '1GiB', '--no-wait', '--json']);
      expect(r.code, r.stderr).toBe(2);
      expect(refusal(r)).toMatchObject({ code: 'REWRITE_LOCKED', message: expect.stringContaining('under another name') });
    } finally {
      await lock.release();
    }
    expect(budgets(file)).toEqual(budgets(source));
  });

  it('and through a symbolic link, naming the holder (the lock is the file’s)', async () => {
    const { file, soft } = names();
    const lock = await lockTarget(file, { wait: false, command: 'test holder' });
    try {
      const r = await runCli(['rewrite', soft, '--in-place', '--budget', '1GiB', '--no-wait', '--json']);
      expect(r.code, r.stderr).toBe(2);
      expect(refusal(r)).toMatchObject({
        code: 'REWRITE_LOCKED',
        message: expect.stringContaining(`trtx pid ${process.pid} (test holder`),
      });
    } finally {
      await lock.release();
    }
    expect(budgets(file)).toEqual(budgets(source));
  });

  it('two in-place rewrites of different methods by two names both land, in every trial', async () => {
    const pairs = [
      ['file', 'hard'],
      ['soft', 'hard'],
      ['soft', 'file'],
      ['hard', 'soft'],
    ] as const;
    for (const [t, [first, second]] of pairs.entries()) {
      const n = names();
      const [a, b] = await Promise.all([
        runCli(['rewrite', n[first], '--in-place', '--budget', '3GiB', '--method', 'decode', '-q']),
        runCli(['rewrite', n[second], '--in-place', '--budget', '5GiB', '--method', 'prefill', '-q']),
      ]);
      expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
      expect(budgets(n.file), `trial ${t}: ${first} and ${second}`).toEqual({ decode: ['3221225472'], prefill: ['5368709120'] });
      expect(lstatSync(n.soft).isSymbolicLink()).toBe(true);
      expect(lstatSync(n.hard).ino).toBe(lstatSync(n.file).ino);
      expect(readdirSync(n.dir).sort()).toEqual(['alias.pte', 'link.pte', 'model.pte']);
    }
  }, 120_000);

  it('a reader of a hard link says a writer is at work while the file is held by its other name', async () => {
    const { file, hard } = names();
    const bytes = new Uint8Array(readFileSync(file));
    bytes.set(new TextEncoder().encode('TXIP'), 4);
    writeFileSync(file, bytes);
    const lock = await lockTarget(file, { wait: false, command: 'rewrite --in-place' });
    try {
      // In a process of its own: a reader tells a writer at work by a holder that is not itself.
      const r = await execa(process.execPath, [BIN, 'inspect', '--json', hard], { reject: false, env: { NO_COLOR: '1' } });
      expect(r.exitCode).toBe(2);
      expect(JSON.parse(r.stdout).error.code).toBe('PTE_REWRITE_IN_PROGRESS');
    } finally {
      await lock.release();
    }
  }, 60_000);
});

describe('an in-place rewrite through a link', () => {
  it('that must replace the file replaces the file the symbolic link points to, never the link', async () => {
    const dir = tempDir('one-lock');
    const file = join(dir, 'tight.pte');
    // Segments at 16-byte alignment: a program that grows no longer fits before them, so the file is replaced by a full rewrite.
    const built = buildProgram(trtBesideCuda());
    await writePte(file, built.program, built.segments, { alignment: 16 });
    const before = readFileSync(file);
    const soft = join(dir, 'link.pte');
    symlinkSync('tight.pte', soft);
    const r = await runCli(['rewrite', soft, '--in-place', '--budget', '8GiB', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ mode: 'atomic', fallback: expect.stringContaining('does not fit') });
    expect(lstatSync(soft).isSymbolicLink()).toBe(true);
    expect(readFileSync(file).equals(before)).toBe(false);
    expect(readFileSync(soft).equals(readFileSync(file))).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['link.pte', 'tight.pte']);
  });

  it('an interrupted rewrite by one name is finished by a rerun through a hard link in the same folder', async () => {
    const { file, hard } = names();
    const pte = await openPte(file);
    const segments = pte.program.segments.map((s) => ({ ...s }));
    const { changed } = budgetPass({ budget: 2n << 30n })(pte.program);
    const crash = (step: string) => {
      if (step === 'body') throw new Error('power cut');
    };
    await expect(
      publishRewrite(pte, pte.program, segments, { inPlace: true, output: file, changed, hooks: { afterStep: crash } }),
    ).rejects.toThrow('power cut');
    await pte.close();
    const again = await runCli(['rewrite', hard, '--in-place', '--budget', '4GiB']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.split('\n')[0]).toBe(`finished an interrupted rewrite of ${hard} from ${journalPath(file)}`);
    expect(budgets(file)).toEqual({ decode: ['4294967296'], prefill: ['4294967296'] });
    expect(existsSync(journalPath(file))).toBe(false);
  });
});

describe.concurrent('special files are refused', () => {
  it('as in-place targets: /dev/null, /dev/stdin, a FIFO, a link to one; before any lock file is made', async () => {
    const dir = tempDir('one-lock');
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const toFifo = join(dir, 'to-fifo.pte');
    symlinkSync(fifo, toFifo);
    for (const path of ['/dev/null', '/dev/stdin', fifo, toFifo]) {
      const r = await runCli(['rewrite', path, '--in-place', '--budget', '1GiB', '--json']);
      expect(r.code, `${path}: ${r.stderr}`).toBe(2);
      expect(refusal(r), path).toMatchObject({ code: 'OUTPUT_NOT_REGULAR', location: path });
    }
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['fifo', 'to-fifo.pte']);
    expect(existsSync('/dev/.null.trtx-lock')).toBe(false);
  });

  it('as outputs: /dev/null, /dev/stdin (a link to a descriptor)', async () => {
    for (const path of ['/dev/null', '/dev/stdin']) {
      const r = await runCli(['rewrite', source, '-o', path, '--json']);
      expect(r.code, `${path}: ${r.stderr}`).toBe(2);
      expect(refusal(r), path).toMatchObject({ code: 'OUTPUT_NOT_REGULAR', location: path });
    }
    expect(lstatSync('/dev/null').isCharacterDevice()).toBe(true);
  });
});
