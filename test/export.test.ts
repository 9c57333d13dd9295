// trtx export end to end against the named Python test doubles (there is no
// torch, Torch-TensorRT or ExecuTorch here): the bridge exports, TypeScript
// finishes (budget, zero-copy, checks) and writes OUT atomically.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { writeFixture } from '../fixtures/builder.js';
import { kvDecoder } from '../fixtures/catalogue.js';
import { exportModel } from '../src/export/export.js';
import { withPte } from '../src/pte/open.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { runChecks } from '../src/checks/run.js';
import { DOUBLE_PYTHON, DOUBLES_DIR, workspace } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';

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
    const summary = await exportModel({ python: DOUBLE_PYTHON, model: ws.file('model.pt2'), output: out, budget: 8n << 30n, zeroCopyKv: true, bridgeEnv: env });
    expect(summary.output).toBe(out);
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

  it('leaves no output and no temporary file when the bridge dies', { timeout: 60_000 }, async () => {
    const { ws, env, out } = await setup();
    await expect(exportModel({ python: DOUBLE_PYTHON, model: ws.file('model.pt2'), output: out, bridgeEnv: { ...env, TRTX_DOUBLE_FAULT: 'compile:kill' } })).rejects.toMatchObject({
      code: 'BRIDGE_DIED',
    });
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(ws.dir).filter((f) => f.includes('.bridge-'))).toEqual([]);
  });

  it('refuses to write a program that fails a check', { timeout: 60_000 }, async () => {
    const { ws, env, out } = await setup();
    // The double "exports" a program whose engine has no aliased cache: --zero-copy-kv cannot be honoured.
    const plain = join(ws.dir, 'plain.pte');
    const { trtSingle } = await import('../fixtures/catalogue.js');
    await writeFixture(plain, trtSingle());
    await expect(exportModel({ python: DOUBLE_PYTHON, model: ws.file('model.pt2'), output: out, zeroCopyKv: true, bridgeEnv: { ...env, TRTX_DOUBLE_PROGRAM: plain } })).rejects.toMatchObject({
      code: 'ZC_REWRITE_NO_ALIASED_CACHE',
    });
    expect(existsSync(out)).toBe(false);
  });

  it('runs from the command line with an explicitly named double interpreter', { timeout: 60_000 }, async () => {
    const { ws, env, out } = await setup();
    const prev = { ...process.env };
    Object.assign(process.env, { TRTX_DOUBLE_CALLS: env.TRTX_DOUBLE_CALLS, TRTX_DOUBLE_PROGRAM: env.TRTX_DOUBLE_PROGRAM });
    try {
      const r = await runCli(['export', ws.file('model.pt2'), '-o', out, '--budget', '8GiB', '--python', DOUBLE_PYTHON, '--json']);
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(doc.schema).toBe('trtx.export/1');
      expect(doc.output).toBe(out);
      expect(doc.python.source).toBe('--python');
      expect(doc.engine).toBe('tensorrt');
    } finally {
      process.env = prev;
    }
  });

  it('says what to install when the Python lacks the packages, exit 2', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trtx-export-'));
    const r = await runCli(['export', join(dir, 'm.pt2'), '-o', join(dir, 'o.pte'), '--python', 'python3']);
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

  it('refuses a missing interpreter, exit 2', async () => {
    const r = await runCli(['export', 'm.pt2', '-o', '/tmp/never.pte', '--python', '/nonexistent/python']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')[0]).toMatch(/^error: PYENV_PYTHON_NOT_FOUND/);
  });
});
