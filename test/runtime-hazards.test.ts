// What a program needs from the runtime that executes it (check --runtime,
// verify): each of the four hazards is refused or named by check, with a
// stable code and the culprit, and verify shows it or refuses the program.
//   RT_DEVICE_STATE_UNINITIALIZED  device arenas are not cleared
//   RT_DEVICE_INITIAL_STATE        initial state cannot load into a device arena
//   RT_SHARED_DEVICE_ARENA         Module does not share device arenas
//   RT_NEEDS_ZERO_COPY_TRT         a zero-copy call needs the zero-copy runtime
import { beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { runChecks } from '../src/checks/run.js';
import { parseRuntimes, type RuntimeRules } from '../src/checks/runtime-rules.js';
import { withPte } from '../src/pte/open.js';
import { verifyProgram } from '../src/verify/verify.js';
import { runCli } from './helpers/cli.js';
import { encodePte } from './helpers/memory-pte.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { rewriteSpec } from './helpers/zero-copy-run.js';
import { DECODE, sharedLayout, staged, zeroCopy } from './helpers/zero-copy-shapes.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('runtime-hazards');
let runner = '';
beforeAll(async () => {
  runner = await testRunner();
}, BUILD_TIMEOUT_MS);

async function file(name: string, spec: ProgramSpec): Promise<string> {
  const p = join(dir, name);
  await writeFixture(p, spec);
  return p;
}

async function findings(path: string, runtime?: RuntimeRules) {
  return withPte(path, async (pte) => (await runChecks(pte, { runtime })).diagnostics.filter((d) => d.code.startsWith('RT_')));
}

/** A program whose prefill and decode share their caches in one arena, rewritten zero-copy with --share-cache. */
async function sharedCacheProgram(): Promise<string> {
  const r = await rewriteSpec(sharedLayout(staged()), { shareCache: true });
  const p = join(dir, 'shared-cache.pte');
  writeFileSync(p, encodePte(r.pte.program, r.built.segments));
  return p;
}

describe('--runtime', () => {
  it('defaults to the zero-copy Torch-TensorRT runtime and ExecuTorch Module; one name per axis', () => {
    expect(parseRuntimes(undefined)).toEqual({ delegate: 'zero-copy-trt', memory: 'et-module' });
    expect(parseRuntimes(['stock-trt'])).toEqual({ delegate: 'stock-trt', memory: 'et-module' });
    expect(parseRuntimes(['stock-trt,custom-memory'])).toEqual({ delegate: 'stock-trt', memory: 'custom-memory' });
    expect(() => parseRuntimes(['tensorrt'])).toThrow(expect.objectContaining({ code: 'CHECK_RUNTIME_UNKNOWN', kind: 'usage' }));
    expect(() => parseRuntimes(['stock-trt', 'zero-copy-trt'])).toThrow(expect.objectContaining({ code: 'CHECK_RUNTIME_CONFLICT' }));
  });
});

describe('RT_DEVICE_STATE_UNINITIALIZED: device arenas are not cleared', () => {
  it('check names the device-resident buffers the application must initialise', async () => {
    const found = await findings(await file('zc.pte', zeroCopy(DECODE)));
    const d = found.find((x) => x.code === 'RT_DEVICE_STATE_UNINITIALIZED')!;
    expect(d).toMatchObject({ severity: 'warning', method: 'decode', location: 'decode > arena 2 on cuda:0' });
    expect(d.message).toMatch(/4 mutable buffer\(s\) \(layers\.0\.attn\.k_cache, .*\) live in arena 2 on cuda:0.*never clears/);
    expect(d.hint).toContain('--init-device-buffers');
    expect(await findings(await file('staged.pte', staged(DECODE)))).toEqual([]);
  });

  it(
    'verify of a zero-copy program runs it as its contract says (caches initialised), shows the duty with a poisoned run, and fails only as an application that does not initialise them',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const path = await file('kv-zc-given.pte', zeroCopy(DECODE));
      // As the derived twin is judged: initialised runs, one more poisoned, and the duty an ok check with its evidence.
      const given = await verifyProgram(path, { steps: 3, callerStream: 'off', runner });
      expect(given.check.refused).toBe(false);
      expect(given.check.diagnostics.map((d) => d.code)).toContain('RT_DEVICE_STATE_UNINITIALIZED');
      expect(given.options).toMatchObject({ init_device_buffers: false, twin_contract: true });
      expect(given.runs.filter((x) => !x.init_device_buffers)).toHaveLength(1);
      expect(given.runs.filter((x) => x.init_device_buffers).length).toBeGreaterThan(1);
      expect(given.assertions.filter((a) => !a.ok)).toEqual([]);
      expect(given.assertions.map((a) => a.name)).toContain('as-is run (device buffers left poisoned) completes');
      const duty = given.assertions.find((a) => a.name.startsWith('the application initialises the device-resident caches'))!;
      expect(duty.ok).toBe(true);
      expect(duty.detail).toMatch(/^required: .* reads layers\.0\.attn\.k_cache, .* before writing them/);
      expect(given.ok).toBe(true);
      expect(given.memory!.device_arenas.zeroed_bytes).toBeGreaterThan(0);

      // --no-init-device-buffers: an application that leaves them as ExecuTorch does, every run poisoned.
      const bare = await verifyProgram(path, { steps: 3, callerStream: 'off', initDeviceBuffers: false, runner });
      expect(bare.ok).toBe(false);
      expect(bare.options).toMatchObject({ init_device_buffers: false, twin_contract: false });
      const written = bare.assertions.find((a) => a.name.startsWith('device-resident buffers are written before they are read'))!;
      expect(written.ok).toBe(false);
      expect(written.detail).toMatch(/reads layers\.0\.attn\.k_cache, .* before writing them/);
      expect(bare.memory!.device_arenas).toMatchObject({ fill: 'poison', zeroed_bytes: 0 });

      // --init-device-buffers: the application initialises them; no poisoned run.
      const app = await verifyProgram(path, { steps: 3, callerStream: 'off', initDeviceBuffers: true, runner });
      expect(app.assertions.filter((a) => !a.ok)).toEqual([]);
      expect(app.runs.every((x) => x.init_device_buffers)).toBe(true);
      expect(app.options.twin_contract).toBe(false);
      expect(app.ok).toBe(true);
    },
  );

  it(
    'the bytes rewrite --zero-copy-kv writes are judged as verify judges the twin it derives: ok, the duty shown',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const stagedPath = await file('kv-staged-chain.pte', staged());
      const zc = join(dir, 'kv-staged-chain.zc.pte');
      const rewritten = await runCli(['rewrite', stagedPath, '-o', zc, '--zero-copy-kv']);
      expect(rewritten.code, rewritten.stderr).toBe(0);
      const duty = (r: Awaited<ReturnType<typeof verifyProgram>>) =>
        r.assertions.find((a) => a.name.startsWith('the application initialises the device-resident caches'));
      const twin = await verifyProgram(stagedPath, { zeroCopyKv: true, steps: 3, callerStream: 'off', runner });
      for (const zeroCopyKv of [true, false]) {
        const r = await verifyProgram(zc, { zeroCopyKv, steps: 3, callerStream: 'off', runner });
        expect(r.mode).toBe(zeroCopyKv ? 'zero-copy' : 'as-is');
        expect(r.options.twin_contract).toBe(true);
        expect(r.assertions.filter((a) => !a.ok)).toEqual([]);
        expect(r.ok).toBe(twin.ok);
        expect(duty(r)?.ok).toBe(true);
        expect(duty(r)?.detail.startsWith('required: ')).toBe(duty(twin)?.detail.startsWith('required: '));
      }
      expect(twin.ok).toBe(true);
      // The command line: the contract said in a line, and --no-init-device-buffers judges an application that does not initialise them.
      const env = { TRTX_RUNNER_BIN: runner };
      const cli = await runCli(['verify', zc, '--steps', '3', '--caller-stream', 'off'], { env });
      expect(cli.code, cli.stdout).toBe(0);
      expect(cli.stdout).toContain(
        '  the program keeps its caches in device memory, which ExecuTorch does not clear: it runs initialised after each load',
      );
      expect(cli.stdout).toMatch(
        /^ {2}ok {3}the application initialises the device-resident caches, as the zero-copy contract requires: as-is/m,
      );
      const poisoned = await runCli(['verify', zc, '--steps', '3', '--caller-stream', 'off', '--no-init-device-buffers'], { env });
      expect(poisoned.code, poisoned.stdout).toBe(1);
      expect(poisoned.stdout).toMatch(/^ {2}FAIL device-resident buffers are written before they are read: as-is/m);
    },
  );

  it(
    'verify --zero-copy-kv runs a derived twin as its contract says (caches initialised) and shows the obligation is real',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const path = await file('kv-staged.pte', staged());
      const r = await verifyProgram(path, { zeroCopyKv: true, steps: 3, callerStream: 'off', runner });
      expect(r.options).toMatchObject({ init_device_buffers: false, twin_contract: true });
      expect(r.check.diagnostics.map((d) => `${d.file}:${d.code}`)).toContain('zero-copy twin:RT_DEVICE_STATE_UNINITIALIZED');
      // The poisoned twin run exists beside the initialised one and differs from
      // it (an output or buffer digest verify compared): the obligation is shown, not assumed.
      const twins = r.runs.filter((x) => x.variant === 'zero-copy');
      expect(twins.filter((x) => !x.init_device_buffers)).toHaveLength(1);
      expect(twins.filter((x) => x.init_device_buffers).length).toBeGreaterThan(0);
      const obligation = r.assertions.find((a) => a.name.startsWith('the application initialises the device-resident caches'))!;
      expect(obligation.detail).toMatch(
        /\(verify poisons it with 0xFF\), \S+ step \d+: (output \d+|buffer \S+) differs \((\S+) vs (?!\2\))\S+\)/,
      );
      expect(obligation.detail).toMatch(/^required: .* reads layers\.0\.attn\.k_cache, .* before writing them/);
      expect(r.assertions.filter((a) => !a.ok)).toEqual([]);
      expect(r.ok).toBe(true);
    },
  );
});

