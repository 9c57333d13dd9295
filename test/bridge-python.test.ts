import { mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bridgeEnv, bridgePackageDir } from '../src/bridge/env.js';
import { PROTOCOL_VERSION, type BridgeRequest, type EnvironmentCheckResult, type EngineKind } from '../src/bridge/protocol.js';
import { BridgeFailure, runBridge, type RunBridgeOptions } from '../src/bridge/run.js';
import { DOUBLES_DIR, failure, PYTHON, REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const doubles = (knobs: Record<string, string> = {}) => ({ PYTHONPATH: DOUBLES_DIR, ...knobs });

/** The bridge's check_only request (schemas/bridge-protocol.schema.json): its import stage alone, answered with versions and capabilities. */
async function checkPython(opts: RunBridgeOptions & { engine?: EngineKind }): Promise<EnvironmentCheckResult> {
  const request: BridgeRequest = {
    protocol: PROTOCOL_VERSION,
    model: '',
    output: '',
    methods: null,
    budget_bytes: null,
    zero_copy_kv: false,
    allow_pickle: false,
    check_only: true,
    engine: opts.engine ?? 'tensorrt',
    reference: null,
  };
  const result = await runBridge(request, opts);
  if (result.mode !== 'check') throw new Error(`the import check answered with a ${result.mode} result`);
  return result;
}

describe('bridgeEnv', () => {
  it('puts only the bridge package on PYTHONPATH, whatever the inherited environment says', () => {
    const env = bridgeEnv({
      base: { PYTHONPATH: DOUBLES_DIR, PATH: '/usr/bin', PYTHONSTARTUP: '/x.py', PYTHONINSPECT: '1' },
      cwd: '/work',
    });
    expect(env.PYTHONPATH).toBe(bridgePackageDir());
    expect(env.PATH).toBe('/usr/bin');
    expect(env.PYTHONSTARTUP).toBeUndefined();
    expect(env.PYTHONINSPECT).toBeUndefined();
    expect(env.PYTHONSAFEPATH).toBe('1');
    expect(env.TRTX_BRIDGE_CWD).toBe('/work');
  });

  it('appends a caller-given PYTHONPATH after the package and applies other extras', () => {
    const env = bridgeEnv({ base: { KEEP: '1', DROP: '2' }, extra: { PYTHONPATH: `/a${delimiter}/b`, DROP: undefined, ADD: '3' } });
    expect(env.PYTHONPATH).toBe([bridgePackageDir(), '/a', '/b'].join(delimiter));
    expect(env).toMatchObject({ KEEP: '1', ADD: '3' });
    expect(env.DROP).toBeUndefined();
  });

  it('locates the package from the install location', () => {
    expect(bridgePackageDir()).toBe(join(REPO, 'python-bridge'));
  });
});

describe('checkPython (the import check)', () => {
  const saved = process.env.PYTHONPATH;
  afterEach(() => {
    if (saved === undefined) delete process.env.PYTHONPATH;
    else process.env.PYTHONPATH = saved;
  });

  it('reports versions and capabilities', async () => {
    const result = await checkPython({ python: PYTHON, env: doubles() });
    expect(result.versions.torch).toBe('2.99.0+trtx.double');
    expect(result.versions.torch_tensorrt).toBe('2.14.0a0+trtx.double');
    expect(result.versions.executorch).toBe('1.5.0+trtx.double');
    expect(result.capabilities).toEqual({
      zero_copy_kv: true,
      check_zero_copy_kv: true,
      weight_streaming_budget: true,
      upstream_inplace_lineage: true,
    });
  });

  it('reads capabilities off the installed API', async () => {
    const result = await checkPython({ python: PYTHON, env: doubles({ TRTX_DOUBLE_FEATURES: 'no_zero_copy,no_budget,no_lineage' }) });
    expect(result.capabilities).toEqual({
      zero_copy_kv: false,
      check_zero_copy_kv: false,
      weight_streaming_budget: false,
      upstream_inplace_lineage: false,
    });
  });

  it('names exactly the package to install when one is missing', async () => {
    const err = await failure(checkPython({ python: PYTHON, env: doubles({ TRTX_DOUBLE_MISSING: 'executorch' }) }));
    expect(err.code).toBe('BRIDGE_IMPORT_MISSING');
    expect(err.kind).toBe('usage');
    expect(err.message).toMatch(/cannot import executorch$/);
    expect(err.hint).toMatch(/^pip install executorch /);
    expect(err.hint).toMatch(/--python/);
  });

  it('names every missing package, in install order', async () => {
    const err = await failure(checkPython({ python: PYTHON, env: doubles({ TRTX_DOUBLE_MISSING: 'executorch,torch_tensorrt,torch' }) }));
    expect(err.code).toBe('BRIDGE_IMPORT_MISSING');
    expect(err.hint).toMatch(/^pip install torch torch-tensorrt executorch /);
  });

  it('points at --engine reference when only Torch-TensorRT is missing', async () => {
    const err = await failure(checkPython({ python: PYTHON, env: doubles({ TRTX_DOUBLE_MISSING: 'torch_tensorrt' }) }));
    expect(err.hint).toMatch(/^pip install torch-tensorrt /);
    expect(err.hint).toMatch(/--engine reference/);
  });

  it('checks only torch and executorch for the reference lowering, and never imports torch_tensorrt', async () => {
    const result = await checkPython({ python: PYTHON, engine: 'reference', env: doubles({ TRTX_DOUBLE_MISSING: 'torch_tensorrt' }) });
    expect(result.versions.torch).toBe('2.99.0+trtx.double');
    expect(result.versions.torch_tensorrt).toBeNull();
    expect(result.capabilities).toMatchObject({ zero_copy_kv: false, weight_streaming_budget: true });
    const err = await failure(checkPython({ python: PYTHON, engine: 'reference', env: doubles({ TRTX_DOUBLE_MISSING: 'executorch' }) }));
    expect(err.hint).toMatch(/^pip install executorch /);
    expect(err.hint).not.toMatch(/--engine reference/);
  });

  it('blames torch when torch_tensorrt is present but torch is not', async () => {
    const err = await failure(checkPython({ python: PYTHON, env: doubles({ TRTX_DOUBLE_MISSING: 'torch' }) }));
    expect(err.hint).toMatch(/^pip install torch /);
  });

  it('never finds the test doubles on its own', async () => {
    // The doubles on the inherited PYTHONPATH must not reach the bridge.
    process.env.PYTHONPATH = DOUBLES_DIR;
    try {
      const result = await checkPython({ python: PYTHON });
      expect(result.versions.torch).not.toMatch(/trtx\.double/);
    } catch (e) {
      expect((e as BridgeFailure).code).toBe('BRIDGE_IMPORT_MISSING');
    }
  });

  it('does not import from the folder trtx runs in', async () => {
    const cwd = tempDir('cwd');
    writeFileSync(join(cwd, 'torch.py'), 'raise SystemExit("shadowed torch imported from the working directory")\n');
    mkdirSync(join(cwd, 'trtx_bridge'));
    writeFileSync(join(cwd, 'trtx_bridge', '__main__.py'), 'raise SystemExit("shadowed bridge")\n');
    const result = await checkPython({ python: PYTHON, env: doubles(), cwd });
    expect(result.versions.torch).toBe('2.99.0+trtx.double');
  });

  it('says when the interpreter cannot be run', async () => {
    const err = await failure(checkPython({ python: '/nonexistent/bin/python3' }));
    expect(err.code).toBe('BRIDGE_PYTHON_NOT_FOUND');
    expect(err.kind).toBe('usage');
    expect(err.hint).toMatch(/--python/);
  });
});
