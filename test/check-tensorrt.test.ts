// The TensorRT delegate checks: compile specs, DelegateCall arity against the
// blob's io_bindings, argument dtype/shape, target_device against the device
// tags and arenas, and the multi-engine budget total.
import { describe, expect, it } from 'vitest';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { cacheFqns, kvDecoder } from '../src/examples/kv-decoder.js';
import { multiEngine, trtBesideCuda, trtSingle } from '../src/examples/programs.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { runChecks } from '../src/checks/run.js';
import { checkTensorRT, dtypeScalarType, shapeAgrees, TENSORRT_CODES } from '../src/checks/tensorrt.js';
import { buildCheckContext } from '../src/checks/context.js';
import { DeviceType, ScalarType, type ExecutionPlan, type Program } from '../src/pte/model.js';
import { encodeTargetDevice } from '../src/tensorrt/compile-specs.js';
import { pteOf } from './helpers/memory-pte.js';

async function trtFindings(spec: ProgramSpec, edit?: (p: Program) => void) {
  const pte = pteOf(spec, edit);
  const { ctx, blobDiagnostics } = await buildCheckContext(pte);
  expect(blobDiagnostics).toEqual([]);
  return checkTensorRT(ctx);
}

const forward = (p: Program): ExecutionPlan => p.executionPlan[0];
const delegateCall = (plan: ExecutionPlan, delegate = 0) => {
  for (const c of plan.chains) for (const i of c.instructions) if (i.type === 'DelegateCall' && i.delegateIndex === delegate) return i;
  throw new Error('no call');
};
const tensorOfArg = (plan: ExecutionPlan, k: number, delegate = 0) => {
  const v = plan.values[delegateCall(plan, delegate).args[k]];
  if (v.type !== 'Tensor') throw new Error('not a tensor');
  return v.tensor;
};

describe('sound TensorRT programs', () => {
  it.each([
    ['trt-single', () => trtSingle()],
    ['trt-beside-cuda', () => trtBesideCuda()],
    ['kv staged', () => kvDecoder({ mode: 'staged' })],
    ['kv zero-copy', () => kvDecoder({ mode: 'zero-copy' })],
    ['kv zero-copy, two engines', () => kvDecoder({ mode: 'zero-copy', kvEngines: 2 })],
    ['kv staged, two GPUs', () => kvDecoder({ mode: 'staged', kvEngines: 2, devices: [0, 1] })],
    ['kv zero-copy, two GPUs', () => kvDecoder({ mode: 'zero-copy', kvEngines: 2, devices: [0, 1] })],
  ])('%s: no findings', async (_n, spec) => {
    expect(await trtFindings(spec())).toEqual([]);
  });
});

describe('TRT_ARITY', () => {
  it('refuses a staged call with one argument missing, naming the delegate and both counts', async () => {
    const found = await trtFindings(trtSingle(), (p) => delegateCall(forward(p)).args.pop());
    expect(found.map((d) => d.code)).toEqual(['TRT_ARITY']);
    expect(found[0].message).toContain('delegate 0 (TensorRTBackend) has 1 arguments');
    expect(found[0].message).toContain('want 2 (1 inputs + 1 outputs)');
    expect(found[0].location).toBe('forward > delegate 0 (TensorRTBackend) > chain 0 instruction 1');
    expect(found[0].delegate).toBe(0);
  });

  it('refuses one argument too many', async () => {
    const found = await trtFindings(trtSingle(), (p) => {
      const call = delegateCall(forward(p));
      call.args.push(call.args[0]);
    });
    expect(found.map((d) => d.code)).toEqual(['TRT_ARITY']);
  });

  it('accepts both staged and zero-copy arity on an aliased engine, and nothing between', async () => {
    const staged = await trtFindings(kvDecoder({ mode: 'staged', methods: ['decode'] }));
    const zero = await trtFindings(kvDecoder({ mode: 'zero-copy', methods: ['decode'] }));
    expect([...staged, ...zero]).toEqual([]);
    // Partial elision: one cache left staged on the stamped delegate.
    const partial = await trtFindings(kvDecoder({ mode: 'zero-copy', methods: ['decode'], stagedCaches: [cacheFqns(2)[3]] }));
    expect(partial.map((d) => d.code)).toContain('TRT_ARITY');
    const msg = partial.find((d) => d.code === 'TRT_ARITY')!.message;
    expect(msg).toMatch(
      /has 8 arguments; its io_bindings want 11 \(staged: 6 inputs \+ 5 outputs\) or 7 \(zero-copy: minus 4 aliased outputs\)/,
    );
  });
});

