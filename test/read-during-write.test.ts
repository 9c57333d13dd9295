// Readers racing an in-place writer of the same file (issue 43): 13 of 244
// verify runs said PTE_REWRITE_INTERRUPTED and some read a torn header
// (PTE_FLATBUFFER) although no file was damaged. A reader trusts a read only
// when the file's identity and head are the same after it as before; a
// file written meanwhile is read again, and a marker whose writer holds the
// lock is waited for (bounded), then PTE_REWRITE_IN_PROGRESS. The writer's
// steps are played by the test at the reader's own hook, so every
// interleaving here is exact.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execa, type ResultPromise } from 'execa';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { openPte } from '../src/pte/open.js';
import { REPO } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

let dir: string;
let staged: Uint8Array;
let other: Uint8Array;
beforeAll(async () => {
  dir = tempDir('read-race');
  const a = join(dir, 'a.pte');
  await writeFixture(a, kvDecoder({ mode: 'staged' }));
  staged = new Uint8Array(readFileSync(a));
  const b = join(dir, 'b.pte');
  await writeFixture(b, kvDecoder({ mode: 'staged' }));
  expect((await runCli(['rewrite', b, '--in-place', '--budget', '3GiB', '-q'])).code).toBe(0);
  other = new Uint8Array(readFileSync(b));
});

const budgetsOf = (pte: Awaited<ReturnType<typeof openPte>>) =>
  pte.program.executionPlan.flatMap((p) =>
    p.delegates.map((d) =>
      new TextDecoder().decode(d.compileSpecs.find((c) => c.key === 'weight_streaming_budget')?.value ?? new Uint8Array()),
    ),
  );

/** A process of its own that holds `file`'s writer lock, as an in-place writer does, until killed. */
async function holdLock(file: string): Promise<{ holder: ResultPromise }> {
  const holder = execa(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `import('${resolve(REPO, 'src/util/file-lock.ts')}').then((m) => m.lockTarget(${JSON.stringify(file)}, { wait: false, command: 'rewrite --in-place' })).then(() => { console.log('held'); setInterval(() => {}, 1000); })`,
    ],
    { reject: false, cwd: REPO },
  );
  let out = '';
  holder.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; i < 400 && !out.includes('held'); i++) await new Promise((r) => setTimeout(r, 25));
  expect(out).toContain('held');
  // Wrapped: the child's promise is a thenable, which an async function would wait for.
  return { holder };
}

const holders: ResultPromise[] = [];
afterEach(async () => {
  for (const h of holders.splice(0)) {
    h.kill('SIGKILL');
    await h;
  }
});

describe('a reader racing an in-place writer', () => {
  it('reads again a file written between its head and its program: the new program, never a torn one', async () => {
    const file = join(dir, 'torn.pte');
    writeFileSync(file, staged);
    let reads = 0;
    // After the reader's first head read the writer replaces every byte (the other program, of another size).
    const pte = await openPte(file, { afterHead: () => (reads++ === 0 ? writeFileSync(file, other) : undefined) });
    try {
      expect(budgetsOf(pte)).toEqual(['3221225472', '3221225472']);
      expect(reads).toBe(2);
    } finally {
      await pte.close();
    }
  });

  it('waits for a live writer\u2019s marker to clear instead of saying interrupted or in progress', { timeout: 60_000 }, async () => {
    const file = join(dir, 'marked.pte');
    const marked = new Uint8Array(staged);
    marked.set(new TextEncoder().encode('TXIP'), 4);
    writeFileSync(file, marked);
    const { holder } = await holdLock(file);
    holders.push(holder);
    let reads = 0;
    const pte = await openPte(file, {
      afterHead: async () => {
        // The first read meets the marker; during the second the writer finishes and lets go.
        if (reads++ !== 1) return;
        writeFileSync(file, other);
        holder.kill('SIGKILL');
        await holder;
      },
    });
    try {
      expect(budgetsOf(pte)).toEqual(['3221225472', '3221225472']);
      expect(reads).toBe(3);
    } finally {
      await pte.close();
    }
  });

  it(
    'a marker whose writer keeps the lock past the wait is PTE_REWRITE_IN_PROGRESS; without a writer, INTERRUPTED',
    { timeout: 60_000 },
    async () => {
      const file = join(dir, 'held.pte');
      const marked = new Uint8Array(staged);
      marked.set(new TextEncoder().encode('TXIP'), 4);
      writeFileSync(file, marked);
      holders.push((await holdLock(file)).holder);
      await expect(openPte(file)).rejects.toMatchObject({ code: 'PTE_REWRITE_IN_PROGRESS' });
      for (const h of holders.splice(0)) {
        h.kill('SIGKILL');
        await h;
      }
      await expect(openPte(file)).rejects.toMatchObject({ code: 'PTE_REWRITE_INTERRUPTED' });
    },
  );
});
