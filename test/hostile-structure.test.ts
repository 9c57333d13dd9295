// Structure-heavy programs (issue 27): arrays that grow with the program are
// never spread into call arguments, so inspect, diff and their HTML pages
// work on a program with 150,000 planned buffers or 130,000 out-of-range
// method inputs instead of dying with "Maximum call stack size exceeded".
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import type { Program } from '../src/pte/model.js';
import { maxOf, pushAll, bytesToLatin1 } from '../src/util/arrays.js';
import { runCli } from './helpers/cli.js';
import { rewrite } from './helpers/diff-files.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('hostile-structure');
const N = 150_000;

async function base(): Promise<string> {
  const path = join(dir, 'base.pte');
  await writeFixture(path, catalogueEntry('trt-single.pte').build());
  return path;
}

/** Many planned tensors: copies of the method's first planned tensor. */
function manyBuffers(p: Program): void {
  const plan = p.executionPlan[0];
  const planned = plan.values.find((v) => v.type === 'Tensor' && v.tensor.allocationInfo);
  if (!planned) throw new Error('no planned tensor');
  for (let i = 0; i < N; i++) plan.values.push(structuredClone(planned));
}

describe('programs whose structure is large', () => {
  it('the helpers take more items than fit in call arguments', () => {
    const big = Array.from({ length: 500_000 }, (_, i) => i);
    expect(() => Math.max(...big)).toThrow(RangeError);
    expect(maxOf(big)).toBe(499_999);
    expect(pushAll([], big).length).toBe(500_000);
    expect(bytesToLatin1(new Uint8Array(500_000).fill(0x41)).length).toBe(500_000);
  });

  it(`inspect, inspect --html and diff --html take ${N} planned buffers`, { timeout: 120_000 }, async () => {
    const src = await base();
    const big = await rewrite(src, join(dir, 'buffers.pte'), manyBuffers);
    for (const args of [
      ['inspect', big],
      ['inspect', big, '--html', join(dir, 'buffers.html')],
      ['diff', src, big, '--html', join(dir, 'diff.html')],
      ['diff', src, big],
    ]) {
      const r = await runCli(args);
      expect(r.stderr, args.join(' ')).not.toMatch(/INTERNAL|call stack/);
      expect([0, 1], args.join(' ')).toContain(r.code);
    }
  });

  it('inspect and diff take 130,000 out-of-range method inputs without an internal error', { timeout: 120_000 }, async () => {
    const src = await base();
    const bad = await rewrite(src, join(dir, 'inputs.pte'), (p) => {
      for (let i = 0; i < 130_000; i++) p.executionPlan[0].inputs.push(1_000_000 + i);
    });
    for (const args of [
      ['inspect', bad],
      ['diff', src, bad],
    ]) {
      const r = await runCli(args);
      expect(r.stderr, args.join(' ')).not.toMatch(/INTERNAL|call stack/);
    }
  });
});
