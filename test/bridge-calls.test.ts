// What the bridge asks of Torch-TensorRT and ExecuTorch, read from the call log
// the test doubles keep: the arguments (weight streaming, zero-copy KV,
// methods) and the order (copy-back ordering before to_executorch).

import { describe, expect, it } from 'vitest';
import type { BridgeEvent } from '../src/bridge/protocol.js';
import { runBridge } from '../src/bridge/run.js';
import {
  type Call,
  doubleEnv,
  exportRequest,
  failure,
  MODELS_DIR,
  PYTHON,
  readCalls,
  type Workspace,
  workspace,
} from './helpers/bridge.js';

const FACTORY = `${MODELS_DIR}/prefill_decode.py`;
const LINEAGE = 'executorch.exir.passes.insert_write_back_for_buffers_pass._inplace_lineage';

async function exportWith(ws: Workspace, over: Parameters<typeof exportRequest>[1] = {}, knobs: Record<string, string> = {}) {
  const events: BridgeEvent[] = [];
  const result = await runBridge(exportRequest(ws, over), { python: PYTHON, env: doubleEnv(ws, knobs), onEvent: (e) => events.push(e) });
  if (result.mode !== 'export') throw new Error('expected an export result');
  return { result: result, events, calls: readCalls(ws) };
}

const named = (calls: Call[], name: string) => calls.filter((c) => c.call === name);
const index = (calls: Call[], name: string) => calls.findIndex((c) => c.call === name);
const warnings = (events: BridgeEvent[]) => events.flatMap((e) => (e.event === 'warning' ? [e.code] : []));

