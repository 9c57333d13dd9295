// Publishing a writer's own temporary program by renaming it over the target
// (src/pte/adopt.ts; `trtx export` publishes the bridge's file this way, issue
// 28): the very file becomes the target, its head rewritten when a pass
// changed it and it fits, else one full rewrite that says why.
import { describe, expect, it } from 'vitest';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { trtSingle } from '../src/examples/catalogue.js';
import { runPipeline } from '../src/pipeline/run.js';
import { adoptTemporary } from '../src/pte/adopt.js';
import { writeFromSource } from '../src/pte/copy.js';
import { openPte, withPte } from '../src/pte/open.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { tempDir } from './helpers/temp.js';

const GiB = 1n << 30n;

async function publish(temp: string, out: string, budget?: bigint) {
  const pte = await openPte(temp);
  try {
    const segments = pte.program.segments.map((s) => ({ ...s }));
    const run = await runPipeline(pte, { request: { budget: budget === undefined ? undefined : { budget } }, output: null });
    expect(run.refused).toBe(false);
    return await adoptTemporary(pte, run.program, segments, { output: out, changed: run.changed });
  } finally {
    await pte.close();
  }
}

const budgetsOf = (path: string) =>
  withPte(path, (pte) =>
    pte.program.executionPlan.flatMap((p) => p.delegates.map((d) => decodeCompileSpecs(d.compileSpecs).specs.weightStreamingBudget)),
  );

describe('adoptTemporary', () => {
  it('renames an unchanged temporary as it is, in the mode trtx writes', async () => {
    const dir = tempDir('adopt');
    const temp = join(dir, '.out.pte.bridge-1.pte');
    await writeFixture(temp, trtSingle());
    chmodSync(temp, 0o666); // as Python's open() makes it under umask 0
    const before = { bytes: readFileSync(temp), ino: statSync(temp).ino };
    const out = join(dir, 'out.pte');
    const w = await publish(temp, out);
    expect(w).toMatchObject({ mode: 'renamed', headBytes: 0 });
    expect(existsSync(temp)).toBe(false);
    expect(statSync(out).ino).toBe(before.ino);
    expect(readFileSync(out).equals(before.bytes)).toBe(true);
    expect(statSync(out).mode & 0o777).toBe(0o644);
  });

  it('rewrites only the head of the temporary when the change fits before the segments', async () => {
    const dir = tempDir('adopt');
    const temp = join(dir, 'temp.pte');
    await writeFixture(temp, trtSingle());
    const ino = statSync(temp).ino;
    const out = join(dir, 'out.pte');
    const w = await publish(temp, out, 8n * GiB);
    expect(w.mode).toBe('renamed');
    expect(w.mode === 'renamed' && w.headBytes).toBeGreaterThan(0);
    expect(statSync(out).ino).toBe(ino);
    expect(await budgetsOf(out)).toEqual([8n * GiB]);
  });

  it('writes the target whole, saying why, when the new head does not fit, and leaves the temporary to its owner', async () => {
    const dir = tempDir('adopt');
    const roomy = join(dir, 'roomy.pte');
    await writeFixture(roomy, trtSingle());
    // The same program with its segments packed right after it: no room for a compile spec more.
    const temp = join(dir, 'tight.pte');
    await withPte(roomy, (pte) => writeFromSource(pte, pte.program, temp, { alignment: 16 }));
    const out = join(dir, 'out.pte');
    const w = await publish(temp, out, 8n * GiB);
    expect(w.mode).toBe('copied');
    expect(w.mode === 'copied' && w.fallback).toMatch(/does not fit before the segments/);
    expect(statSync(out).ino).not.toBe(statSync(temp).ino);
    expect(await budgetsOf(out)).toEqual([8n * GiB]);
    expect(await budgetsOf(temp)).toEqual([undefined]);
  });
});
