// `trtx verify --backend-lib PATH` (and TRTX_BACKEND_LIB): the runner loads a
// library that registers TensorRTBackend and runs it instead of its own
// (native-runner/src/integration/backend_plugin.h, docs/backend-plugin.md). The
// library here is trtx's own backend built as one (libtrtx_backend_plugin.so),
// which marks itself: with TRTX_BACKEND_PLUGIN_TRACE=FILE each init() of its
// delegates appends a line to FILE, so a runner that ignored the flag leaves
// FILE empty. Libraries that cannot serve are environment errors (exit 2).
import { beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { runCli } from './helpers/cli.js';
import { BUILD_TIMEOUT_MS, runnerWithBackendPlugin } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('verify-backend-lib');
let runner = '';
let plugin = '';
let program = '';
let executorch = '';

beforeAll(async () => {
  ({ runner, plugin } = await runnerWithBackendPlugin());
  program = join(dir, 'kv-staged.pte');
  await writeFixture(program, kvDecoder());
  executorch = /\(ExecuTorch (.+)\)/.exec((await execa(runner, ['--version'])).stdout)![1];
}, BUILD_TIMEOUT_MS);

const traceLines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

async function verify(args: string[], env: Record<string, string | undefined> = {}) {
  const trace = join(dir, `trace-${Math.random().toString(36).slice(2)}.txt`);
  const r = await runCli(['verify', program, '--zero-copy-kv', '--init-device-buffers', '--steps', '3', '--json', ...args], {
    env: { TRTX_RUNNER_BIN: runner, TRTX_BACKEND_PLUGIN_TRACE: trace, TRTX_BACKEND_LIB: undefined, ...env },
  });
  return { ...r, json: JSON.parse(r.stdout), trace: traceLines(trace) };
}

describe('verify on a backend library', () => {
  it("--backend-lib: the library's TensorRTBackend runs every delegate; the runtime checks pass and the skipped ones are noted", async () => {
    const r = await verify(['--backend-lib', plugin]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.ok).toBe(true);
    expect(r.json.backend).toEqual({ source: 'plugin', path: plugin, executorch });
    // Every run initialised its delegates in the library: staged and zero-copy, both stream modes, fresh caches.
    expect(r.json.runs.length).toBeGreaterThanOrEqual(5);
    expect(r.trace.length).toBeGreaterThanOrEqual(r.json.runs.length);
    expect(r.trace.every((l: string) => l === 'init decode')).toBe(true);
    // The runtime checks ran: staged vs zero-copy, caches, persistence.
    const names = r.json.assertions.map((a: { name: string }) => a.name).join('\n');
    expect(names).toMatch(/identical at every step: staged \(stream off\) vs zero-copy/);
    expect(names).toMatch(/every cache changes at every step/);
    expect(names).toMatch(/persistent vs fresh/);
    // trtx's own backend's reports are not the library's: no budgets, and a note says so.
    expect(r.json.budgets).toEqual([]);
    expect(r.json.notes.join('\n')).toMatch(/skipped with a backend library: .*weight-streaming budgets/);
    expect(r.json.memory.device_arenas.fill).toBe('poison');
  }, 120_000);

  it('TRTX_BACKEND_LIB does the same; without either, trtx\u2019s own backend runs and the library never loads', async () => {
    const env = await verify([], { TRTX_BACKEND_LIB: plugin });
    expect(env.code, env.stderr).toBe(0);
    expect(env.json.backend.source).toBe('plugin');
    expect(env.trace.length).toBeGreaterThan(0);
    const own = await verify([]);
    expect(own.code, own.stderr).toBe(0);
    expect(own.json.backend).toEqual({ source: 'builtin', path: null, executorch });
    expect(own.trace).toEqual([]);
    expect(own.json.budgets.length).toBeGreaterThan(0);
  }, 120_000);
});

/** A shared library exporting trtx_backend_abi() returning `abi` (none: not exported) and registering nothing. */
async function library(name: string, abi: string | null): Promise<string> {
  const src = join(dir, `${name}.c`);
  const out = join(dir, `${name}.so`);
  writeFileSync(
    src,
    abi === null ? 'int trtx_unrelated(void) { return 0; }\n' : `const char* trtx_backend_abi(void) { return ${JSON.stringify(abi)}; }\n`,
  );
  await execa('cc', ['-shared', '-fPIC', '-o', out, src]);
  return out;
}

describe('a backend library that cannot serve is an environment error (exit 2)', () => {
  it.each([
    ['no such file', () => Promise.resolve(join(dir, 'nowhere.so')), 'RUNNER_BACKEND_LIB_MISSING', /no such file/],
    [
      'not a shared library',
      () => {
        const f = join(dir, 'text.so');
        writeFileSync(f, 'not an ELF file\n');
        return Promise.resolve(f);
      },
      'RUNNER_BACKEND_LIB_LOAD',
      /dlopen refused it/,
    ],
    ['no trtx_backend_abi()', () => library('no-abi', null), 'RUNNER_BACKEND_LIB_ABI', /does not export .*trtx_backend_abi/],
    [
      'built against another ExecuTorch',
      () => library('other-abi', '0.1.0'),
      'RUNNER_BACKEND_LIB_ABI',
      /built against ExecuTorch '0\.1\.0'/,
    ],
    ['registers nothing', () => library('empty', executorch), 'RUNNER_BACKEND_LIB_EMPTY', /registered no TensorRTBackend/],
  ])(
    '%s',
    async (_what, make, code, message) => {
      const lib = await make();
      const r = await verify(['--backend-lib', lib]);
      expect(r.code, r.stdout).toBe(2);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.message).toMatch(message);
      rmSync(lib, { force: true });
    },
    60_000,
  );
});
