import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { copyBack, d2h, h2d, outVariant } from '../src/examples/ops.js';
import { freezePlan, planMethod } from '../src/examples/plan.js';
import type { MethodSpec, ProgramSpec } from '../src/examples/spec.js';
import { trtDelegate } from '../src/examples/trt.js';
import { DataLocation, DeviceType, ScalarType, memoryOffset } from '../src/pte/model.js';
import { openPte } from '../src/pte/open.js';
import { parseBlob, engineBytes } from '../src/tensorrt/blob.js';
import { decodeEngine } from '../src/tensorrt/standin-engine.js';
import { flatcDecode } from './helpers/flatc.js';
import { viewMethod } from './helpers/fixture-view.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('builder');

// One method in a few lines: the shape the builder exists for.
function smallSpec(): ProgramSpec {
  return {
    methods: [
      {
        name: 'forward',
        arenas: [{ device: 'cpu' }, { device: 'cuda:1' }],
        tensors: [
          { name: 'state', dtype: 'float16', shape: [2, 3], arena: 1, fqn: 'state', initialState: new Uint8Array(12).fill(7) },
          { name: 'x', dtype: 'float32', shape: [1, 5], arena: 1 },
          { name: 'x@cuda', dtype: 'float32', shape: [1, 5], arena: 2, device: 'cuda:1' },
          { name: 'y@cuda', dtype: 'float32', shape: [1, 5], arena: 2, device: 'cuda:1' },
          { name: 'y', dtype: 'float32', shape: [1, 5], arena: 1, offset: 1024 },
          { name: 'w', dtype: 'float32', shape: [5], data: new Uint8Array(20).fill(3) },
          { name: 'z', dtype: 'float32', shape: [1, 5], arena: 1 },
          { name: 'state_new', dtype: 'float16', shape: [2, 3], arena: 1 },
        ],
        inputs: ['x'],
        outputs: ['z'],
        instructions: [
          h2d('x', 'x@cuda'),
          { delegate: 'trt', args: ['x@cuda', 'y@cuda'] },
          d2h('y@cuda', 'y'),
          outVariant('aten::add', 'out', ['y', 'w'], [{ int: 1 }], 'z'),
          copyBack('state', 'state_new'),
        ],
        delegates: [
          trtDelegate({
            name: 'trt',
            deviceIndex: 1,
            inputs: [{ name: 'x', dtype: 'float32', shape: [1, 5] }],
            outputs: [{ name: 'output0', dtype: 'float32', shape: [1, 5] }],
            engine: { steps: [{ op: 'Affine', input: 0, output: 1, scale: 2 }] },
            location: 'INLINE',
          }),
        ],
      },
    ],
    namedData: [{ key: 'blob', bytes: new Uint8Array([1, 2, 3]) }],
  };
}

