// The user's own three lines, exactly as written, in the folder that holds
// the model (the command line in process, that folder the user's):
//   trtx export model.pt --budget 8GiB        (writes model.pte beside the model)
//   trtx check model.pte
//   trtx verify --zero-copy-kv model.pte
// There is no torch here: export runs the named Python test doubles
// (TRTX_PYTHON=test/doubles/python-with-doubles), which "export" a staged KV
// decoder; check and verify then run on what export wrote. Around them, the
// rules of the default output and what export says when Torch-TensorRT is
// missing.
import { describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { buildProgram } from '../src/cli/main.js';
import { defaultOutput } from '../src/export/model-file.js';
import { openPte } from '../src/pte/open.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { DOUBLE_PYTHON, workspace } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';

/** A folder holding model.pt (a torch.export archive under the .pt name) and the program the doubles "export". */
async function modelFolder() {
  const ws = workspace();
  copyFileSync(ws.file('model.pt2'), ws.file('model.pt'));
  const program = ws.file('double-exports-this.pte');
  await writeFixture(program, kvDecoder());
  const env = { TRTX_PYTHON: DOUBLE_PYTHON, TRTX_DOUBLE_PROGRAM: program, TRTX_DOUBLE_CALLS: ws.calls };
  return { ws, env };
}

/** A command typed in `cwd`, the CLI in process with that folder as the user's (helpers/cli.ts). */
const run = (args: string[], cwd: string, env: Record<string, string>) => runCli(args, { cwd, env });

describe("the user's three lines", () => {
  it('export writes model.pte beside model.pt; check and verify --zero-copy-kv pass on it', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const { ws, env } = await modelFolder();
    const runner = await testRunner();

    const exported = await run(['export', 'model.pt', '--budget', '8GiB'], ws.dir, env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toMatch(/^wrote model\.pte \(/);
    const pte = await openPte(ws.file('model.pte'));
    try {
      const budgets = pte.program.executionPlan.flatMap((p) =>
        p.delegates.filter((d) => d.id === 'TensorRTBackend').map((d) => decodeCompileSpecs(d.compileSpecs).specs.weightStreamingBudget),
      );
      expect(budgets.length).toBeGreaterThan(0);
      expect(new Set(budgets)).toEqual(new Set([8n << 30n]));
    } finally {
      await pte.close();
    }

    const checked = await run(['check', 'model.pte'], ws.dir, env);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    expect(checked.stdout).toMatch(/^model\.pte: /);

    const verified = await run(['verify', '--zero-copy-kv', 'model.pte'], ws.dir, { ...env, TRTX_RUNNER_BIN: runner });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/staged-vs-zero-copy/);
    expect(verified.stdout).toMatch(/verified: \d+ checks passed/);
  });
});

describe('trtx verify --zero-copy-kv with no file (a CI step after export, in the same folder)', () => {
  it('verifies the one .pte there; with two or none it names what it found and exits 2', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const ws = workspace();
    const env = { TRTX_RUNNER_BIN: await testRunner() };
    const empty = await run(['verify', '--zero-copy-kv'], ws.dir, env);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^error: USAGE: no file named and no \.pte in the current folder/m);

    await writeFixture(ws.file('model.pte'), kvDecoder());
    const one = await run(['verify', '--zero-copy-kv'], ws.dir, env);
    expect(one.code, one.stdout + one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^model\.pte: staged-vs-zero-copy/);

    await writeFixture(ws.file('other.pte'), kvDecoder());
    const two = await run(['verify', '--zero-copy-kv'], ws.dir, env);
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/2 \.pte files in the current folder \(model\.pte, other\.pte\)/);
  });
});

describe('export: the default output', () => {
  it("is the model's name with .pte, in the model's folder", () => {
    expect(defaultOutput('model.pt')).toBe('model.pte');
    expect(defaultOutput('models/llama.pt2')).toBe('models/llama.pte');
    expect(defaultOutput('/abs/m.ep')).toBe('/abs/m.pte');
    expect(defaultOutput('llm.py:make_decoder')).toBe('llm.pte');
    expect(defaultOutput('noext')).toBe('noext.pte');
  });

  it('is not replaced when it exists, unless --force', { timeout: 60_000 }, async () => {
    const { ws, env } = await modelFolder();
    writeFileSync(ws.file('model.pte'), 'an earlier program\n');
    const refused = await runCli(['export', ws.file('model.pt')], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error: EXPORT_OUTPUT_EXISTS: .*model\.pte: already exists/);
    expect(refused.stderr).toMatch(/^hint: .*--force/m);
    expect(readFileSync(ws.file('model.pte'), 'utf8')).toBe('an earlier program\n');
    expect(existsSync(ws.calls)).toBe(false); // refused before Python started

    const forced = await runCli(['export', ws.file('model.pt'), '--force'], { env });
    expect(forced.code, forced.stderr).toBe(0);
    await (await openPte(ws.file('model.pte'))).close();
  });

  it('never replaces the model itself, --force or not', async () => {
    const { ws, env } = await modelFolder();
    const before = readFileSync(ws.file('model.pt'));
    const r = await runCli(['export', ws.file('model.pt'), '-o', ws.file('model.pt'), '--force'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: EXPORT_OUTPUT_IS_MODEL: /);
    expect(readFileSync(ws.file('model.pt')).equals(before)).toBe(true);
  });

  it('refuses a model that is already a .pte, or a .py without a factory, naming what to do', async () => {
    const { ws, env } = await modelFolder();
    const pte = await runCli(['export', ws.file('double-exports-this.pte'), '-o', ws.file('x.pte')], { env });
    expect(pte.code).toBe(1);
    expect(pte.stderr).toMatch(/^error: EXPORT_MODEL_PROGRAM: .*already an ExecuTorch program/);
    expect(pte.stderr).toMatch(/^hint: .*trtx check/m);
    writeFileSync(ws.file('llm.py'), 'def make_decoder():\n    pass\n');
    const py = await runCli(['export', ws.file('llm.py')], { env });
    expect(py.code).toBe(2);
    expect(py.stderr).toMatch(/^error: EXPORT_MODEL_NO_FACTORY: /);
    expect(py.stderr).toMatch(/^hint: .*llm\.py:make_model/m);
  });
});

describe('export without Torch-TensorRT', () => {
  it('exits 2 naming what to install, and the reference engine where the command has it', { timeout: 60_000 }, async () => {
    const { ws, env } = await modelFolder();
    const r = await runCli(['export', ws.file('model.pt'), '--budget', '8GiB'], {
      env: { ...env, TRTX_DOUBLE_MISSING: 'torch_tensorrt' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: BRIDGE_IMPORT_MISSING: .*cannot import torch_tensorrt/m);
    expect(r.stderr).toMatch(/^hint: pip install torch-tensorrt /m);
    expect(existsSync(ws.file('model.pte'))).toBe(false);
    // A hint never names a flag the command lacks: `--engine reference`
    // appears exactly when `trtx export` offers it.
    const hasEngine = buildProgram()
      .commands.find((c) => c.name() === 'export')!
      .options.some((o) => o.long === '--engine');
    if (hasEngine) expect(r.stderr).toMatch(/--engine reference/);
    else expect(r.stderr).not.toMatch(/--engine/);
  });
});
