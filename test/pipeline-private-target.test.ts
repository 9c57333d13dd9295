// A private target (issue 42): a file in a folder only this process can see,
// as verify writes its zero-copy twin into its own temporary folder. No
// other writer can race it and no killed writer left temporaries beside it,
// so the pipeline takes no writer lock (no flock child) and sweeps nothing
// there; the target is still validated and the free-space pre-flight and
// the checks still run.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { runPipeline } from '../src/pipeline/run.js';
import { lockPathFor, lockTarget } from '../src/util/file-lock.js';
import type { FreeSpaceReader } from '../src/util/free-space.js';
import { tempDir } from './helpers/temp.js';

const noRoom: FreeSpaceReader = () => Promise.resolve({ available: 4096n, blockSize: 4096n });

/** Whether the file system of `dir` clones files (a reflink takes no new blocks: the one write a full folder still allows). */
function clones(dir: string): boolean {
  writeFileSync(join(dir, 'probe-a'), 'x');
  const ok = spawnSync('cp', ['--reflink=always', join(dir, 'probe-a'), join(dir, 'probe-b')]).status === 0;
  rmSync(join(dir, 'probe-a'), { force: true });
  rmSync(join(dir, 'probe-b'), { force: true });
  return ok;
}

async function scene(prefix: string) {
  const dir = tempDir(prefix);
  const input = join(dir, 'kv.pte');
  await writeFixture(input, kvDecoder());
  return { dir, input, target: join(dir, 'twin.pte') };
}

describe('a private pipeline target', () => {
  it('takes no writer lock: a write goes ahead while another holds the name\u2019s lock, and leaves no lock file', async () => {
    const s = await scene('private-lock');
    const held = await lockTarget(s.target, { wait: false, command: 'test (the other writer)' });
    try {
      // wait: false makes a public target refuse at once (REWRITE_LOCKED); a private one never asks.
      const out = await runPipeline(s.input, {
        request: { zeroCopyKv: {} },
        output: { path: s.target, command: 'test', wait: false, private: true },
      });
      expect(out.refused).toBe(false);
      expect(out.stale).toEqual({ removed: [], left: [] });
      expect(existsSync(s.target)).toBe(true);
    } finally {
      await held.release();
    }
    expect(existsSync(lockPathFor(s.target))).toBe(false);
  });

  it('sweeps nothing beside it: a dead writer\u2019s temporary of that name is not its business', async () => {
    const s = await scene('private-sweep');
    const dead = spawnSync('true').pid;
    const stale = join(s.dir, `.twin.pte.${dead}-0123456789ab.tmp`);
    writeFileSync(stale, 'left by a killed writer');
    await runPipeline(s.input, { request: { zeroCopyKv: {} }, output: { path: s.target, command: 'test', private: true } });
    expect(existsSync(stale)).toBe(true);
    // A public target of the same name does sweep it: the difference is the option.
    await runPipeline(s.input, { request: { zeroCopyKv: {} }, output: { path: s.target, command: 'test', force: true } });
    expect(existsSync(stale)).toBe(false);
  });

  it('still runs the free-space pre-flight and the target checks', async () => {
    const s = await scene('private-space');
    const cloning = clones(s.dir);
    const run = runPipeline(s.input, {
      request: { zeroCopyKv: {} },
      output: { path: s.target, command: 'test', private: true, freeSpace: noRoom },
    });
    // A clone shares the source's blocks: the one copy a full folder can take.
    if (cloning) await run;
    else {
      await expect(run).rejects.toMatchObject({ code: 'WRITE_NO_SPACE', location: s.target });
      expect(readdirSync(s.dir)).toEqual(['kv.pte']);
    }
    // The target is validated as any: the input itself is refused.
    await expect(
      runPipeline(s.input, { request: { zeroCopyKv: {} }, output: { path: s.input, command: 'test', private: true } }),
    ).rejects.toMatchObject({ code: 'OUTPUT_IS_INPUT' });
  });
});