describe('bridge calls: budget and zero-copy KV', () => {
  it('compiles for weight streaming, bakes the budget, and finalizes zero-copy with copy-backs first', async () => {
    const ws = workspace();
    const { result, events, calls } = await exportWith(ws, { budget_bytes: '8589934592', zero_copy_kv: true });

    expect(calls.map((c) => c.call).filter((c) => c !== LINEAGE)).toEqual([
      'torch.export.load',
      'torch_tensorrt.dynamo.compile',
      'torch_tensorrt.executorch.export',
      'torch_tensorrt.executorch.TensorRTPartitioner',
      'torch_tensorrt.executorch.zero_copy_backend_config',
      'executorch.exir.EdgeProgramManager.to_executorch',
      'torch_tensorrt.executorch.check_zero_copy_kv',
      'executorch.exir.ExecutorchProgramManager.write_to_file',
    ]);
    const [compile] = named(calls, 'torch_tensorrt.dynamo.compile');
    expect(compile.args).toMatchObject({
      exported_program: { program: 'archive:model.pt2' },
      arg_inputs: [{ tensor: [1, 4] }],
      enable_weight_streaming: true,
    });
    const [lower] = named(calls, 'torch_tensorrt.executorch.export');
    expect(lower.args).toMatchObject({
      source: { graph_module: 'trt:archive:model.pt2' },
      arg_inputs: [{ tensor: [1, 4] }],
      zero_copy_kv: true,
      weight_streaming_budget_per_engine: 8589934592,
      partitioners: null,
    });

    // The ordering pass ran on the Edge program before finalization: the
    // copy-back buffer is first when to_executorch sees the program, and
    // upstream's predicate was asked before that.
    const [finalize] = named(calls, 'executorch.exir.EdgeProgramManager.to_executorch');
    expect(finalize.args.mutation_order).toEqual({ forward: ['conv_state', 'k_cache', 'v_cache'] });
    expect(finalize.args.config).toMatchObject({ to_out_var_pass: 'unstage_aliased_buffers_pass' });
    const lineage = calls.map((c, i) => (c.call === LINEAGE ? i : -1)).filter((i) => i >= 0);
    expect(lineage.length).toBeGreaterThan(0);
    expect(Math.max(...lineage)).toBeLessThan(index(calls, 'executorch.exir.EdgeProgramManager.to_executorch'));

    const [method] = result.methods;
    expect(method.mutations).toEqual({ copy_back: ['conv_state'], in_place: ['k_cache', 'v_cache'], reordered: 3 });
    // With the order fixed, the finalized mutation map pairs every buffer with its own write.
    expect(method.signature.buffers_to_mutate).toEqual({ copy__default: 'conv_state', b_k_cache: 'k_cache', b_v_cache: 'v_cache' });
    expect(warnings(events)).toEqual([]);
    expect(result.zero_copy_kv).toBe(true);
    expect(result.zero_copy_kv_path).toBe('torch_tensorrt');
    expect(result.weight_streaming).toEqual({ budget_bytes: '8589934592', enabled_at_compile: true, budget_baked: true });
  });

  it('without a budget or zero-copy, compiles without streaming and leaves the staged order alone', async () => {
    const ws = workspace();
    const { result, calls } = await exportWith(ws);
    expect(named(calls, 'torch_tensorrt.dynamo.compile')[0].args.enable_weight_streaming).toBe(false);
    expect(named(calls, 'torch_tensorrt.executorch.export')[0].args).toMatchObject({
      zero_copy_kv: false,
      weight_streaming_budget_per_engine: null,
    });
    expect(result.zero_copy_kv_path).toBeNull();
    expect(named(calls, 'torch_tensorrt.executorch.zero_copy_backend_config')).toEqual([]);
    expect(named(calls, 'torch_tensorrt.executorch.check_zero_copy_kv')).toEqual([]);
    const [finalize] = named(calls, 'executorch.exir.EdgeProgramManager.to_executorch');
    expect(finalize.args.mutation_order).toEqual({ forward: ['k_cache', 'v_cache', 'conv_state'] });
    expect(finalize.args.config).toMatchObject({ to_out_var_pass: 'ToOutVarPass' });
    expect(result.methods[0].mutations).toEqual({ copy_back: ['k_cache', 'v_cache', 'conv_state'], in_place: [], reordered: 0 });
    expect(result.weight_streaming).toEqual({ budget_bytes: null, enabled_at_compile: false, budget_baked: false });
  });

  it('on a torch_tensorrt without zero-copy, exports staged for trtx to rewrite, and says which path ran', async () => {
    const ws = workspace();
    const { result, events, calls } = await exportWith(ws, { zero_copy_kv: true }, { TRTX_DOUBLE_FEATURES: 'no_zero_copy' });
    // The keyword is not in this export's signature: not passed, nothing zero-copy asked of Torch-TensorRT.
    expect(named(calls, 'torch_tensorrt.executorch.export')[0].args).toMatchObject({ zero_copy_kv: false });
    expect(named(calls, 'torch_tensorrt.executorch.zero_copy_backend_config')).toEqual([]);
    expect(named(calls, 'torch_tensorrt.executorch.check_zero_copy_kv')).toEqual([]);
    expect(named(calls, 'executorch.exir.EdgeProgramManager.to_executorch')[0].args.config).toMatchObject({
      to_out_var_pass: 'ToOutVarPass',
    });
    expect(warnings(events)).toEqual(['ZERO_COPY_STAGED']);
    expect(result).toMatchObject({ zero_copy_kv: true, zero_copy_kv_path: 'trtx' });
  });

  it('still builds for streaming when torch_tensorrt cannot bake the budget, and says so', async () => {
    const ws = workspace();
    const { result, events, calls } = await exportWith(ws, { budget_bytes: '1073741824' }, { TRTX_DOUBLE_FEATURES: 'no_budget' });
    expect(named(calls, 'torch_tensorrt.dynamo.compile')[0].args.enable_weight_streaming).toBe(true);
    expect(named(calls, 'torch_tensorrt.executorch.export')[0].args.weight_streaming_budget_per_engine).toBeNull();
    expect(warnings(events)).toEqual(['BUDGET_NOT_BAKED']);
    expect(result.weight_streaming).toEqual({ budget_bytes: '1073741824', enabled_at_compile: true, budget_baked: false });
  });

  it('warns when the zero-copy check is not available', async () => {
    const ws = workspace();
    const { events, calls } = await exportWith(ws, { zero_copy_kv: true }, { TRTX_DOUBLE_FEATURES: 'no_check' });
    expect(named(calls, 'torch_tensorrt.executorch.zero_copy_backend_config')).toHaveLength(1);
    expect(warnings(events)).toEqual(['ZERO_COPY_UNCHECKED']);
  });

  it('orders with its own predicate, and says so, when executorch hides _inplace_lineage', async () => {
    const ws = workspace();
    const { result, events, calls } = await exportWith(ws, { zero_copy_kv: true }, { TRTX_DOUBLE_FEATURES: 'no_lineage' });
    expect(warnings(events)).toEqual(['LINEAGE_FALLBACK']);
    expect(named(calls, LINEAGE)).toEqual([]);
    expect(named(calls, 'executorch.exir.EdgeProgramManager.to_executorch')[0].args.mutation_order).toEqual({
      forward: ['conv_state', 'k_cache', 'v_cache'],
    });
    expect(result.methods[0].signature.buffers_to_mutate).toEqual({
      copy__default: 'conv_state',
      b_k_cache: 'k_cache',
      b_v_cache: 'v_cache',
    });
  });
});