describe('RT_DEVICE_INITIAL_STATE: initial state cannot load into a device arena', () => {
  it('check refuses it per buffer, and verify refuses the program without running it', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const path = await file('zc-init.pte', zeroCopy({ ...DECODE, cacheInitialState: true }));
    const found = await findings(path);
    const errors = found.filter((d) => d.code === 'RT_DEVICE_INITIAL_STATE');
    expect(errors.map((d) => d.location)).toEqual([
      'decode > buffer layers.0.attn.k_cache',
      'decode > buffer layers.0.attn.v_cache',
      'decode > buffer layers.1.attn.k_cache',
      'decode > buffer layers.1.attn.v_cache',
    ]);
    expect(errors[0]).toMatchObject({ severity: 'error' });
    expect(errors[0].message).toMatch(/tensor_parser_exec_aten\.cpp/);
    const r = await verifyProgram(path, { runner });
    expect(r.check.refused).toBe(true);
    expect(r.runs).toEqual([]);
    expect(r.device).toBeNull();
    expect(r.ok).toBe(false);
    // Staged, the initial state is in a host arena: nothing to refuse.
    expect(await findings(await file('staged-init.pte', staged({ ...DECODE, cacheInitialState: true })))).toEqual([]);
  });
});

describe('RT_SHARED_DEVICE_ARENA: Module does not share device arenas between methods', () => {
  it(
    'an error under et-module, a warning under custom-memory; verify refuses it under et-module',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const path = await sharedCacheProgram();
      const module = (await findings(path)).filter((d) => d.code === 'RT_SHARED_DEVICE_ARENA');
      expect(module.length).toBeGreaterThan(0);
      expect(module[0]).toMatchObject({ severity: 'error' });
      expect(module[0].message).toMatch(/decode and prefill share layers\.0\.attn\.k_cache in device arena \d+/);
      expect(module[0].message).toContain('share_memory_arenas');
      const custom = (await findings(path, parseRuntimes(['custom-memory']))).filter((d) => d.code === 'RT_SHARED_DEVICE_ARENA');
      expect(custom.map((d) => d.severity)).toEqual(module.map(() => 'warning'));
      const r = await verifyProgram(path, { runner });
      expect(r.check.refused).toBe(true);
      expect(r.check.diagnostics.some((d) => d.code === 'RT_SHARED_DEVICE_ARENA' && d.severity === 'error')).toBe(true);
      // Unshared caches need no shared arena.
      expect((await findings(await file('zc2.pte', zeroCopy()))).filter((d) => d.code === 'RT_SHARED_DEVICE_ARENA')).toEqual([]);
    },
  );
});

