// trtx export end to end against the named Python test doubles (there is no
// torch, Torch-TensorRT or ExecuTorch here): the bridge exports, TypeScript
// finishes (budget, zero-copy, checks) and writes OUT atomically.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { exportModel } from '../src/export/export.js';
import { withPte } from '../src/pte/open.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { runChecks } from '../src/checks/run.js';
import { DOUBLE_PYTHON, DOUBLES_DIR, REPO, readCalls, workspace } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

async function setup() {
  const ws = workspace();
  const program = join(ws.dir, 'exported-by-double.pte');
  await writeFixture(program, kvDecoder());
  const env = { PYTHONPATH: DOUBLES_DIR, TRTX_DOUBLE_CALLS: ws.calls, TRTX_DOUBLE_PROGRAM: program };
  return { ws, env, out: join(ws.dir, 'model.pte') };
}

describe('trtx export', () => {
  it('exports, bakes the budget, un-stages the caches, checks, and writes OUT', { timeout: 60_000 }, async () => {
    const { ws, env, out } = await setup();
    const summary = await exportModel({
      env: process.env,
      python: DOUBLE_PYTHON,
      model: ws.file('model.pt2'),
      output: out,
      budget: 8n << 30n,
      zeroCopyKv: true,
      bridgeEnv: env,
    });
    expect(summary.output).toBe(out);
    expect(summary.bridge.zero_copy_kv_path).toBe('torch_tensorrt');
    await withPte(out, async (pte) => {
      const trt = pte.program.executionPlan.flatMap((p) => p.delegates.filter((d) => d.id === 'TensorRTBackend'));
      expect(trt.length).toBeGreaterThan(0);
      for (const d of trt) {
        const { specs } = decodeCompileSpecs(d.compileSpecs);
        expect(specs.weightStreamingBudget).toBe(8n << 30n);
        expect(specs.zeroCopyKv?.length).toBeGreaterThan(0);
      }
      const { summary: s } = await runChecks(pte, { requireZeroCopyKv: true });
      expect(s.errors).toBe(0);
    });
    expect(readdirSync(ws.dir).filter((f) => f.includes('.bridge-'))).toEqual([]);
  });

  it(
    'exports staged and un-stages in TypeScript when Torch-TensorRT has no zero-copy export, and says which path ran',
    { timeout: 60_000 },
    async () => {
      const { ws, env, out } = await setup();
      try {
        const summary = await exportModel({
          env: process.env,
          model: ws.file('model.pt2'),
          output: out,
          zeroCopyKv: true,
          bridgeEnv: { ...env, TRTX_DOUBLE_FEATURES: 'no_zero_copy' },
        });
        expect(summary.bridge).toMatchObject({ zero_copy_kv: true, zero_copy_kv_path: 'trtx' });
        expect(summary.warnings.some((w) => w.startsWith('ZERO_COPY_STAGED: '))).toBe(true);
        const zc = summary.passes.find((p) => p.pass === 'zero-copy-kv')!;
        expect(zc.changed).toBe(true);
        await withPte(out, async (pte) => {
          const { summary: s } = await runChecks(pte, { requireZeroCopyKv: true });
          expect(s.errors).toBe(0);
        });
        // The command line names the path too; the doubles' variables are the run's alone.
        const r = await runCli(
          ['export', ws.file('model.pt2'), '-o', out, '--zero-copy-kv', '--python', join(REPO, 'test', 'doubles', 'python-with-doubles')],
          {
            env: {
              TRTX_DOUBLE_CALLS: env.TRTX_DOUBLE_CALLS,
              TRTX_DOUBLE_PROGRAM: env.TRTX_DOUBLE_PROGRAM,
              TRTX_DOUBLE_FEATURES: 'no_zero_copy',
            },
          },
        );
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('zero-copy KV: exported staged (this Torch-TensorRT has no zero-copy export), un-staged by trtx');
      } finally {
        rmSync(ws.dir, { recursive: true, force: true });
      }
    },
  );

  it(
    'an eager run that fails is a warning, no reference file, and a stale OUT.reference.json does not survive',
    { timeout: 60_000 },
    async () => {
      const { ws, env, out } = await setup();
      // The doubles' torch cannot run a model eagerly: the bridge's reference stage fails as a real failing model does.
      const stale = `${out}.reference.json`;
      writeFileSync(stale, '{"schema":"trtx.reference/1","program":"an earlier export"}');
      const summary = await exportModel({
        env: process.env,
        python: DOUBLE_PYTHON,
        model: ws.file('model.pt2'),
        output: out,
        bridgeEnv: env,
      });
      expect(summary.reference).toBeNull();
      expect(summary.reference_removed).toBe(stale);
      expect(summary.warnings.filter((w) => w.startsWith('REFERENCE_EAGER_FAILED: '))).toHaveLength(1);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(out)).toBe(true);
      expect(readdirSync(ws.dir).filter((f) => f.includes('.bridge-'))).toEqual([]);

      // --no-reference: no eager run (no warning), and a stale file goes too.
      writeFileSync(stale, '{}');
      const none = await exportModel({
        env: process.env,
        python: DOUBLE_PYTHON,
        model: ws.file('model.pt2'),
        output: out,
        bridgeEnv: env,
        referenceSteps: 0,
      });
      expect(none.warnings.filter((w) => w.startsWith('REFERENCE_'))).toEqual([]);
      expect(none.reference_removed).toBe(stale);
      expect(existsSync(stale)).toBe(false);
    },
  );

  it('refuses a bad --reference-steps, exit 2, before any Python runs', async () => {
    for (const [args, message] of [
      [['--reference-steps', '0'], /--reference-steps "0" is not a whole number from 1 to 10000/],
      [['--reference-steps', '2.5'], /--reference-steps "2.5" is not a whole number/],
      [['--reference-steps', '10001'], /--reference-steps "10001" is not a whole number/],
      [['--reference-steps', '3', '--no-reference'], /--reference-steps goes without --no-reference/],
    ] as const) {
      const r = await runCli(['export', 'm.pt2', '-o', '/tmp/never.pte', ...args, '--python', '/nonexistent/python']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });

  it('leaves no output and no temporary file when the bridge dies', { timeout: 60_000 }, async () => {
    const { ws, env, out } = await setup();
    await expect(
      exportModel({
        env: process.env,
        python: DOUBLE_PYTHON,
        model: ws.file('model.pt2'),
        output: out,
        bridgeEnv: { ...env, TRTX_DOUBLE_FAULT: 'compile:kill' },
      }),
    ).rejects.toMatchObject({
      code: 'BRIDGE_DIED',
    });
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(ws.dir).filter((f) => f.includes('.bridge-'))).toEqual([]);
  });

  it('refuses to write a program that fails a check', { timeout: 60_000 }, async () => {
    const { ws, env, out } = await setup();
    // The double "exports" a program that partially elides its caches: check refuses it.
    const broken = join(ws.dir, 'broken.pte');
    const { catalogueEntry } = await import('../src/examples/catalogue.js');
    await writeFixture(broken, catalogueEntry('broken-partial-elision.pte').build());
    await expect(
      exportModel({
        env: process.env,
        python: DOUBLE_PYTHON,
        model: ws.file('model.pt2'),
        output: out,
        bridgeEnv: { ...env, TRTX_DOUBLE_PROGRAM: broken },
      }),
    ).rejects.toMatchObject({
      code: 'EXPORT_CHECK_FAILED',
    });
    expect(existsSync(out)).toBe(false);
  });

  it('notes a model without KV caches under --zero-copy-kv and writes it as it is', { timeout: 60_000 }, async () => {
    const { ws, env, out } = await setup();
    const plain = join(ws.dir, 'plain.pte');
    const { trtSingle } = await import('../src/examples/catalogue.js');
    await writeFixture(plain, trtSingle());
    const summary = await exportModel({
      env: process.env,
      python: DOUBLE_PYTHON,
      model: ws.file('model.pt2'),
      output: out,
      zeroCopyKv: true,
      bridgeEnv: { ...env, TRTX_DOUBLE_PROGRAM: plain },
    });
    expect(existsSync(out)).toBe(true);
    expect(summary.passes.flatMap((p) => p.lines).join('\n')).toContain('no KV cache to make zero-copy');
  });

  // Issue 28: the program reaches OUT once. The bridge's file is renamed to
  // OUT (the inode the double wrote is OUT's), never re-encoded into a second
  // file; a budget the bridge could not bake is written into its head first.
  it.each([
    ['nothing to change', {}, undefined],
    ['a budget this Torch-TensorRT cannot bake', { TRTX_DOUBLE_FEATURES: 'no_budget' }, 8n << 30n],
  ] as const)('OUT is the very file the bridge wrote: %s', { timeout: 60_000 }, async (_what, knobs, budget) => {
    const { ws, env, out } = await setup();
    const summary = await exportModel({
      env: process.env,
      python: DOUBLE_PYTHON,
      model: ws.file('model.pt2'),
      output: out,
      budget,
      bridgeEnv: { ...env, ...knobs },
    });
    const writes = readCalls(ws).filter((c) => c.call === 'executorch.exir.ExecutorchProgramManager.write_to_file');
    expect(writes).toHaveLength(1);
    expect(String(statSync(out).ino)).toBe(writes[0].args.inode);
    expect(summary.file_size).toBe(statSync(out).size);
    expect(summary.passes.find((p) => p.pass === 'budget')?.changed ?? false).toBe(budget !== undefined);
    await withPte(out, (pte) => {
      for (const d of pte.program.executionPlan.flatMap((p) => p.delegates.filter((x) => x.id === 'TensorRTBackend'))) {
        expect(decodeCompileSpecs(d.compileSpecs).specs.weightStreamingBudget).toBe(budget);
      }
    });
    expect(readdirSync(ws.dir).filter((f) => f.includes('.bridge-'))).toEqual([]);
  });

  it('runs from the command line with an explicitly named double interpreter', { timeout: 60_000 }, async () => {
    const { ws, env, out } = await setup();
    const r = await runCli(['export', ws.file('model.pt2'), '-o', out, '--budget', '8GiB', '--python', DOUBLE_PYTHON, '--json'], {
      env: { TRTX_DOUBLE_CALLS: env.TRTX_DOUBLE_CALLS, TRTX_DOUBLE_PROGRAM: env.TRTX_DOUBLE_PROGRAM },
    });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('trtx.export/1');
    expect(doc.output).toBe(out);
    expect(doc.python.source).toBe('--python');
    expect(doc.engine).toBe('tensorrt');
  });

  it('says what to install when the Python lacks the packages, exit 2', { timeout: 60_000 }, async () => {
    const ws = workspace();
    const dir = tempDir('export');
    const r = await runCli(['export', ws.file('model.pt2'), '-o', join(dir, 'o.pte'), '--python', 'python3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/BRIDGE_/);
    expect(r.stderr).toMatch(/install/i);
    expect(existsSync(join(dir, 'o.pte'))).toBe(false);
  });

  it('refuses an unknown --engine, exit 2, before any Python runs', async () => {
    const r = await runCli(['export', 'm.pt2', '-o', '/tmp/never.pte', '--engine', 'tensorrt-llm', '--python', '/nonexistent/python']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--engine "tensorrt-llm": use tensorrt or reference/);
  });

  it('claims OUT before any work: a folder as OUT is refused before Python is looked for', async () => {
    const ws = workspace();
    const folder = join(ws.dir, 'out.pte');
    mkdirSync(folder);
    await expect(
      exportModel({ env: process.env, python: '/nonexistent/python', model: ws.file('model.pt2'), output: folder }),
    ).rejects.toMatchObject({
      code: 'OUTPUT_NOT_REGULAR',
    });
    // A sound OUT: then the interpreter is the first thing missing.
    await expect(
      exportModel({ env: process.env, python: '/nonexistent/python', model: ws.file('model.pt2'), output: join(ws.dir, 'never.pte') }),
    ).rejects.toMatchObject({ code: 'PYENV_PYTHON_NOT_FOUND' });
    expect(readdirSync(ws.dir).filter((f) => f.includes('trtx-lock'))).toEqual([]);
  });

  it('a relative model or OUT means the run’s folder (cwd); without one it is refused, never read against the process’s folder', async () => {
    const ws = workspace();
    const run = { env: process.env, python: '/nonexistent/python' };
    const cases: [string, string, string][] = [
      ['model.pt2', join(ws.dir, 'never.pte'), 'model.pt2'],
      [ws.file('model.pt2'), 'never.pte', 'never.pte'],
    ];
    for (const [model, output, location] of cases) {
      await expect(exportModel({ ...run, model, output })).rejects.toMatchObject({ code: 'USAGE', location });
    }
    // With the run's folder they are its files: the model is found there, and the interpreter is the first thing missing.
    await expect(exportModel({ ...run, cwd: ws.dir, model: 'model.pt2', output: 'never.pte' })).rejects.toMatchObject({
      code: 'PYENV_PYTHON_NOT_FOUND',
    });
  });

  it('refuses a missing interpreter, exit 2', async () => {
    const ws = workspace();
    const r = await runCli(['export', ws.file('model.pt2'), '-o', join(ws.dir, 'never.pte'), '--python', '/nonexistent/python']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')[0]).toMatch(/^error: PYENV_PYTHON_NOT_FOUND/);
  });
});