describe('bridge calls: methods', () => {
  it('exports every method of a factory as one mapping, each traced, compiled and exported', async () => {
    const ws = workspace();
    const { result, calls } = await exportWith(ws, { model: `${FACTORY}:make`, zero_copy_kv: true });
    expect(named(calls, 'torch.export.export').map((c) => c.args.args)).toEqual([
      [{ tensor: [1, 8], dtype: 'float32', device: 'cpu' }],
      [{ tensor: [1, 1], dtype: 'float32', device: 'cpu' }],
    ]);
    const compiles = named(calls, 'torch_tensorrt.dynamo.compile');
    expect(compiles.map((c) => c.args.options)).toEqual([{}, { min_block_size: 1 }]);
    const programs = named(calls, 'torch_tensorrt.dynamo.export');
    expect(programs.map((c) => c.args.use_legacy_exporter)).toEqual([true, true]);
    // The example inputs go to the current CUDA device first, as export() does for a GraphModule.
    expect(programs.map((c) => c.args.arg_inputs)).toEqual([
      [{ tensor: [1, 8], dtype: 'float32', device: 'cuda:0' }],
      [{ tensor: [1, 1], dtype: 'float32', device: 'cuda:0' }],
    ]);
    const [lower] = named(calls, 'torch_tensorrt.executorch.export');
    expect(Object.keys(lower.args.source as object)).toEqual(['prefill', 'decode']);
    expect(lower.args.arg_inputs).toBeNull();
    expect(named(calls, 'executorch.exir.EdgeProgramManager.to_executorch')[0].args.mutation_order).toEqual({
      decode: ['conv_state', 'k_cache', 'v_cache'],
      prefill: ['conv_state', 'k_cache', 'v_cache'],
    });
    expect(result.methods.map((m) => m.name)).toEqual(['prefill', 'decode']);
    expect(named(calls, 'torch_tensorrt.executorch.check_zero_copy_kv')[0].args.methods).toEqual(['decode', 'prefill']);
  });

  it('exports only the methods asked for, in the order asked', async () => {
    const ws = workspace();
    const { result, calls } = await exportWith(ws, { model: `${FACTORY}:make`, methods: ['decode'] });
    expect(named(calls, 'torch_tensorrt.dynamo.compile')).toHaveLength(1);
    expect(Object.keys(named(calls, 'torch_tensorrt.executorch.export')[0].args.source as object)).toEqual(['decode']);
    expect(result.methods.map((m) => m.name)).toEqual(['decode']);
  });

  it('names the single method of an archive', async () => {
    const ws = workspace();
    const { result, calls } = await exportWith(ws, { methods: ['decode'] });
    expect(Object.keys(named(calls, 'torch_tensorrt.executorch.export')[0].args.source as object)).toEqual(['decode']);
    expect(result.methods.map((m) => m.name)).toEqual(['decode']);
  });

  it('takes a factory returning (module, example_inputs)', async () => {
    const ws = workspace();
    const { result, calls } = await exportWith(ws, { model: `${FACTORY}:single` });
    expect(named(calls, 'torch.export.export')[0].args).toMatchObject({ mod: { module: 'Step' }, args: [{ tensor: [2, 3] }] });
    expect(named(calls, 'torch_tensorrt.executorch.export')[0].args.source).toEqual({ graph_module: 'trt:traced:Step' });
    expect(result.methods.map((m) => m.name)).toEqual(['forward']);
  });

  it('refuses method names the model does not have', async () => {
    const ws = workspace();
    const run = (over: Parameters<typeof exportRequest>[1]) =>
      failure(runBridge(exportRequest(ws, over), { python: PYTHON, env: doubleEnv(ws) }));
    const unknown = await run({ model: `${FACTORY}:make`, methods: ['prefill', 'verify'] });
    expect(unknown.code).toBe('BRIDGE_METHOD');
    expect(unknown.message).toBe('no method verify in the model (it has prefill, decode)');
    const two = await run({ methods: ['prefill', 'decode'] });
    expect(two.code).toBe('BRIDGE_METHOD');
    expect(two.hint).toMatch(/factory returning \{'methods'/);
    expect(named(readCalls(ws), 'torch_tensorrt.dynamo.compile')).toEqual([]);
  });

  it('explains a factory that breaks its contract', async () => {
    const ws = workspace();
    const run = (model: string) => failure(runBridge(exportRequest(ws, { model }), { python: PYTHON, env: doubleEnv(ws) }));
    const broken = await run(`${FACTORY}:broken`);
    expect(broken.code).toBe('BRIDGE_FACTORY');
    expect(broken.message).toBe('broken() raised ValueError: factory fixture failed on purpose');
    expect(broken.stderrTail).toContain('Traceback');
    expect((await run(`${FACTORY}:bare`)).code).toBe('BRIDGE_MODEL_NO_INPUTS');
    const reserved = await run(`${FACTORY}:reserved`);
    expect(reserved.code).toBe('BRIDGE_FACTORY');
    expect(reserved.message).toMatch(/may not set arg_inputs/);
    const absent = await run(`${FACTORY}:nothing_here`);
    expect(absent.message).toMatch(/has no nothing_here/);
    const unnamed = await run(FACTORY);
    expect(unnamed.code).toBe('BRIDGE_FACTORY');
    expect(unnamed.hint).toMatch(/prefill_decode\.py:make_model/);
  });
});