describe('RT_NEEDS_ZERO_COPY_TRT: a zero-copy call needs the zero-copy Torch-TensorRT runtime', () => {
  it(
    'a warning naming the requirement by default, an error under stock-trt; verify refuses it there',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const path = await file('zc3.pte', zeroCopy(DECODE));
      const byDefault = (await findings(path)).filter((d) => d.code === 'RT_NEEDS_ZERO_COPY_TRT');
      expect(byDefault).toHaveLength(1);
      expect(byDefault[0]).toMatchObject({ severity: 'warning', method: 'decode', delegate: 0 });
      expect(byDefault[0].message).toMatch(/expected at least 11 args/);
      const stock = (await findings(path, parseRuntimes(['stock-trt']))).filter((d) => d.code === 'RT_NEEDS_ZERO_COPY_TRT');
      expect(stock.map((d) => d.severity)).toEqual(['error']);
      const r = await verifyProgram(path, { runtime: parseRuntimes(['stock-trt']), runner });
      expect(r.check.refused).toBe(true);
      expect(r.runtime).toEqual({ delegate: 'stock-trt', memory: 'et-module' });
      // A staged program runs on either runtime.
      expect(await findings(await file('staged3.pte', staged(DECODE)), parseRuntimes(['stock-trt']))).toEqual([]);
    },
  );
});