describe('fixture builder', () => {
  const built = buildProgram(smallSpec());
  const plan = built.program.executionPlan[0];
  const idx = built.index.get('forward')!;
  const tensor = (n: string) => {
    const v = plan.values[idx.values.get(n)!];
    if (v.type !== 'Tensor') throw new Error('not a tensor');
    return v.tensor;
  };

  it('auto-plans 64-aligned without overlap, after pinned tensors, and keeps pinned offsets', () => {
    const off = (n: string) => memoryOffset(tensor(n).allocationInfo!);
    expect(off('y')).toBe(1024n);
    // Arena 1: pinned y [1024, 1044), then state, x, z, state_new after it.
    expect([off('state'), off('x'), off('z'), off('state_new')]).toEqual([1088n, 1152n, 1216n, 1280n]);
    expect([off('x@cuda'), off('y@cuda')]).toEqual([0n, 64n]);
    for (const n of ['state', 'x', 'z', 'state_new', 'x@cuda', 'y@cuda']) expect(off(n) % 64n).toBe(0n);
  });

  it('reserves arena 0 and lists only non-CPU arenas as devices, by arena index', () => {
    expect(plan.nonConstBufferSizes).toEqual([0n, 1344n, 128n]);
    expect(plan.nonConstBufferDevice).toEqual([{ bufferIdx: 2, deviceType: DeviceType.CUDA, deviceIndex: 1 }]);
  });

  it('writes device tags and names in extra_tensor_info, and none on a plain CPU tensor', () => {
    expect(tensor('x').extraTensorInfo).toBeNull();
    expect(tensor('x@cuda').extraTensorInfo).toMatchObject({ deviceType: DeviceType.CUDA, deviceIndex: 1, fullyQualifiedName: null });
    expect(tensor('state').extraTensorInfo).toMatchObject({ deviceType: DeviceType.CPU, fullyQualifiedName: 'state' });
    expect(tensor('state').scalarType).toBe(ScalarType.HALF);
    expect(tensor('x').dimOrder).toEqual([0, 1]);
  });

  it('follows the emitter: operators by first use, "" for default, literals as values', () => {
    const v = viewMethod(built, 'forward');
    expect(v.operators).toEqual(['et_copy::_h2d_copy.out', 'et_copy::_d2h_copy.out', 'aten::add.out', 'aten::copy_.']);
    expect(v.instructions).toEqual([
      'et_copy::_h2d_copy.out(x, x@cuda, x@cuda)',
      'delegate trt(x@cuda, y@cuda)',
      'et_copy::_d2h_copy.out(y@cuda, y, y)',
      'aten::add.out(y, w, 1, z, z)',
      'aten::copy_.(state, state_new, false, state)',
    ]);
    expect(plan.values.slice(idx.names.length - 2).map((x) => x.type)).toEqual(['Int', 'Bool']);
    expect(v.inputs).toEqual(['x']);
    expect(v.outputs).toEqual(['z']);
  });

  it('puts constants and initial state in segments with a reserved entry 0', () => {
    const p = built.program;
    expect(tensor('w').allocationInfo).toBeNull();
    expect(tensor('w').dataBufferIdx).toBe(1);
    expect(p.constantSegment!.offsets).toEqual([0n, 0n]);
    expect(built.segments[p.constantSegment!.segmentIndex]).toEqual({ kind: 'bytes', bytes: new Uint8Array(20).fill(3) });
    expect(tensor('state').dataBufferIdx).toBe(1);
    expect(p.mutableDataSegments[0].offsets).toEqual([0n, 0n]);
    expect(p.namedData).toEqual([{ key: 'blob', segmentIndex: 2 }]);
  });

  it('writes an INLINE delegate into backend_delegate_data, with the TensorRT blob around a reference engine', () => {
    const d = plan.delegates[0];
    expect(d.processed).toEqual({ location: DataLocation.INLINE, index: 0 });
    const blob = built.program.backendDelegateData[0].data;
    const parsed = parseBlob(blob);
    expect(parsed.magic).toBe('TR01');
    expect(parsed.metadata.device_id).toBe(1);
    expect(decodeEngine(engineBytes(blob, parsed)).steps).toEqual([{ op: 'Affine', input: 0, output: 1, scale: 2, bias: 0 }]);
    expect(d.compileSpecs.map((c) => [c.key, new TextDecoder().decode(c.value)])).toEqual([['target_device', 'cuda:1']]);
  });

  it('writes a file that trtx and flatc both decode to the same program', async () => {
    const path = join(dir, 'small.pte');
    const r = await writeFixture(path, smallSpec());
    const pte = await openPte(path);
    try {
      expect(pte.program.executionPlan[0].values.length).toBe(plan.values.length);
      expect(pte.segments.every((s) => s.offset % 4096 === 0)).toBe(true);
      const j = flatcDecode(pte.programBytes) as { execution_plan: { non_const_buffer_device: unknown[]; values: unknown[] }[] };
      expect(j.execution_plan[0].values.length).toBe(plan.values.length);
      expect(j.execution_plan[0].non_const_buffer_device).toEqual([{ buffer_idx: 2, device_type: 'CUDA', device_index: 1 }]);
      expect(r.fileSize).toBe(pte.fileSize);
    } finally {
      await pte.close();
    }
  });

  it('leaves non_const_buffer_device out of a CPU-only plan', () => {
    const spec = smallSpec();
    const m = spec.methods[0];
    m.arenas = [{ device: 'cpu' }];
    m.tensors = m.tensors.map((t) => (t.arena === 2 ? { ...t, arena: 1 } : t));
    const p = buildProgram(spec).program.executionPlan[0];
    expect(p.nonConstBufferDevice).toEqual([]);
    expect(p.$absent).toContain('nonConstBufferDevice');
  });
});

describe('pinned overlaps and frozen plans', () => {
  const m: MethodSpec = {
    name: 'm',
    arenas: [{ device: 'cuda:0' }],
    tensors: [
      { name: 'a', dtype: 'float32', shape: [100], arena: 1 },
      { name: 'b', dtype: 'float32', shape: [10], arena: 1 },
      { name: 'c', dtype: 'float32', shape: [4], arena: 1, offset: { sameAs: 'b', plus: 8 } },
    ],
    inputs: [],
    outputs: [],
    instructions: [],
    delegates: [],
  };

  it('overlaps on purpose only where the spec says so', () => {
    const p = planMethod(m);
    expect(p.offsets.get('a')).toBe(0n);
    expect(p.offsets.get('b')).toBe(448n);
    expect(p.offsets.get('c')).toBe(456n);
    expect(p.arenaSizes).toEqual([512n]);
  });

  it('freezePlan pins every offset and size so moving one tensor moves nothing else', () => {
    const frozen = freezePlan(m);
    const moved = { ...frozen, tensors: frozen.tensors.map((t) => (t.name === 'a' ? { ...t, offset: 448 } : t)) };
    const p = planMethod(moved);
    expect(p.offsets.get('b')).toBe(448n);
    expect(p.offsets.get('a')).toBe(448n);
    expect(p.arenaSizes).toEqual([512n]);
  });
});

describe('spec mistakes are refused', () => {
  const base = () => smallSpec();
  it.each([
    ['an unknown tensor', (s: ProgramSpec) => s.methods[0].instructions.push(h2d('nope', 'x@cuda')), /not a tensor of the method/],
    ['arena 0', (s: ProgramSpec) => (s.methods[0].tensors[1].arena = 0), /arena 0 is reserved/],
    ['an unknown delegate', (s: ProgramSpec) => s.methods[0].instructions.push({ delegate: 'other', args: [] }), /does not declare/],
    ['a duplicate tensor', (s: ProgramSpec) => s.methods[0].tensors.push({ name: 'x', dtype: 'float32', shape: [1] }), /declared twice/],
    ['constant data of the wrong size', (s: ProgramSpec) => (s.methods[0].tensors[5].data = new Uint8Array(3)), /expected 20/],
  ])('%s', (_, mutate, message) => {
    const s = base();
    mutate(s);
    expect(() => buildProgram(s)).toThrow(message);
  });
});
