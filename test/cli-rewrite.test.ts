// `trtx rewrite` with --budget / --clear-budget / --method / --delegate /
// --in-place: what it prints, what it writes (decoded again), its refusals
// and exit codes.
import { describe, expect, it } from 'vitest';
import { existsSync, linkSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { multiEngine, trtBesideCuda } from '../src/examples/programs.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { IN_PLACE_STEPS, journalPath, publishRewrite } from '../src/pte/in-place.js';
import { openPte, withPte } from '../src/pte/open.js';
import { budgetPass } from '../src/passes/budget.js';
import { writePte } from '../src/pte/write.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('cli-rewrite');
let n = 0;

async function fixture(spec: ProgramSpec, alignment = 4096): Promise<string> {
  const path = join(dir, `${n++}.pte`);
  if (alignment === 4096) await writeFixture(path, spec);
  else {
    const b = buildProgram(spec);
    await writePte(path, b.program, b.segments, { alignment });
  }
  return path;
}
const out = () => join(dir, `${n++}.out.pte`);

async function budgets(path: string) {
  return withPte(path, (pte) =>
    pte.program.executionPlan.flatMap((p) =>
      p.delegates.map((d) =>
        d.id === 'TensorRTBackend' ? (decodeCompileSpecs(d.compileSpecs).specs.weightStreamingBudget ?? null) : d.id,
      ),
    ),
  );
}

// The cases go at once (runCli's runs share nothing): each reads the shared inputs or writes files of its own names.
describe.concurrent('trtx rewrite --budget', () => {
  it('sets the budget on every TensorRT engine and says what changed', async () => {
    const input = await fixture(trtBesideCuda());
    const o = out();
    const r = await runCli(['rewrite', input, '-o', o, '--budget', '8GiB']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      '  forward > delegate 0 (TensorRTBackend): weight_streaming_budget automatic -> 8 GiB (8589934592 bytes)',
      '  forward > delegate 2 (TensorRTBackend): weight_streaming_budget automatic -> 8 GiB (8589934592 bytes)',
      expect.stringMatching(new RegExp(`^wrote ${o} \\(.+\\), segments aligned to 4096$`)),
      '',
    ]);
    expect(await budgets(o)).toEqual([8n << 30n, 'CudaBackend', 8n << 30n]);
    expect(await budgets(input)).toEqual([null, 'CudaBackend', null]);
  });

  it('--json reports the edits, the write and the multi-engine total', async () => {
    const input = await fixture(multiEngine(3));
    const r = await runCli(['rewrite', input, '-o', out(), '--budget', '8GiB', '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ schema: 'trtx.rewrite/1', mode: 'atomic', fallback: null });
    expect(doc.changes).toHaveLength(3);
    expect(doc.passes[0].details.resident).toMatchObject({
      engines: 3,
      total_bytes: String(24n << 30n),
      line: '3 engines x 8 GiB = 24 GiB may be resident',
    });
    expect(doc.warnings).toEqual([
      'TRT_BUDGET_MULTI_ENGINE: program: weight_streaming_budget applies per engine: 3 engines x 8 GiB = 24 GiB may be resident',
    ]);
  });

  it('--clear-budget removes it', async () => {
    const input = await fixture(multiEngine(3));
    const o = out();
    const r = await runCli(['rewrite', input, '-o', o, '--clear-budget']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('weight_streaming_budget 256 MiB (268435456 bytes) -> automatic');
    expect(await budgets(o)).toEqual([null, null, null]);
  });

  it('--method and --delegate narrow it', async () => {
    const input = await fixture(trtBesideCuda());
    const o = out();
    expect((await runCli(['rewrite', input, '-o', o, '--budget', '1.5GiB', '--method', 'forward', '--delegate', '2'])).code).toBe(0);
    expect(await budgets(o)).toEqual([null, 'CudaBackend', 1536n << 20n]);
  });

  it('refuses with exit 1 when the selection has no TensorRT delegate, and writes nothing', async () => {
    const input = await fixture(trtBesideCuda());
    const o = out();
    const r = await runCli(['rewrite', input, '-o', o, '--budget', '1GiB', '--delegate', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'error: BUDGET_NO_TENSORRT_DELEGATE: --delegate 1: the selection (--delegate 1) has no TensorRT delegate to carry a weight-streaming budget; it holds forward > delegate 1 (CudaBackend)',
    );
    expect(existsSync(o)).toBe(false);
  });

  it.each([
    [['--budget', 'eight'], 'SIZE_INVALID'],
    [['--budget', '8GiB', '--clear-budget'], 'contradict'],
    [['--method', 'forward'], 'narrow --budget'],
    [['--budget', '1GiB', '--method', 'decode'], 'BUDGET_METHOD_UNKNOWN'],
    [['--budget', '1GiB', '--delegate', '9'], 'BUDGET_DELEGATE_UNKNOWN'],
    [['--budget', '1GiB', '--delegate', 'first'], 'is not a delegate index'],
  ])('exits 2 on usage errors: %j', async (flags, says) => {
    const input = await fixture(trtBesideCuda());
    const r = await runCli(['rewrite', input, '-o', out(), ...flags]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(says);
  });

  it('exits 2 without -o or --in-place, or with both naming different files', async () => {
    const input = await fixture(trtBesideCuda());
    expect((await runCli(['rewrite', input, '--budget', '1GiB'])).code).toBe(2);
    expect((await runCli(['rewrite', input, '--in-place', '-o', out(), '--budget', '1GiB'])).code).toBe(2);
  });

  it('refuses to write a rewritten program that fails its checks (exit 1)', async () => {
    const input = await fixture(catalogueEntry('broken-arity.pte').build());
    const o = out();
    const r = await runCli(['rewrite', input, '-o', o, '--budget', '1GiB']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('TRT_ARITY');
    expect(r.stderr).toContain('error: REWRITE_CHECK_FAILED');
    expect(existsSync(o)).toBe(false);
  });

  it('still does the canonical re-encoding with no transformation flags', async () => {
    const input = await fixture(trtBesideCuda());
    const r = await runCli(['rewrite', input, '-o', out()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('canonical re-encoding, no transformation asked');
  });
});

describe.concurrent('trtx rewrite --in-place', () => {
  it('rewrites only the head when the program fits, and says so', async () => {
    const input = await fixture(trtBesideCuda());
    const size = statSync(input).size;
    const r = await runCli(['rewrite', input, '--in-place', '--budget', '30GiB']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(
      new RegExp(`^rewrote ${input} in place: program head 4 KiB rewritten, segments untouched \\(.+ file\\)$`),
    );
    expect(statSync(input).size).toBe(size);
    expect(await budgets(input)).toEqual([30n << 30n, 'CudaBackend', 30n << 30n]);
    const json = JSON.parse((await runCli(['rewrite', input, '--in-place', '--budget', '8GiB', '--json'])).stdout);
    expect(json.mode).toBe('in-place');
  });

  it('falls back to a full atomic rewrite when it does not fit, and says so', async () => {
    const input = await fixture(trtBesideCuda(), 16);
    const r = await runCli(['rewrite', input, '--in-place', '--budget', '8GiB']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /cannot rewrite in place \(the new program \(\d+ bytes\) does not fit before the segments at byte \d+\); fell back to a full atomic rewrite\n/,
    );
    expect(await budgets(input)).toEqual([8n << 30n, 'CudaBackend', 8n << 30n]);
  });

  it('leaves the file untouched when nothing changes', async () => {
    const input = await fixture(multiEngine(3));
    const before = readFileSync(input);
    const r = await runCli(['rewrite', input, '--in-place', '--budget', '256MiB']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${input}: nothing changed, file left untouched`);
    expect(readFileSync(input).equals(before)).toBe(true);
  });

  it('finishes an interrupted in-place rewrite when rerun; check and -o refuse the marked file meanwhile', async () => {
    expect(IN_PLACE_STEPS).toContain('body');
    const input = await fixture(trtBesideCuda());
    const pte = await openPte(input);
    const segs = pte.program.segments.map((s) => ({ ...s }));
    const report = budgetPass({ budget: 2n << 30n })(pte.program);
    await expect(
      publishRewrite(pte, pte.program, segs, {
        inPlace: true,
        output: input,
        changed: report.changed,
        hooks: {
          afterStep: (s) => {
            if (s === 'body') throw new Error('power cut');
          },
        },
      }),
    ).rejects.toThrow('power cut');
    await pte.close();

    const check = await runCli(['check', input]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('error PTE_REWRITE_INTERRUPTED');
    expect(check.stdout).toContain('hint: rerun `trtx rewrite FILE --in-place`');
    const other = await runCli(['rewrite', input, '-o', out(), '--budget', '1GiB']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('PTE_REWRITE_INTERRUPTED');

    const again = await runCli(['rewrite', input, '--in-place', '--budget', '4GiB']);
    expect(again.code).toBe(0);
    expect(again.stdout.split('\n')[0]).toBe(`finished an interrupted rewrite of ${input} from ${journalPath(input)}`);
    expect(again.stdout).toContain('weight_streaming_budget 2 GiB (2147483648 bytes) -> 4 GiB (4294967296 bytes)');
    expect(await budgets(input)).toEqual([4n << 30n, 'CudaBackend', 4n << 30n]);
    expect(existsSync(journalPath(input))).toBe(false);
  });

  it('a rerun asking what the interrupted rewrite was writing says it finished it, not that nothing changed', async () => {
    const input = await fixture(trtBesideCuda());
    const pte = await openPte(input);
    const segs = pte.program.segments.map((s) => ({ ...s }));
    const report = budgetPass({ budget: 2n << 30n })(pte.program);
    const crash = (s: string) => {
      if (s === 'body') throw new Error('killed');
    };
    await expect(
      publishRewrite(pte, pte.program, segs, { inPlace: true, output: input, changed: report.changed, hooks: { afterStep: crash } }),
    ).rejects.toThrow('killed');
    await pte.close();
    const again = await runCli(['rewrite', input, '--in-place', '--budget', '2GiB']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`finished an interrupted rewrite of ${input}`);
    expect(again.stdout).toContain('the finished rewrite already has what was asked; nothing more to write');
    expect(again.stdout).not.toContain('nothing changed');
    expect(await budgets(input)).toEqual([2n << 30n, 'CudaBackend', 2n << 30n]);
  });
});

describe.concurrent('trtx rewrite --in-place on a file with hard links', () => {
  it('refuses a fallback that would replace the file (REWRITE_HARD_LINKS), touching nothing', async () => {
    const input = await fixture(trtBesideCuda(), 16);
    const other = `${input}.link`;
    linkSync(input, other);
    const before = readFileSync(input);
    const r = await runCli(['rewrite', input, '--in-place', '--budget', '8GiB']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('REWRITE_HARD_LINKS');
    expect(r.stderr).toContain('its 1 other hard link(s) would keep the old program');
    expect(r.stderr).toContain('--break-hard-links');
    expect(readFileSync(input).equals(before)).toBe(true);
    expect(statSync(input).nlink).toBe(2);
  });

  it('with --break-hard-links replaces it and says so, in text and --json', async () => {
    const input = await fixture(trtBesideCuda(), 16);
    linkSync(input, `${input}.link`);
    const r = await runCli(['rewrite', input, '--in-place', '--budget', '8GiB', '--break-hard-links']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`note: --break-hard-links: ${input} is a new file now; its 1 other hard link(s) still name the old program`);
    expect(statSync(input).nlink).toBe(1);
    expect(await budgets(input)).toEqual([8n << 30n, 'CudaBackend', 8n << 30n]);
    expect(await budgets(`${input}.link`)).not.toEqual([8n << 30n, 'CudaBackend', 8n << 30n]);

    const again = await fixture(trtBesideCuda(), 16);
    linkSync(again, `${again}.link`);
    const doc = JSON.parse((await runCli(['rewrite', again, '--in-place', '--budget', '8GiB', '--break-hard-links', '--json'])).stdout);
    expect(doc).toMatchObject({ mode: 'atomic', hard_links_broken: 1 });
  });

  it('a head that fits is written into the file itself: its links see the change', async () => {
    const input = await fixture(trtBesideCuda());
    linkSync(input, `${input}.link`);
    const r = await runCli(['rewrite', input, '--in-place', '--budget', '30GiB', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ mode: 'in-place', hard_links_broken: 0 });
    expect(await budgets(`${input}.link`)).toEqual([30n << 30n, 'CudaBackend', 30n << 30n]);
  });
});
