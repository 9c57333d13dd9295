// check agrees with the runtime: every malformed shape of docs/reliability.md's
// table, built as one change to a sound program, goes through `trtx check` and
// through the runner (ExecuTorch 1.5.1 with trtx's plugins, under ASan and
// UBSan). What the runner refuses, check refuses; where check
// is stricter (it refuses what the runner runs) the row says so. The two
// documented exceptions, where the runner refuses what check passes, are
// engine bytes (check reads only an engine's first 8 bytes) and operators
// without a kernel in this runner (the application's kernel libraries
// decide). A program that crashes ExecuTorch itself is refused by the
// runner's own validation before ExecuTorch reads it, and by check, so verify
// never runs it.
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { buildProgram } from '../src/examples/builder.js';
import { verifyProgram } from '../src/verify/verify.js';
import { runCli } from './helpers/cli.js';
import { encodePte } from './helpers/memory-pte.js';
import { runRunnerOn, type RunnerOutcome } from './helpers/runner-fuzz.js';
import { BUILD_TIMEOUT_MS, sanitizedRunner } from './helpers/runner.js';
import { SHAPES, type Shape } from './helpers/agreement-shapes.js';
import { tempDir } from './helpers/temp.js';

let runner = '';
let dir = '';
beforeAll(async () => {
  runner = await sanitizedRunner();
  dir = tempDir('agreement');
}, BUILD_TIMEOUT_MS);

async function both(name: string, bytes: Uint8Array): Promise<{ file: string; codes: string[]; checkExit: number; run: RunnerOutcome }> {
  const file = join(dir, `${name}.pte`);
  writeFileSync(file, bytes);
  const c = await runCli(['--quiet', 'check', '--json', file]);
  const doc = JSON.parse(c.stdout) as { diagnostics?: { severity: string; code: string }[]; error?: { code: string } };
  const codes = doc.error ? [doc.error.code] : (doc.diagnostics ?? []).filter((d) => d.severity === 'error').map((d) => d.code);
  const sub = mkdtempSync(join(dir, 'run-'));
  return { file, codes, checkExit: c.code, run: await runRunnerOn(runner, file, sub, ['--steps', '2']) };
}

const runnerSays = (r: RunnerOutcome) =>
  r.crashed ? `crash${r.insideExecutorch ? ' inside ExecuTorch' : ''}` : `exit ${r.exit} ${r.report?.errors[0]?.code ?? 'ok'}`;

describe('check refuses what the ExecuTorch runtime refuses', () => {
  it.each(SHAPES.map((s) => [s.row, s] as [string, Shape]))(
    '%s',
    async (_row, shape) => {
      const { codes, checkExit, run } = await both(shape.file, shape.build());
      const detail = `check: ${checkExit} [${codes.join(', ')}]; runner: ${runnerSays(run)}\n${run.stderr.slice(-1500)}`;
      // The runner, as the table says: never a crash, also where ExecuTorch alone would crash.
      expect(run.crashed, detail).toBe(false);
      expect(run.exit, detail).toBe(shape.runner.exit);
      if (shape.runner.code) expect(run.report?.errors[0]?.code, detail).toBe(shape.runner.code);
      if (shape.runner.message) expect(run.report?.errors[0]?.message, detail).toMatch(shape.runner.message);
      // check, as the table says; and whatever the runner refuses, check refuses.
      if (shape.check === null) {
        expect(codes, detail).toEqual([]);
        expect(shape.exception, `${shape.row}: the runner refuses what check passes, with no documented reason`).toBeDefined();
      } else {
        expect(checkExit, detail).not.toBe(0);
        expect(codes, detail).toContain(shape.check);
      }
    },
    60_000,
  );

  it('covers every row of the table in docs/reliability.md', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../docs/reliability.md', import.meta.url), 'utf8');
    for (const s of SHAPES) expect(doc, s.row).toContain(s.row);
  });
});

describe('programs that crash ExecuTorch itself never reach it', () => {
  it.each(SHAPES.filter((s) => s.crashesExecutorch).map((s) => [s.row, s] as [string, Shape]))(
    'verify refuses %s without running it',
    async (_row, shape) => {
      const file = join(dir, `${shape.file}-verify.pte`);
      writeFileSync(file, shape.build());
      const r = await verifyProgram(file, { runner, steps: 2 });
      expect(r.check.refused).toBe(true);
      expect(r.runs).toEqual([]);
      expect(r.ok).toBe(false);
    },
    60_000,
  );
});

describe('the CUDA-only crash', () => {
  it('broken-writeback-into-zero-copy-cache: check refuses it; the runner on the CPU runs it (its device memory is host memory there)', async () => {
    const built = buildProgram(catalogueEntry('broken-writeback-into-zero-copy-cache.pte').build());
    const { codes, run } = await both('writeback-into-cache', encodePte(built.program, built.segments));
    expect(codes).toContain('ZC_WRITEBACK_INTO_CACHE');
    expect(codes).not.toContain('STRUCT_KERNEL_DEVICE_MEMORY'); // one fault, one finding: the zero-copy rule's
    // On a GPU ExecuTorch's CPU copy_ kernel writes device memory and the
    // process faults (docs/reliability.md); the CPU stand-in cannot show that.
    expect(run.crashed).toBe(false);
    expect(run.exit).toBe(0);
  }, 60_000);
});
