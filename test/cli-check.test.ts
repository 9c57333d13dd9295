// `trtx check`: grouped human output, the summary line, --json, --strict,
// --zero-copy-kv, and the exit-code contract (0 clean, 1 errors or --strict
// warnings, 2 usage or unreadable input).
import { beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { writeFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import type { Program } from '../src/pte/model.js';
import { writePte } from '../src/pte/write.js';
import { runCli } from './helpers/cli.js';
import { CHECKS } from '../src/checks/run.js';
import type { Check } from '../src/checks/context.js';
import { diag } from '../src/checks/diagnostic.js';
import type { Code } from '../src/codes/index.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('cli-check');

async function file(name: string, spec: ProgramSpec, edit?: (p: Program) => void): Promise<string> {
  const path = join(dir, name);
  if (!edit) await writeFixture(path, spec);
  else {
    const built = buildProgram(spec);
    edit(built.program);
    await writePte(path, built.program, built.segments, { alignment: 4096 });
  }
  return path;
}

let clean: string;
let warned: string;
let broken: string;
beforeAll(async () => {
  clean = await file('clean.pte', trtSingle());
  warned = await file('warned.pte', multiEngine(3));
  broken = await file('broken.pte', trtSingle(), (p) => {
    const plan = p.executionPlan[0];
    plan.outputs[0] = 99;
    const call = plan.chains[0].instructions.find((i) => i.type === 'DelegateCall');
    if (call?.type === 'DelegateCall') call.args.pop();
  });
});

// The cases go at once (runCli's runs share nothing): each reads the shared inputs or writes files of its own names.
describe.concurrent('trtx check', () => {
  it('exits 0 on a clean program and says so', async () => {
    const r = await runCli(['check', clean]);
    expect(r.code).toBe(0);
    // Every fixture holds trtx reference engines, and check says so.
    expect(r.stdout).toBe(
      `${clean}: no problems found (runtime rules: zero-copy-trt, et-module)\n  1 TensorRT delegate holds a synthetic reference engine, not a TensorRT plan (fixtures and benchmarks; it computes a made-up function, not the model): the program runs in trtx verify, not on TensorRT, and its numbers are synthetic\n0 errors, 0 warnings\n`,
    );
  });

  it('exits 0 with warnings, 1 with them under --strict', async () => {
    const r = await runCli(['check', warned]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('warning TRT_BUDGET_MULTI_ENGINE  program');
    expect(r.stdout).toContain('3 engines x 256 MiB = 768 MiB may be resident');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('0 errors, 1 warning');
    const strict = await runCli(['check', warned, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stdout.trimEnd().split('\n').at(-1)).toBe('0 errors, 1 warning (--strict: warnings fail)');
  });

  it('exits 1 on errors, grouped by method then delegate, each with severity, code, location, message and hint', async () => {
    const r = await runCli(['check', broken]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${broken}: checked (runtime rules: zero-copy-trt, et-module)`);
    expect(lines[1]).toMatch(/^ {2}1 TensorRT delegate holds a synthetic reference engine/);
    expect(lines.slice(2)).toEqual([
      'method forward',
      '  error STRUCT_VALUE_INDEX  forward > outputs[0]',
      expect.stringMatching(/^ {4}plan output 99 is outside values\[0\.\.\d+\]/),
      expect.stringMatching(/^ {4}hint: re-export the program/),
      '  delegate 0 (TensorRTBackend)',
      '    error TRT_ARITY  forward > delegate 0 (TensorRTBackend) > chain 0 instruction 1',
      '      DelegateCall to delegate 0 (TensorRTBackend) has 1 arguments; its io_bindings want 2 (1 inputs + 1 outputs)',
      expect.stringMatching(/^ {6}hint: /),
      '2 errors, 0 warnings',
    ]);
  });

  it('--json prints the report and keeps the exit code', async () => {
    const r = await runCli(['check', broken, '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      schema: 'trtx.check/1',
      file: broken,
      ok: false,
      strict: false,
      zero_copy_kv: false,
      summary: { errors: 2, warnings: 0, line: '2 errors, 0 warnings' },
    });
    expect(doc.diagnostics.map((d: { code: string }) => d.code)).toEqual(['STRUCT_VALUE_INDEX', 'TRT_ARITY']);
    expect(doc.engines).toMatchObject({ tensorrt: 0, reference: 1, synthetic: 1, programs: { engines: 0 }, unknown: 0 });
    const ok = JSON.parse((await runCli(['check', warned, '--json'])).stdout);
    expect(ok.ok).toBe(true);
    const strict = await runCli(['check', warned, '--json', '--strict']);
    expect([strict.code, JSON.parse(strict.stdout).ok]).toEqual([1, false]);
  });

  it('passes --zero-copy-kv through to the checks', async () => {
    // A stand-in for the zero-copy rules, registered the way they will be.
    const probe: Check = (ctx) =>
      ctx.options.requireZeroCopyKv
        ? [diag(ctx.pte.reportBudget, 'warning', 'PROBE_ZERO_COPY' as Code, 'program', 'asked for zero-copy', 'h')]
        : [];
    CHECKS.push(probe);
    try {
      const r = await runCli(['check', clean, '--zero-copy-kv', '--json']);
      const doc = JSON.parse(r.stdout);
      expect(doc.zero_copy_kv).toBe(true);
      expect(doc.diagnostics.map((d: { code: string }) => d.code)).toContain('PROBE_ZERO_COPY');
      expect(JSON.parse((await runCli(['check', clean, '--json'])).stdout).diagnostics).toEqual([]);
    } finally {
      CHECKS.splice(CHECKS.indexOf(probe), 1);
    }
  });

  it('a file that is not a sound container is an error diagnostic (exit 1), not a crash', async () => {
    const bytes = readFileSync(clean);
    bytes.writeUInt32LE(0x7fffff00, 0); // root offset past the program
    const path = join(dir, 'bad-root.pte');
    writeFileSync(path, bytes);
    const r = await runCli(['check', path, '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.diagnostics.map((d: { code: string; method: unknown }) => [d.code, d.method])).toEqual([['PTE_ROOT_OFFSET', null]]);
  });

  it('exits 2 on a missing file, a file that is not a program, and a bad flag', async () => {
    const missing = await runCli(['check', join(dir, 'nope.pte')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('INPUT_UNREADABLE');
    const json = await runCli(['check', join(dir, 'nope.pte'), '--json']);
    expect(JSON.parse(json.stdout).error.code).toBe('INPUT_UNREADABLE');
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'hello, this is not an ExecuTorch program\n');
    expect((await runCli(['check', text])).code).toBe(2);
    expect((await runCli(['check', clean, '--frobnicate'])).code).toBe(2);
    expect((await runCli(['check'])).code).toBe(2);
  });

  it('bin/trtx runs it with the same exit code', () => {
    const bin = resolve(fileURLToPath(new URL('../bin/trtx', import.meta.url)));
    let code = 0;
    let stdout: string;
    try {
      stdout = execFileSync(process.execPath, [bin, 'check', broken, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const err = e as { status: number; stdout: string };
      code = err.status;
      stdout = err.stdout;
    }
    expect(code).toBe(1);
    expect(JSON.parse(stdout).summary.errors).toBe(2);
  });
});

describe.concurrent('trtx check with several files', () => {
  it('checks each in turn, summarises, and exits with the worst code', async () => {
    const passing = await runCli(['check', clean, warned]);
    expect(passing.code).toBe(0);
    expect(passing.stdout).toMatch(/^2 files: 2 passed, 0 failed; 0 errors, 1 warning in all$/m);

    const failing = await runCli(['check', clean, broken, warned]);
    expect(failing.code).toBe(1);
    // Each file's own block, in the order given, then the summary naming the failure.
    const blocks = [clean, broken, warned].map((f) => failing.stdout.indexOf(`${f}: `));
    expect(
      blocks.every((at, i) => at >= 0 && (i === 0 || at > blocks[i - 1])),
      failing.stdout,
    ).toBe(true);
    expect(failing.stdout).toMatch(/^3 files: 2 passed, 1 failed; 2 errors, 1 warning in all$/m);
    expect(failing.stdout).toContain(`  failed       ${broken}`);

    const unreadable = await runCli(['check', broken, join(dir, 'nope.pte'), clean]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stdout).toContain(`${join(dir, 'nope.pte')}: not checked: INPUT_UNREADABLE`);
    expect(unreadable.stdout).toMatch(/^3 files: 1 passed, 1 failed, 1 not checked; 2 errors, 0 warnings in all$/m);

    expect((await runCli(['check', clean, warned, '--strict'])).code).toBe(1);
  });

  it('--json: one document with a report or a refusal per file', async () => {
    const r = await runCli(['check', clean, broken, join(dir, 'nope.pte'), '--json']);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('trtx.check-files/1');
    expect(doc.ok).toBe(false);
    expect(doc.summary).toMatchObject({ files: 3, passed: 1, failed: 1, unreadable: 1, errors: 2 });
    expect(doc.files.map((f: { file: string }) => f.file)).toEqual([clean, broken, join(dir, 'nope.pte')]);
    expect(doc.files[1].schema).toBe('trtx.check/1');
    expect(doc.files[2].error.code).toBe('INPUT_UNREADABLE');
  });
});