describe('argument checks', () => {
  it('TRT_ARG_NOT_TENSOR: an Int where a binding wants a tensor', async () => {
    const found = await trtFindings(trtSingle(), (p) => {
      const plan = forward(p);
      plan.values.push({ type: 'Int', intVal: 1n });
      delegateCall(plan).args[0] = plan.values.length - 1;
    });
    expect(found.map((d) => d.code)).toEqual(['TRT_ARG_NOT_TENSOR']);
    expect(found[0].location).toBe('forward > delegate 0 (TensorRTBackend) > binding x');
  });

  it('TRT_ARG_DTYPE: a float16 tensor for a float32 binding', async () => {
    const found = await trtFindings(trtSingle({ typedBindings: true }), (p) => (tensorOfArg(forward(p), 1).scalarType = ScalarType.HALF));
    expect(found.map((d) => d.code)).toEqual(['TRT_ARG_DTYPE']);
    expect(found[0].location).toBe('forward > delegate 0 (TensorRTBackend) > binding output0');
    expect(found[0].message).toContain('is half; the binding is float32');
  });

  it('TRT_ARG_SHAPE: another shape, and another rank', async () => {
    const narrower = await trtFindings(trtSingle({ typedBindings: true }), (p) => (tensorOfArg(forward(p), 0).sizes = [1, 8]));
    expect(narrower.map((d) => d.code)).toEqual(['TRT_ARG_SHAPE']);
    expect(narrower[0].message).toContain('has shape [1, 8]; the binding is [1, 16]');
    const rank = await trtFindings(trtSingle({ typedBindings: true }), (p) => (tensorOfArg(forward(p), 0).sizes = [16]));
    expect(rank.map((d) => d.code)).toEqual(['TRT_ARG_SHAPE']);
  });

  it('a dynamic (-1) binding dimension accepts any size', async () => {
    const spec = trtSingle({ typedBindings: true });
    const d = spec.methods[0].delegates[0];
    if (d.blob.kind !== 'tensorrt') throw new Error('expected a TensorRT blob');
    for (const b of d.blob.metadata.io_bindings) b.shape = [-1, 16];
    expect(await trtFindings(spec)).toEqual([]);
    expect(shapeAgrees([-1, 16], [7, 16])).toBe(true);
    expect(shapeAgrees([-1, 16], [7, 15])).toBe(false);
  });

  it('TRT_BINDING_DTYPE_UNKNOWN: a dtype string trtx cannot compare is a warning', async () => {
    const spec = trtSingle({ typedBindings: true });
    const d = spec.methods[0].delegates[0];
    if (d.blob.kind !== 'tensorrt') throw new Error('expected a TensorRT blob');
    d.blob.metadata.io_bindings[0].dtype = 'complex32';
    const found = await trtFindings(spec);
    expect(found.map((f) => [f.code, f.severity])).toEqual([['TRT_BINDING_DTYPE_UNKNOWN', 'warning']]);
  });

  it('names-only bindings (as the real export writes them) are not compared, whatever the tensors hold', async () => {
    const found = await trtFindings(trtSingle(), (p) => {
      tensorOfArg(forward(p), 0).sizes = [3, 5, 7];
      tensorOfArg(forward(p), 1).scalarType = ScalarType.HALF;
    });
    expect(found).toEqual([]);
  });

  it('a recorded dtype with no recorded shape checks the dtype only, and the reverse', async () => {
    const dtypeOnly = trtSingle({ typedBindings: true });
    const shapeOnly = trtSingle({ typedBindings: true });
    for (const [spec, field] of [
      [dtypeOnly, 'shape'],
      [shapeOnly, 'dtype'],
    ] as const) {
      const d = spec.methods[0].delegates[0];
      if (d.blob.kind !== 'tensorrt') throw new Error('expected a TensorRT blob');
      for (const b of d.blob.metadata.io_bindings)
        if (field === 'shape') b.shape = [];
        else b.dtype = '';
    }
    const bad = (p: Program) => {
      tensorOfArg(forward(p), 0).sizes = [1, 8];
      tensorOfArg(forward(p), 1).scalarType = ScalarType.HALF;
    };
    expect((await trtFindings(dtypeOnly, bad)).map((d) => d.code)).toEqual(['TRT_ARG_DTYPE']);
    expect((await trtFindings(shapeOnly, bad)).map((d) => d.code)).toEqual(['TRT_ARG_SHAPE']);
  });

  it('reads dtype strings with or without the torch. prefix', () => {
    expect(dtypeScalarType('float32')).toBe(ScalarType.FLOAT);
    expect(dtypeScalarType('torch.bfloat16')).toBe(ScalarType.BFLOAT16);
    expect(dtypeScalarType('toString')).toBeNull();
  });

  it('binds zero-copy arguments to the outputs that are left, not to the elided ones', async () => {
    // The first kept output of a zero-copy KV delegate is the logits; were it
    // bound to output0 (a cache), its shape would disagree.
    expect(await trtFindings(kvDecoder({ mode: 'zero-copy', methods: ['decode'] }))).toEqual([]);
  });
});

