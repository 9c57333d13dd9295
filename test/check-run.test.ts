// runChecks: every check runs, findings come out in report order with one
// summary, the list of checks is open for more (the zero-copy rules), and
// the fixture catalogue agrees with what the checks say.
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOGUE } from '../src/examples/catalogue.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import type { Check, CheckOptions } from '../src/checks/context.js';
import type { Code } from '../src/codes/index.js';
import { diag, type Diagnostic } from '../src/checks/diagnostic.js';
import { ReportBudget } from '../src/util/report-budget.js';
import { CHECKS, orderDiagnostics, runChecks, summarizeDiagnostics } from '../src/checks/run.js';
import { checkProgramStructure } from '../src/checks/structure.js';
import { checkTensorRT } from '../src/checks/tensorrt.js';
import { withPte } from '../src/pte/open.js';
import { CORPUS_DIR } from './helpers/corpus.js';
import { pteOf } from './helpers/memory-pte.js';

// Codes of test-double checks: no real check emits them.
const X = 'X' as Code;

describe('summary', () => {
  it.each([
    [[], '0 errors, 0 warnings'],
    [['error', 'error', 'warning'], '2 errors, 1 warning'],
    [['error', 'warning', 'warning', 'info'], '1 error, 2 warnings, 1 note'],
  ] as const)('%j -> %s', (severities, line) => {
    const ds = severities.map((s) => diag(new ReportBudget(), s, X, 'program', 'm', 'h'));
    expect(summarizeDiagnostics(ds).line).toBe(line);
  });
});

describe('order', () => {
  it('program first, then methods in file order, then delegate (method-level first), then location with numbers read as numbers', () => {
    const d = (method: string | null, delegate: number | null, location: string): Diagnostic =>
      diag(new ReportBudget(), 'error', X, location, 'm', 'h', { method, delegate });
    const shuffled = [
      d('forward', 1, 'forward > delegate 1'),
      d('decode', null, 'decode > value %10'),
      d('forward', null, 'forward > inputs[0]'),
      d(null, null, 'program'),
      d('decode', 0, 'decode > delegate 0 > binding b'),
      d('decode', null, 'decode > value %9'),
      d('decode', 0, 'decode > delegate 0 > binding a'),
    ];
    const ordered = orderDiagnostics(shuffled, ['decode', 'forward']).map((x) => x.location);
    expect(ordered).toEqual([
      'program',
      'decode > value %9',
      'decode > value %10',
      'decode > delegate 0 > binding a',
      'decode > delegate 0 > binding b',
      'forward > inputs[0]',
      'forward > delegate 1',
    ]);
  });
});

describe('runChecks', () => {
  it('runs structure and TensorRT checks and sums them', async () => {
    const pte = pteOf(multiEngine(3), (p) => {
      p.executionPlan[0].inputs[0] = 999;
      const call = p.executionPlan[0].chains[0].instructions.find((i) => i.type === 'DelegateCall');
      if (call?.type === 'DelegateCall') call.args.pop();
    });
    const { diagnostics, summary } = await runChecks(pte);
    expect(diagnostics.map((d) => d.code)).toEqual(['TRT_BUDGET_MULTI_ENGINE', 'STRUCT_VALUE_INDEX', 'TRT_ARITY']);
    expect(summary).toMatchObject({ errors: 2, warnings: 1, line: '2 errors, 1 warning' });
  });

  it('runs the structure and TensorRT checks first, from an array others extend', () => {
    expect(Array.isArray(CHECKS)).toBe(true);
    expect(CHECKS.slice(0, 2)).toEqual([checkProgramStructure, checkTensorRT]);
  });

  it('runs extra checks given to it and hands them the options (--zero-copy-kv)', async () => {
    let seen: CheckOptions | undefined;
    const extra: Check = (ctx) => {
      seen = ctx.options;
      return [diag(ctx.pte.reportBudget, 'warning', 'EXTRA' as Code, 'forward > value %0', 'extra', 'h', { method: 'forward' })];
    };
    const { diagnostics } = await runChecks(pteOf(trtSingle()), { requireZeroCopyKv: true }, [...CHECKS, extra]);
    expect(seen).toEqual({ requireZeroCopyKv: true });
    expect(diagnostics.map((d) => d.code)).toContain('EXTRA');
  });

  it('finds nothing in the real ExecuTorch corpus but the inline constant buffer ExecuTorch 1.5.1 refuses', async () => {
    const files = readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.pte'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const { diagnostics } = await withPte(join(CORPUS_DIR, f), (pte) => runChecks(pte));
      // Constants inline in constant_buffer: the pinned runtime is built
      // without that path and refuses the program at load (the runner's own
      // test, runner-run.test.ts, shows it).
      const expected = f === 'module-linear-inline-constants.pte' ? ['STRUCT_CONSTANT_BUFFER'] : [];
      expect(
        diagnostics.map((d) => d.code),
        f,
      ).toEqual(expected);
    }
  });
});

describe('the fixture catalogue', () => {
  // The seed-scale programs are the small ones scaled up; building them here
  // would only slow the suite.
  const entries = CATALOGUE.filter((e) => !e.file.includes('-seed-'));

  it.each(entries.filter((e) => e.expect?.sound).map((e) => [e.file, e] as const))('%s: no errors', async (_f, e) => {
    const { summary, diagnostics } = await runChecks(pteOf(e.build()));
    expect(summary.errors, JSON.stringify(diagnostics, null, 1)).toBe(0);
  });

  // The refusals these checks own; zero-copy rules (docs/zero-copy-kv.md) are
  // checked by src/checks/zero-copy.ts and tested with it.
  const owned: Record<string, string> = {
    'broken-arity.pte': 'TRT_ARITY',
    'broken-partial-elision.pte': 'TRT_ARITY',
    'broken-two-gpu-device-id-swapped.pte': 'TRT_DEVICE_ID_MISMATCH',
  };
  const broken = entries.filter((e) => e.expect && !e.expect.sound && (e.expect.code || owned[e.file]));

  it('has the broken fixtures these checks own', () => {
    expect(broken.map((e) => e.file)).toEqual(
      expect.arrayContaining([
        'broken-budget-spec.pte',
        'broken-duplicate-spec-key.pte',
        'broken-arity.pte',
        'broken-partial-elision.pte',
        'broken-two-gpu-device-id-swapped.pte',
      ]),
    );
    expect(broken.filter((e) => e.file.startsWith('broken-blob-')).length).toBeGreaterThan(5);
  });

  it.each(broken.map((e) => [e.file, e.expect!.code ?? owned[e.file], e] as const))('%s: %s', async (_f, code, e) => {
    const { diagnostics } = await runChecks(pteOf(e.build()));
    expect(diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toContain(code);
  });
});