describe('the command line', () => {
  it('check --runtime: the rules applied are in the output; stock-trt fails a zero-copy program', async () => {
    const path = await file('zc4.pte', zeroCopy(DECODE));
    const def = await runCli(['check', path, '--json']);
    expect(def.code).toBe(0);
    expect(JSON.parse(def.stdout).runtime).toEqual({ delegate: 'zero-copy-trt', memory: 'et-module' });
    const stock = await runCli(['check', path, '--runtime', 'stock-trt', '--json']);
    expect(stock.code).toBe(1);
    expect(
      JSON.parse(stock.stdout)
        .diagnostics.filter((d: { severity: string }) => d.severity === 'error')
        .map((d: { code: string }) => d.code),
    ).toEqual(['RT_NEEDS_ZERO_COPY_TRT']);
    expect((await runCli(['check', path, '--runtime', 'tensorrt'])).code).toBe(2);
    const human = await runCli(['check', path, '--runtime', 'stock-trt', 'custom-memory']);
    expect(human.stdout).toContain('runtime rules: stock-trt, custom-memory');
  });

  it(
    'verify: a refused program exits 1 with the diagnostics; a program that cannot run here exits 2',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      // The CLI builds its own runner unless the run's environment names a binary.
      const env = { TRTX_RUNNER_BIN: runner };
      const refused = await runCli(['verify', await file('zc-init2.pte', zeroCopy({ ...DECODE, cacheInitialState: true }))], { env });
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain('RT_DEVICE_INITIAL_STATE');
      expect(refused.stdout).toMatch(/refused: the check found 4 errors, .*; nothing was run/);
      const nogpu = await runCli(['verify', await file('staged5.pte', staged(DECODE)), '--device', 'cuda'], { env });
      expect(nogpu.code).toBe(2);
      expect(nogpu.stderr).toContain('VERIFY_NO_GPU');
      expect(nogpu.stderr).toContain('an environment result, not a failed program');
    },
  );
});