describe('TRT_DEVICE_MISMATCH', () => {
  it('a tensor tagged for another CUDA device than target_device', async () => {
    const found = await trtFindings(trtSingle(), (p) => (tensorOfArg(forward(p), 0).extraTensorInfo!.deviceIndex = 1));
    expect(found.map((d) => d.code)).toEqual(['TRT_DEVICE_MISMATCH']);
    expect(found[0].message).toContain('is on cuda:1 (its device tag)');
  });

  it("a tensor planned in another device's arena", async () => {
    const found = await trtFindings(trtSingle(), (p) => (forward(p).nonConstBufferDevice[0].deviceIndex = 2));
    expect(found.every((d) => d.code === 'TRT_DEVICE_MISMATCH')).toBe(true);
    expect(found.map((d) => d.message).join('\n')).toContain('is on cuda:2 (its arena 2)');
  });

  it('target_device itself moved: every tagged argument disagrees, and so does the blob', async () => {
    const found = await trtFindings(trtSingle(), (p) => {
      const spec = forward(p).delegates[0].compileSpecs.find((s) => s.key === 'target_device')!;
      spec.value = encodeTargetDevice(3);
    });
    expect(found.filter((d) => d.code === 'TRT_DEVICE_MISMATCH').length).toBeGreaterThanOrEqual(2);
    expect(new Set(found.map((d) => d.code))).toEqual(new Set(['TRT_DEVICE_MISMATCH', 'TRT_DEVICE_ID_MISMATCH']));
  });

  it('a cpu target_device with tensors on the GPU: every device claim disagrees', async () => {
    const found = await trtFindings(trtSingle(), (p) => {
      const spec = forward(p).delegates[0].compileSpecs.find((s) => s.key === 'target_device')!;
      spec.value = new TextEncoder().encode('cpu');
    });
    const mismatches = found.filter((d) => d.code === 'TRT_DEVICE_MISMATCH');
    expect(mismatches.length).toBeGreaterThanOrEqual(2);
    expect(mismatches[0].message).toContain('target_device is cpu:0');
  });

  it('host tensors are not a mismatch (a program without device planning)', async () => {
    const found = await trtFindings(trtSingle(), (p) => {
      const plan = forward(p);
      plan.nonConstBufferDevice = [];
      for (const v of plan.values)
        if (v.type === 'Tensor' && v.tensor.extraTensorInfo) v.tensor.extraTensorInfo.deviceType = DeviceType.CPU;
    });
    expect(found).toEqual([]);
  });
});

