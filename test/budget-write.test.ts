// Budget rewrites as files: decoded again, segments byte-identical, every
// other byte of meaning the same; in place when the program fits before the
// segments, with the crash-safety protocol exercised by stopping after each
// of its steps and by tearing its writes.
import { beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { multiEngine, trtBesideCuda } from '../src/examples/programs.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { checkFile } from '../src/checks/files.js';
import { budgetPass } from '../src/passes/budget.js';
import { programToFlatcJson } from '../src/pte/flatc-json.js';
import { finishInterruptedInPlace, IN_PLACE_STEPS, journalPath, planHead, publishRewrite, type InPlaceStep } from '../src/pte/in-place.js';
import type { Program } from '../src/pte/model.js';
import { openPte, withPte } from '../src/pte/open.js';
import { writePte } from '../src/pte/write.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { TrtxError } from '../src/util/errors.js';
import { tempDir } from './helpers/temp.js';

const GiB = 1n << 30n;
const dir = tempDir('budget');

let n = 0;
const fresh = (name: string) => join(dir, `${n++}-${name}`);

/** Two TensorRT engines (no budget) with a CUDA delegate between them. */
const spec = (): ProgramSpec => trtBesideCuda();

/** Two methods: three engines, and the program above. */
function twoMethods(): ProgramSpec {
  const a = multiEngine(3, { budget: null });
  const b = trtBesideCuda();
  return { methods: [a.methods[0], { ...b.methods[0], name: 'side' }], namedData: b.namedData };
}

async function fixture(s: ProgramSpec = spec(), alignment?: number): Promise<string> {
  const path = fresh('in.pte');
  if (alignment === undefined) await writeFixture(path, s);
  else {
    const built = buildProgram(s);
    await writePte(path, built.program, built.segments, { alignment });
  }
  return path;
}

const budgets = (p: Program) =>
  p.executionPlan.map((plan) =>
    plan.delegates.map((d) =>
      d.id === 'TensorRTBackend' ? (decodeCompileSpecs(d.compileSpecs).specs.weightStreamingBudget ?? null) : 'other',
    ),
  );

/** The program as flatc reads it, without the segment table (a full rewrite may lay segments out anew). */
function meaning(p: Program): unknown {
  const j = programToFlatcJson(p) as Record<string, unknown>;
  delete j.segments;
  return j;
}

async function segmentBytes(path: string): Promise<Buffer[]> {
  return withPte(path, (pte) => Promise.all(pte.segments.map(async (s) => Buffer.from(await pte.readRange(s.offset, s.size)))));
}

/** Opens `path`, applies the budget pass, publishes; returns what was written. */
async function rewrite(
  path: string,
  budget: bigint | null,
  how: { inPlace: boolean; output?: string; hooks?: Parameters<typeof publishRewrite>[3]['hooks'] },
) {
  const pte = await openPte(path);
  try {
    const fileSegments = pte.program.segments.map((s) => ({ ...s }));
    const report = budgetPass({ budget })(pte.program);
    return await publishRewrite(pte, pte.program, fileSegments, {
      inPlace: how.inPlace,
      output: how.output ?? path,
      changed: report.changed,
      hooks: how.hooks,
    });
  } finally {
    await pte.close();
  }
}

/** What a correct rewrite must produce: the input's program with the budget edited by hand. */
async function expected(path: string, budget: bigint): Promise<unknown> {
  return withPte(path, (pte) => {
    for (const plan of pte.program.executionPlan) {
      for (const d of plan.delegates) {
        if (d.id !== 'TensorRTBackend') continue;
        d.compileSpecs = [
          ...d.compileSpecs.filter((s) => s.key !== 'weight_streaming_budget'),
          { key: 'weight_streaming_budget', value: new TextEncoder().encode(budget.toString()) },
        ];
      }
    }
    return meaning(pte.program);
  });
}

describe('rewrite to a new file', () => {
  it('decodes to the input with only the budget changed, segments byte-identical', async () => {
    const input = await fixture(twoMethods());
    const output = fresh('out.pte');
    const want = await expected(input, 8n * GiB);
    const w = await rewrite(input, 8n * GiB, { inPlace: false, output });
    expect(w.mode).toBe('atomic');
    const p = await withPte(output, (pte) => pte.program);
    expect(budgets(p)).toEqual([
      [8n * GiB, 8n * GiB, 8n * GiB],
      [8n * GiB, 'other', 8n * GiB],
    ]);
    expect(meaning(p)).toEqual(want);
    expect(await segmentBytes(output)).toEqual(await segmentBytes(input));
  });
});

describe('rewrite in place', () => {
  it('rewrites only the head: same size, the same bytes from the segment base on, the same meaning as a full rewrite', async () => {
    const input = await fixture();
    const before = readFileSync(input);
    const base = await withPte(input, (pte) => pte.segmentBase);
    const want = await expected(input, 8n * GiB);
    const w = await rewrite(input, 8n * GiB, { inPlace: true });
    expect(w.mode).toBe('in-place');
    const after = readFileSync(input);
    expect(after.length).toBe(before.length);
    expect(after.subarray(base).equals(before.subarray(base))).toBe(true);
    expect(after.subarray(0, base).equals(before.subarray(0, base))).toBe(false);
    const p = await withPte(input, (pte) => pte.program);
    expect(meaning(p)).toEqual(want);
    expect(existsSync(journalPath(input))).toBe(false);
  });

  it('clears a budget in place and back again', async () => {
    const input = await fixture();
    await rewrite(input, 4n * GiB, { inPlace: true });
    await rewrite(input, null, { inPlace: true });
    const p = await withPte(input, (pte) => pte.program);
    expect(budgets(p)).toEqual([[null, 'other', null]]);
    expect(meaning(p)).toEqual(await withPte(await fixture(), (pte) => meaning(pte.program)));
  });

  it('writes nothing when nothing changes', async () => {
    const input = await fixture();
    await rewrite(input, GiB, { inPlace: true });
    const before = readFileSync(input);
    expect((await rewrite(input, GiB, { inPlace: true })).mode).toBe('unchanged');
    expect(readFileSync(input).equals(before)).toBe(true);
  });

  it('falls back to a full atomic rewrite, and says why, when the program no longer fits before the segments', async () => {
    const input = await fixture(spec(), 16);
    const want = await expected(input, 8n * GiB);
    const segs = await segmentBytes(input);
    const w = await rewrite(input, 8n * GiB, { inPlace: true });
    expect(w.mode).toBe('atomic');
    if (w.mode === 'atomic') expect(w.fallback).toMatch(/^the new program \(\d+ bytes\) does not fit before the segments at byte \d+$/);
    expect(meaning(await withPte(input, (pte) => pte.program))).toEqual(want);
    expect(await segmentBytes(input)).toEqual(segs);
  });

  it('does not plan a head over a segment table a pass changed', async () => {
    const input = await fixture();
    await withPte(input, (pte) => {
      const before = pte.program.segments.map((s) => ({ ...s }));
      pte.program.segments.push({ offset: 1n << 20n, size: 16n });
      expect(planHead(pte, pte.program, before)).toEqual({ fits: false, reason: 'the segment table changed' });
    });
  });

  it('does not plan a head for a file without segments', async () => {
    const built = buildProgram(spec());
    const path = fresh('nosegs.pte');
    built.program.executionPlan.forEach((p) => p.delegates.forEach((d) => (d.processed = null)));
    built.program.namedData = [];
    await writePte(path, { ...built.program, segments: [] }, []);
    await withPte(path, (pte) => {
      const plan = planHead(pte, pte.program, pte.program.segments);
      expect(plan).toEqual({ fits: false, reason: 'the file has no segments, so the program is the whole file' });
    });
  });
});

describe('crash safety of the in-place protocol', () => {
  class Crash extends Error {}
  const crashAfter = (step: InPlaceStep) => ({
    afterStep: (s: InPlaceStep) => {
      if (s === step) throw new Crash(step);
    },
  });

  let input: string;
  let oldMeaning: unknown;
  let newMeaning: unknown;
  beforeEach(async () => {
    input = await fixture();
    oldMeaning = await withPte(input, (pte) => meaning(pte.program));
    newMeaning = await expected(input, 8n * GiB);
  });

  async function crashAt(step: InPlaceStep) {
    await expect(rewrite(input, 8n * GiB, { inPlace: true, hooks: crashAfter(step) })).rejects.toBeInstanceOf(Crash);
  }

  async function state(): Promise<string> {
    try {
      const m = await withPte(input, (pte) => meaning(pte.program));
      if (JSON.stringify(m) === JSON.stringify(oldMeaning)) return 'old';
      if (JSON.stringify(m) === JSON.stringify(newMeaning)) return 'new';
      return 'OTHER MEANING';
    } catch (e) {
      if (e instanceof TrtxError) return e.code;
      throw e;
    }
  }

  it('has the steps this test walks', () => {
    expect(IN_PLACE_STEPS).toEqual(['journal', 'marker', 'body', 'root', 'identifier', 'cleanup']);
  });

  it.each([
    ['journal', 'old', true],
    ['marker', 'PTE_REWRITE_INTERRUPTED', true],
    ['body', 'PTE_REWRITE_INTERRUPTED', true],
    ['root', 'PTE_REWRITE_INTERRUPTED', true],
    ['identifier', 'new', true],
    ['cleanup', 'new', false],
  ] as const)('stopped after %s: the file reads as %s; finishing leaves the new program', async (step, reads, journal) => {
    await crashAt(step);
    expect(await state()).toBe(reads);
    expect(existsSync(journalPath(input))).toBe(journal);
    const finished = await finishInterruptedInPlace(input);
    expect(finished).toBe(reads === 'PTE_REWRITE_INTERRUPTED');
    if (reads !== 'old') expect(await state()).toBe('new');
    // An old file beside a stale journal takes the next rewrite as usual.
    if (reads === 'old') {
      await rewrite(input, 8n * GiB, { inPlace: true });
      expect(await state()).toBe('new');
    }
    expect(existsSync(journalPath(input))).toBe(false);
  });

  it('check reports an interrupted file with its own code and a hint to rerun (exit 1, not a crash)', async () => {
    await crashAt('body');
    const r = await checkFile(input, {});
    expect(r.diagnostics.map((d) => [d.code, d.severity])).toEqual([['PTE_REWRITE_INTERRUPTED', 'error']]);
    expect(r.diagnostics[0].hint).toMatch(/rerun `trtx rewrite FILE --in-place`/);
  });

  it('a torn body write (any prefix of the new head) is refused, never read', async () => {
    await crashAt('marker');
    const marked = readFileSync(input);
    const head = readFileSync(journalPath(input)).subarray(56);
    for (const cut of [9, 16, 100, Math.floor(head.length / 2), head.length - 1]) {
      const torn = Buffer.from(marked);
      torn.set(head.subarray(8, cut), 8);
      writeFileSync(input, torn);
      expect(await state()).toBe('PTE_REWRITE_INTERRUPTED');
    }
  });

  it('a torn identifier write (a mix of the marker and ET12) is refused as interrupted', async () => {
    await crashAt('root');
    const f = readFileSync(input);
    for (const mix of ['EXIP', 'TT1P', 'TXI2', 'ET1P', 'TT12']) {
      f.write(mix, 4, 'latin1');
      writeFileSync(input, f);
      expect(await state()).toBe('PTE_REWRITE_INTERRUPTED');
    }
    expect(await finishInterruptedInPlace(input)).toBe(true);
    expect(await state()).toBe('new');
  });

  it('a marked file without its journal, or with a corrupt one, is refused with a hint to restore it', async () => {
    await crashAt('body');
    const journal = readFileSync(journalPath(input));
    journal[journal.length - 1] ^= 0xff;
    writeFileSync(journalPath(input), journal);
    await expect(finishInterruptedInPlace(input)).rejects.toMatchObject({
      code: 'PTE_REWRITE_INTERRUPTED',
      message: expect.stringContaining('checksum mismatch'),
    });
    rmSync(journalPath(input));
    await expect(finishInterruptedInPlace(input)).rejects.toMatchObject({
      code: 'PTE_REWRITE_INTERRUPTED',
      message: expect.stringContaining('is missing'),
    });
  });

  it('refuses a journal written for another file size', async () => {
    await crashAt('body');
    const f = readFileSync(input);
    writeFileSync(input, Buffer.concat([f, Buffer.alloc(4096)]));
    await expect(finishInterruptedInPlace(input)).rejects.toMatchObject({
      code: 'PTE_REWRITE_INTERRUPTED',
      message: expect.stringContaining('written for a'),
    });
  });
});
