// Every renderer is under the report budget check enforces (issue 27 item
// 3): a program whose indices reference one long shape millions of times
// would make inspect, --json, --html and diff write hundreds of megabytes
// (and, before, spend minutes on it, deaf to Ctrl-C). Each is refused with
// REPORT_BUDGET, in memory and output in proportion to the file, and writes
// no page. Sizes are asserted, never times.
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import type { Program } from '../src/pte/model.js';
import { REPORT_BUDGET_FACTOR, REPORT_BUDGET_FLOOR, ReportBudget } from '../src/util/report-budget.js';
import { runChild } from './helpers/child-cli.js';
import { rewrite } from './helpers/diff-files.js';
import { tempDir } from './helpers/temp.js';

let dir: string;
let base: string;
let wide: string;
beforeAll(async () => {
  dir = tempDir('amplify');
  base = join(dir, 'base.pte');
  await writeFixture(base, catalogueEntry('trt-single.pte').build());
  // One planned tensor of 100,000 dimensions, listed as the method's input
  // 2.5 million times: 10 MB of indices, each naming 400 KB of shape.
  wide = await rewrite(base, join(dir, 'wide.pte'), (p: Program) => {
    const plan = p.executionPlan[0];
    const index = plan.values.findIndex((v) => v.type === 'Tensor' && v.tensor.allocationInfo);
    const v = plan.values[index];
    if (v.type !== 'Tensor') throw new Error('no planned tensor');
    v.tensor.sizes = new Array<number>(100_000).fill(1);
    v.tensor.dimOrder = Array.from({ length: 100_000 }, (_, i) => i);
    for (let i = 0; i < 2_500_000; i++) plan.inputs.push(index);
  });
}, 120_000);

describe('a 10 MB program whose indices repeat one 100,000-dimension shape', () => {
  it('every renderer refuses it with REPORT_BUDGET, bounded in memory and output, and writes no page', async () => {
    const cases: { args: string[]; code: number; page?: string }[] = [
      { args: ['inspect', wide], code: 1 },
      { args: ['inspect', '--json', wide], code: 1 },
      { args: ['inspect', wide, '--html', join(dir, 'inspect.html')], code: 1, page: join(dir, 'inspect.html') },
      // diff's 1 means "the programs differ": a refused input is 2.
      { args: ['diff', base, wide], code: 2 },
      { args: ['diff', '--json', wide, base], code: 2 },
      { args: ['diff', wide, wide, '--html', join(dir, 'diff.html')], code: 2, page: join(dir, 'diff.html') },
    ];
    for (const { args, code, page } of cases) {
      const r = await runChild(args, { heapMiB: 512, timeoutMs: 120_000 });
      const what = `${args.join(' ')}: ${r.stderr.slice(0, 400)}`;
      expect(r.code, what).toBe(code);
      expect(r.stderr, what).toContain('REPORT_BUDGET');
      expect(r.stderr, what).not.toMatch(/INTERNAL|heap/);
      if (args.includes('--json')) expect(JSON.parse(r.stdout).error.code).toBe('REPORT_BUDGET');
      else expect(r.stdout).toBe('');
      if (page) expect(existsSync(page), page).toBe(false);
      // Far below the hundreds of megabytes the report would be.
      expect(r.maxRssMiB, what).toBeLessThan(600);
    }
  }, 600_000);

  it('check refuses it as it did', async () => {
    const r = await runChild(['check', wide], { heapMiB: 512, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toMatch(/INTERNAL|heap/);
  }, 120_000);
});

describe('a 12 MB program whose method lists 3 million out-of-range inputs', () => {
  // Each input is a missing value, described in a few bytes; before the
  // diff charged its signature entries (and kept a role per listed index),
  // `diff A A` held 1.1 GB and said the programs were equal.
  it('diff A A is refused with REPORT_BUDGET, as inspect is, in under 300 MB', async () => {
    const inputs = await rewrite(base, join(dir, 'inputs.pte'), (p: Program) => {
      for (let i = 0; i < 3_000_000; i++) p.executionPlan[0].inputs.push(1_000_000 + i);
    });
    // inspect's bound is the one the suite above holds it to.
    for (const [args, code, rssMiB] of [
      [['inspect', inputs], 1, 600],
      [['diff', inputs, inputs], 2, 300],
      [['diff', '--json', inputs, inputs], 2, 300],
    ] as const) {
      const r = await runChild([...args], { heapMiB: 512, timeoutMs: 120_000 });
      const what = `${args.join(' ')}: ${r.stderr.slice(0, 400)}`;
      expect(r.code, what).toBe(code);
      expect(r.stderr, what).toContain('REPORT_BUDGET');
      expect(r.maxRssMiB, what).toBeLessThan(rssMiB);
    }
  }, 300_000);
});

describe('the output meter', () => {
  // What reports build is charged as they build it; what a command writes
  // is metered too (src/util/report-budget.ts), so a renderer that forgot
  // to charge an entry still cannot write past the budget.
  it('refuses a --json document that shares one array a thousand times, before it is written', () => {
    const budget = ReportBudget.forCommand();
    budget.allowFor(1000);
    const shape = new Array<number>(10_000).fill(1);
    const doc = { inputs: new Array<{ shape: number[] }>(1000).fill({ shape }) };
    expect(() => budget.stringifyWithinBudget(doc, 'doc')).toThrow(/REPORT_BUDGET|would pass/);
    expect(REPORT_BUDGET_FLOOR + REPORT_BUDGET_FACTOR * 1000).toBeLessThan(JSON.stringify(doc).length);
  });

  it('writes a document within the budget as JSON.stringify does, bigints as decimals', () => {
    const budget = ReportBudget.forCommand();
    const doc = { a: [1, 2, { b: 'x' }], n: 12345678901234567890n };
    expect(budget.stringifyWithinBudget(doc, 'doc')).toBe(JSON.stringify({ ...doc, n: '12345678901234567890' }, null, 2));
  });
});