describe('TRT_DEVICE_ID_MISMATCH', () => {
  const twoGpu = () => kvDecoder({ mode: 'zero-copy', kvEngines: 2, devices: [0, 1], methods: ['decode'] });

  it("the two devices' ids swapped in one blob of the two-GPU program", async () => {
    // Only the blob changes: target_device and every tensor still say cuda:0,
    // so no tensor disagrees with the target; the engine's device does.
    const found = await trtFindings(catalogueEntry('broken-two-gpu-device-id-swapped.pte').build());
    expect(found.map((d) => d.code)).toEqual(['TRT_DEVICE_ID_MISMATCH']);
    expect(found[0]).toMatchObject({ severity: 'error', method: 'decode', delegate: 0 });
    expect(found[0].location).toMatch(/^decode > delegate 0 \(TensorRTBackend\).* > metadata\.device_id$/);
    expect(found[0].message).toBe(
      "the blob's device_id is 1 but target_device is cuda:0: ExecuTorch plans the delegate's tensors on cuda:0, Torch-TensorRT runs the engine on device 1",
    );
  });

  it('both blobs swapped: each engine is refused', async () => {
    const spec = twoGpu();
    const [a, b] = spec.methods[0].delegates;
    if (a.blob.kind !== 'tensorrt' || b.blob.kind !== 'tensorrt') throw new Error('not TensorRT');
    [a.blob.metadata.device_id, b.blob.metadata.device_id] = [b.blob.metadata.device_id, a.blob.metadata.device_id];
    const found = await trtFindings(spec);
    expect(found.map((d) => [d.code, d.delegate])).toEqual([
      ['TRT_DEVICE_ID_MISMATCH', 0],
      ['TRT_DEVICE_ID_MISMATCH', 1],
    ]);
  });

  it('agreeing ids on two devices, and a cpu target, are not findings', async () => {
    expect(await trtFindings(twoGpu())).toEqual([]);
    const found = await trtFindings(trtSingle(), (p) => {
      const plan = forward(p);
      plan.delegates[0].compileSpecs.find((s) => s.key === 'target_device')!.value = new TextEncoder().encode('cpu');
    });
    expect(found.map((d) => d.code)).not.toContain('TRT_DEVICE_ID_MISMATCH');
  });

  it('trtx check refuses the broken catalogue program (exit 1)', async () => {
    const { summary, diagnostics } = await runChecks(pteOf(catalogueEntry('broken-two-gpu-device-id-swapped.pte').build()));
    expect(summary.errors).toBe(1);
    expect(diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual(['TRT_DEVICE_ID_MISMATCH']);
  });
});

describe('compile specs', () => {
  it.each([
    ['SPEC_BUDGET_INVALID', 'weight_streaming_budget', 'abc'],
    ['SPEC_TARGET_DEVICE_INVALID', 'target_device', 'gpu0'],
    ['SPEC_ZERO_COPY_KV_INVALID', 'zero_copy_kv', '[]'],
  ])('%s is reported with its method and delegate', async (code, key, value) => {
    const found = await trtFindings(trtSingle(), (p) => {
      const d = forward(p).delegates[0];
      d.compileSpecs = [...d.compileSpecs.filter((s) => s.key !== key), { key, value: new TextEncoder().encode(value) }];
    });
    const f = found.find((d) => d.code === code)!;
    expect(f).toBeDefined();
    expect([f.method, f.delegate, f.severity]).toEqual(['forward', 0, 'error']);
    expect(f.location).toMatch(new RegExp(`^forward > delegate 0 \\(TensorRTBackend\\) > compile_specs\\[\\d\\] \\(${key}\\)$`));
  });

  it('SPEC_BUDGET_DUPLICATE: a budget carried twice is an error (Torch-TensorRT refuses it at init)', async () => {
    const found = await trtFindings(multiEngine(3), (p) => {
      const d = forward(p).delegates[1];
      d.compileSpecs.push({ ...d.compileSpecs.find((s) => s.key === 'weight_streaming_budget')! });
    });
    expect(found.map((d) => [d.code, d.delegate, d.severity])).toContainEqual(['SPEC_BUDGET_DUPLICATE', 1, 'error']);
  });

  it('SPEC_DUPLICATE_KEY and the spelling warnings reach the check as warnings, not errors', async () => {
    const found = await trtFindings(trtSingle(), (p) => {
      const d = forward(p).delegates[0];
      d.compileSpecs = [
        { key: 'target_device', value: new TextEncoder().encode(' CUDA:0') },
        { key: 'target_device', value: new TextEncoder().encode('cuda:0') },
        { key: 'weight_streaming_budget', value: new TextEncoder().encode('-0') },
      ];
    });
    expect(found.map((d) => [d.code, d.severity]).sort()).toEqual([
      ['SPEC_BUDGET_FORM', 'warning'],
      ['SPEC_DUPLICATE_KEY', 'warning'],
      ['SPEC_TARGET_DEVICE_FORM', 'warning'],
    ]);
  });

  it("leaves another backend's specs alone (CudaBackend has its own target_device)", async () => {
    const found = await trtFindings(trtBesideCuda(), (p) => {
      const cuda = forward(p).delegates.find((d) => d.id === 'CudaBackend')!;
      cuda.compileSpecs.push({ key: 'weight_streaming_budget', value: new TextEncoder().encode('not a number') });
    });
    expect(found).toEqual([]);
  });
});

describe('TRT_BUDGET_MULTI_ENGINE', () => {
  it('warns with the total when more than one engine carries a budget', async () => {
    const found = await trtFindings(multiEngine(3, { budget: 8n << 30n }));
    expect(found.map((d) => [d.code, d.severity, d.method, d.location])).toEqual([['TRT_BUDGET_MULTI_ENGINE', 'warning', null, 'program']]);
    expect(found[0].message).toContain('3 engines x 8 GiB = 24 GiB may be resident');
  });

  it('adds different budgets term by term', async () => {
    const found = await trtFindings(multiEngine(3, { budget: 8n << 30n }), (p) => {
      forward(p).delegates[2].compileSpecs.find((s) => s.key === 'weight_streaming_budget')!.value = new TextEncoder().encode(
        String(4n << 30n),
      );
    });
    expect(found[0].message).toContain('3 engines, 8 GiB + 8 GiB + 4 GiB = 20 GiB may be resident');
  });

  it('says when the total needs several methods loaded', async () => {
    const found = await trtFindings(kvDecoder({ mode: 'staged', budget: 1n << 30n }));
    expect(found[0].message).toContain('2 engines x 1 GiB = 2 GiB may be resident when all 2 methods are loaded');
  });

  it('is silent with one budget, or none', async () => {
    expect(await trtFindings(multiEngine(3, { budget: null }))).toEqual([]);
    const one = await trtFindings(multiEngine(3, { budget: null }), (p) =>
      forward(p).delegates[0].compileSpecs.push({ key: 'weight_streaming_budget', value: new TextEncoder().encode('1024') }),
    );
    expect(one).toEqual([]);
  });
});

describe('blob refusals reach the report', () => {
  it('a corrupt blob is an error with its method and delegate, and its delegate is not checked further', async () => {
    const spec = trtSingle();
    spec.methods[0].delegates[0].blob = { kind: 'bytes', bytes: new TextEncoder().encode('XX01' + ' '.repeat(60)) };
    const { diagnostics } = await runChecks(pteOf(spec));
    expect(diagnostics.map((d) => [d.code, d.method, d.delegate])).toEqual([['TRT_BLOB_MAGIC', 'forward', 0]]);
  });
});

it('every TensorRT code has a test above', () => {
  // Kept in step with the HINTS table; a new code needs a case.
  expect(new Set(TENSORRT_CODES)).toEqual(
    new Set([
      'TRT_ARITY',
      'TRT_ARG_NOT_TENSOR',
      'TRT_ARG_DTYPE',
      'TRT_ARG_SHAPE',
      'TRT_BINDING_DTYPE_UNKNOWN',
      'TRT_DEVICE_MISMATCH',
      'TRT_DEVICE_ID_MISMATCH',
      'TRT_BUDGET_MULTI_ENGINE',
      // test/standin-program.test.ts
      'TRT_REFERENCE_PROGRAM_ARITY',
      // test/standin-engine-v3.test.ts (and reference-program.test.ts)
      'TRT_REFERENCE_EXTERNAL_WEIGHT',
      // test/shared-segment.test.ts
      'TRT_SHARED_SEGMENT',
      'TRT_METADATA_FILE_LIMIT',
      'TRT_REFERENCE_PROGRAM_DELEGATED',
      'TRT_BUDGET_STREAMS_NOTHING',
    ]),
  );
});
