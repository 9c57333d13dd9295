// One writer at a time: concurrent in-place rewrites of one file both land
// (before the writer lock, 93 of 150 trials lost one of the two changes),
// a second writer waits with a message or fails fast under --no-wait, a
// killed holder releases the lock, and a reader that meets the in-progress
// marker while a writer holds the lock says so instead of "rerun".
import { beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { decodePteBytes } from '../src/pte/open.js';
import { lockPathFor, lockTarget } from '../src/util/file-lock.js';
import { runCli } from './helpers/cli.js';
import { BIN } from './helpers/spawn-trtx.js';
import { tempDir } from './helpers/temp.js';

// A reader in a process of its own: open.ts tells a writer at work by a lock holder of another pid.
const trtx = (args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env: { NO_COLOR: '1' } });

let dir: string;
let source: string;
beforeAll(async () => {
  dir = tempDir('lock');
  source = join(dir, 'source.pte');
  await writeFixture(source, kvDecoder({ mode: 'staged' }));
});

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

describe('concurrent writers of one file', () => {
  it('two in-place rewrites changing different methods both land, in every trial', async () => {
    const trials = Number(process.env.TRTX_LOCK_TRIALS ?? 8);
    for (let t = 0; t < trials; t++) {
      const file = join(dir, `race-${t}.pte`);
      copyFileSync(source, file);
      // Two runs in this process: the lock is a flock held by a child of each (util/file-lock.ts), so they contend as two processes do.
      const [a, b] = await Promise.all([
        runCli(['rewrite', file, '--in-place', '--budget', '3GiB', '--method', 'decode', '-q']),
        runCli(['rewrite', file, '--in-place', '--budget', '5GiB', '--method', 'prefill', '-q']),
      ]);
      expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
      expect(budgets(file), `trial ${t}`).toEqual({ decode: ['3221225472'], prefill: ['5368709120'] });
      expect(existsSync(lockPathFor(file))).toBe(false);
    }
  }, 120_000);
});

describe('a second writer', () => {
  it('fails fast under --no-wait with REWRITE_LOCKED naming the holder', async () => {
    const file = join(dir, 'held.pte');
    copyFileSync(source, file);
    const lock = await lockTarget(file, { wait: false, command: 'test holder' });
    try {
      const r = await runCli(['rewrite', file, '--in-place', '--budget', '1GiB', '--no-wait', '--json']);
      expect(r.code).toBe(2);
      const err = JSON.parse(r.stdout).error;
      expect(err.code).toBe('REWRITE_LOCKED');
      expect(err.message).toContain(`trtx pid ${process.pid} (test holder`);
      // -o onto a held target is refused too; the input was not changed.
      const o = await runCli(['rewrite', source, '-o', file, '--no-wait']);
      expect(o.code).toBe(2);
      expect(o.stderr).toContain('REWRITE_LOCKED');
    } finally {
      await lock.release();
    }
    expect(budgets(file)).toEqual(budgets(source));
  });

  it('waits with a message while another writer holds the lock, then writes', async () => {
    const file = join(dir, 'wait.pte');
    copyFileSync(source, file);
    const lock = await lockTarget(file, { wait: false, command: 'test holder' });
    const child = execa(process.execPath, [BIN, 'rewrite', file, '--in-place', '--budget', '2GiB'], {
      reject: false,
      env: { NO_COLOR: '1' },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      for (let i = 0; i < 200 && !stderr.includes('waiting for the writer'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(stderr).toContain(`waiting for the writer that holds ${file}: trtx pid ${process.pid}`);
      expect(child.exitCode).toBe(null);
    } finally {
      await lock.release();
    }
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(budgets(file)).toEqual({ decode: ['2147483648'], prefill: ['2147483648'] });
  }, 60_000);

  it('gets the lock at once when its holder was killed (the kernel releases a flock)', async () => {
    const file = join(dir, 'killed.pte');
    copyFileSync(source, file);
    const holder = execa(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('${resolve('src/util/file-lock.ts')}').then((m) => m.lockTarget(${JSON.stringify(file)}, { wait: false, command: 'doomed' })).then(() => { console.log('held'); setInterval(() => {}, 1000); })`,
      ],
      {
        reject: false,
        cwd: resolve(fileURLToPath(new URL('..', import.meta.url))),
      },
    );
    let out = '';
    holder.stdout.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 200 && !out.includes('held'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(out).toContain('held');
    expect((await runCli(['rewrite', file, '--in-place', '--budget', '1GiB', '--no-wait'])).code).toBe(2);
    holder.kill('SIGKILL');
    await holder;
    // The helper sees its stdin close and ends; give it a moment.
    let code = 2;
    for (let i = 0; i < 40 && code !== 0; i++) {
      code = (await runCli(['rewrite', file, '--in-place', '--budget', '1GiB', '--no-wait', '-q'])).code;
      if (code !== 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(code).toBe(0);
  }, 60_000);
});

describe('a reader meeting the in-progress marker', () => {
  function marked(name: string): string {
    const file = join(dir, name);
    const bytes = new Uint8Array(readFileSync(source));
    bytes.set(new TextEncoder().encode('TXIP'), 4);
    writeFileSync(file, bytes);
    return file;
  }

  it('says a writer is at work while the lock is held, and "interrupted, rerun" once it is not', async () => {
    const file = marked('marked.pte');
    const lock = await lockTarget(file, { wait: false, command: 'rewrite --in-place' });
    try {
      // The holder here is this process; the reader runs as a child, as a user's would.
      const r = await trtx(['inspect', '--json', file]);
      expect(r.exitCode).toBe(2);
      const err = JSON.parse(r.stdout).error;
      expect(err.code).toBe('PTE_REWRITE_IN_PROGRESS');
      expect(err.message).toContain(`trtx pid ${process.pid}`);
      expect(r.stderr).not.toContain('rerun');
    } finally {
      await lock.release();
    }
    const after = await runCli(['inspect', file]);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('PTE_REWRITE_INTERRUPTED');
    expect(after.stderr).toContain('rerun');
  }, 60_000);

  it('leaves no lock file behind a reader or a finished writer', async () => {
    const file = join(dir, 'clean.pte');
    copyFileSync(source, file);
    await runCli(['check', file]);
    await runCli(['rewrite', file, '--in-place', '--budget', '1GiB', '-q']);
    expect(readdirSync(dir).filter((n) => n.includes('trtx-lock'))).toEqual([]);
  });
});
