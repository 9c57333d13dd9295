// The malformed shapes of docs/reliability.md's table, each as one change to
// a sound program, with what `trtx check` and the runner (ExecuTorch 1.5.1
// with trtx's plugins, on the CPU) do with it. `row` is the shape's text in
// the table. Used by test/check-runner-agreement.test.ts.
import { buildProgram, type BuiltProgram } from '../../src/examples/builder.js';
import { kvDecoder } from '../../src/examples/kv-decoder.js';
import { HOST_ARENA } from '../../src/examples/method-writer.js';
import { copyBack } from '../../src/examples/ops.js';
import { trtSingle } from '../../src/examples/programs.js';
import type { ProgramSpec } from '../../src/examples/spec.js';
import { DataLocation, DeviceType, ScalarType, TensorShapeDynamism, splitMemoryOffset } from '../../src/pte/model.js';
import { encodePte } from './memory-pte.js';
import { externalWeightsSpec } from '../../fixtures/external-weights.js';
import { programEdit as ix, trtSingleWithConstant, type ProgramEdit as Ix } from './program-edit.js';

export interface Shape {
  /** The shape as the table in docs/reliability.md names it. */
  row: string;
  file: string;
  build(): Uint8Array;
  /** The code check refuses it with; null: check passes it (then `exception` says why that is right). */
  check: string | null;
  runner: { exit: number; code?: string; message?: RegExp };
  /**
   * ExecuTorch itself crashes on it (a SEGV, or undefined behaviour ASan
   * reports); the runner's own validation refuses it first
   * (native-runner/src/integration/program_validation.h).
   */
  crashesExecutorch?: true;
  /** Why the runner may refuse what check passes. */
  exception?: string;
}

function edited(spec: ProgramSpec, method: string, edit: (x: Ix) => void): () => Uint8Array {
  return () => {
    const built = buildProgram(spec);
    edit(ix(built.program, built, method));
    return encodePte(built.program, built.segments);
  };
}

const one = (edit: (x: Ix) => void) => edited(trtSingleWithConstant(), 'forward', edit);
const staged = (edit: (x: Ix) => void) => edited(kvDecoder({ mode: 'staged' }), 'decode', edit);

/** The root table's execution_plan field, its uoffset set to 0. */
function offsetZero(): Uint8Array {
  const bytes = one(() => {})();
  const view = new DataView(bytes.buffer);
  const root = view.getUint32(0, true);
  const vtable = root - view.getInt32(root, true);
  const field = view.getUint16(vtable + 4 + 2 * 1, true);
  view.setUint32(root + field, 0, true);
  return bytes;
}

const load = { exit: 1 } as const;

function segmentBytes(built: BuiltProgram, index: number): Uint8Array {
  const s = built.segments[index];
  if (s.kind !== 'bytes') throw new Error('segment is not in memory');
  return s.bytes;
}

export const SHAPES: Shape[] = [
  {
    row: 'a FlatBuffer offset of 0',
    file: 'offset-zero',
    build: offsetZero,
    check: 'PTE_FLATBUFFER',
    runner: { exit: 1, code: 'InvalidProgram', message: /Verification failed/ },
  },
  {
    row: '`constant_segment` offset past the constant segment, used by a tensor',
    file: 'constant-past-segment',
    build: one((x) => (x.program.constantSegment!.offsets[x.tensor('w').dataBufferIdx] = 1n << 20n)),
    check: 'STRUCT_CONSTANT_EXTENT',
    runner: load,
  },
  {
    row: 'the same offset, used by no tensor',
    file: 'constant-offset-unused',
    build: one((x) => x.program.constantSegment!.offsets.push(1n << 20n)),
    check: 'STRUCT_CONSTANT_OFFSET',
    runner: { exit: 0 },
  },
  {
    row: 'negative tensor extent',
    file: 'negative-extent',
    build: one((x) => (x.tensor('y').sizes[1] = -16)),
    check: 'STRUCT_TENSOR_SIZE',
    runner: { exit: 1, code: 'InvalidProgram' },
  },
  {
    row: 'unknown device type on a tensor',
    file: 'device-type-tensor',
    build: one((x) => (x.tensor('x@cuda').extraTensorInfo!.deviceType = 7 as DeviceType)),
    check: 'STRUCT_DEVICE_TYPE',
    runner: { exit: 1, message: /no device allocator registered for device_type=7/ },
  },
  {
    row: 'unknown device type on an arena',
    file: 'device-type-arena',
    build: one((x) => (x.plan.nonConstBufferDevice[0].deviceType = 3 as DeviceType)),
    check: 'STRUCT_DEVICE_TYPE',
    runner: { exit: 1, code: 'NotFound', message: /No device allocator registered for device type 3/ },
  },
  {
    row: 'a `cuda:0` tensor planned in a host arena, written by a device copy',
    file: 'cuda-tensor-host-arena',
    build: one((x) => Object.assign(x.tensor('x@cuda').allocationInfo!, { memoryId: 1 })),
    check: 'STRUCT_COPY_DEVICE',
    runner: { exit: 1, code: 'InvalidArgument', message: /is not device memory/ },
  },
  {
    row: 'kernel argument count',
    file: 'kernel-arity',
    build: one((x) => (x.kernel('et_copy::_d2h_copy').args.length = 1)),
    check: 'STRUCT_KERNEL_ARITY',
    runner: { exit: 1, code: 'InvalidProgram' },
  },
  {
    row: '`dim_order` length not the rank',
    file: 'dim-order',
    build: one((x) => x.tensor('y').dimOrder.pop()),
    check: 'STRUCT_DIM_ORDER',
    runner: load,
  },
  {
    row: 'misaligned planned offset in a host arena',
    file: 'misaligned-host',
    build: one((x) => Object.assign(x.tensor('y').allocationInfo!, splitMemoryOffset(2n))),
    check: 'STRUCT_ARENA_ALIGNMENT',
    runner: { exit: 0 },
  },
  {
    row: 'misaligned planned offset in a device arena',
    file: 'misaligned-device',
    build: one((x) => Object.assign(x.tensor('x@cuda').allocationInfo!, splitMemoryOffset(2n))),
    check: 'STRUCT_ARENA_ALIGNMENT',
    runner: { exit: 1, code: 'DelegateExecutionFailed', message: /not aligned to its 4-byte element/ },
  },
  {
    row: 'rank over 16',
    file: 'rank-17',
    build: one((x) => Object.assign(x.tensor('w'), { sizes: [4, ...new Array(16).fill(1)], dimOrder: [...Array(17).keys()] })),
    check: 'STRUCT_TENSOR_RANK',
    runner: { exit: 1, code: 'InvalidProgram' },
  },
  {
    row: '`storage_offset` != 0',
    file: 'storage-offset',
    build: one((x) => (x.tensor('y').storageOffset = 4)),
    check: 'STRUCT_STORAGE_OFFSET',
    runner: load,
  },
  {
    row: '`DYNAMIC_UNBOUND`',
    file: 'dynamic-unbound',
    build: one((x) => (x.tensor('y').shapeDynamism = TensorShapeDynamism.DYNAMIC_UNBOUND)),
    check: 'STRUCT_SHAPE_DYNAMISM',
    runner: load,
  },
  {
    row: 'negative arena size',
    file: 'arena-negative',
    build: one((x) => (x.plan.nonConstBufferSizes[1] = -1n)),
    check: 'STRUCT_ARENA_SIZE',
    runner: load,
  },
  {
    row: 'operator name of 100 bytes or more, before a sound KernelCall',
    file: 'operator-name',
    build: one((x) => (x.plan.operators[0].name = 'n'.repeat(96))),
    check: 'STRUCT_OPERATOR_NAME',
    runner: { exit: 1, code: 'InvalidProgram', message: /trtx check: STRUCT_OPERATOR_NAME/ },
    crashesExecutorch: true,
  },
  {
    row: 'a delegate without `processed` data',
    file: 'delegate-no-processed',
    build: one((x) => (x.plan.delegates[0].processed = null)),
    check: 'PTE_DELEGATE_DATA',
    runner: { exit: 1, code: 'InvalidProgram', message: /trtx check: PTE_DELEGATE_DATA/ },
    crashesExecutorch: true,
  },
  {
    row: 'a KernelCall `op_index` past the operators, before a sound KernelCall',
    file: 'op-index',
    build: one((x) => (x.kernel('et_copy::_h2d_copy').opIndex = x.plan.operators.length)),
    check: 'STRUCT_OP_INDEX',
    runner: { exit: 1, code: 'InvalidProgram', message: /trtx check: STRUCT_OP_INDEX/ },
    crashesExecutorch: true,
  },
  {
    row: 'schema version above 0',
    file: 'version',
    build: one((x) => (x.program.version = 1)),
    check: 'STRUCT_PROGRAM_VERSION',
    runner: { exit: 1, code: 'InvalidProgram' },
  },
  {
    row: 'no `constant_segment` (the deprecated `constant_buffer` path)',
    file: 'no-constant-segment',
    build: edited(trtSingle(), 'forward', (x) => (x.program.constantSegment = null)),
    check: 'STRUCT_CONSTANT_BUFFER',
    runner: { exit: 1, code: 'InvalidProgram', message: /constant_buffer path/ },
  },
  { row: 'a method without chains', file: 'no-chains', build: one((x) => (x.plan.chains = [])), check: 'STRUCT_NO_CHAINS', runner: load },
  {
    row: 'a kernel argument of another type',
    file: 'arg-type',
    build: staged((x) => (x.kernel('aten::copy_').args[2] = x.index('input_pos'))),
    check: 'STRUCT_KERNEL_ARG_TYPE',
    runner: { exit: 1, code: 'ExecuTorchAbort', message: /EValue is not a Bool/ },
  },
  {
    row: "`aten::copy_`'s return slot not its self",
    file: 'copy-return',
    build: staged((x) => {
      const k = x.kernel('aten::copy_');
      k.args[3] = x.index('layers.0.attn.k_cache@cuda');
    }),
    check: 'STRUCT_KERNEL_RETURN',
    runner: { exit: 1, code: 'InvalidArgument', message: /_h2d_copy: destination tensor must be on a non-CPU device/ },
  },
  {
    row: '`aten::copy_` source and destination partly overlapping',
    file: 'copy-overlap',
    build: staged((x) => {
      const k = x.kernel('aten::copy_');
      const self = x.plan.values[k.args[0]];
      const src = x.plan.values[k.args[1]];
      if (self.type !== 'Tensor' || src.type !== 'Tensor') throw new Error('copy_ on non-tensors');
      Object.assign(src.tensor.allocationInfo!, { memoryId: self.tensor.allocationInfo!.memoryId }, splitMemoryOffset(16n));
    }),
    check: 'STRUCT_COPY_OVERLAP',
    runner: { exit: 1, code: 'InvalidProgram', message: /trtx check: STRUCT_COPY_OVERLAP/ },
    crashesExecutorch: true,
  },
  {
    row: 'a device copy between different dtypes',
    file: 'copy-dtype',
    build: one((x) => (x.tensor('x@cuda').scalarType = ScalarType.HALF)),
    check: 'STRUCT_COPY_SHAPE',
    runner: { exit: 0 },
  },
  {
    row: 'an intermediate tensor with no memory',
    file: 'no-memory',
    // The host side of a _d2h_copy: the device allocator's copy is handed a null destination.
    build: staged((x) => (x.tensor('kv:output0@cpu').allocationInfo = null)),
    check: 'STRUCT_TENSOR_NO_MEMORY',
    runner: { exit: 1, code: 'InvalidArgument', message: /null pointer: a tensor with no memory/ },
  },
  {
    row: 'a host kernel over a tensor planned in a device arena',
    file: 'host-kernel-device-memory',
    // The staged decoder with one more aten::copy_ reading a cache's device
    // staging copy into a host tensor: a host loop over device memory.
    build: () => {
      const spec = kvDecoder({ mode: 'staged' });
      const m = spec.methods.find((x) => x.name === 'decode')!;
      const src = m.tensors.find((t) => t.name === 'layers.0.attn.k_cache@cuda')!;
      m.tensors.push({ name: 'peek@cpu', dtype: src.dtype, shape: [...src.shape], arena: HOST_ARENA });
      m.instructions.push(copyBack('peek@cpu', src.name));
      const built = buildProgram(spec);
      return encodePte(built.program, built.segments);
    },
    check: 'STRUCT_KERNEL_DEVICE_MEMORY',
    runner: { exit: 0 },
  },
  {
    row: 'engine bytes the reference engine refuses',
    file: 'engine-bytes',
    build: one((x) => {
      // The engine's root offset (its bytes 0..3) pointed past its end: the
      // flatbuffer verifier refuses it; its kind (bytes 4..7, TRXE) is intact.
      const ref = x.plan.delegates[0].processed!;
      const blob = ref.location === DataLocation.INLINE ? x.program.backendDelegateData[ref.index].data : segmentBytes(x.built, ref.index);
      const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      view.setUint32(view.getUint32(12, true), 0xfffffff0, true);
    }),
    // check decodes every reference engine (a version-2 one holds the partition's program).
    check: 'REF_ENGINE_MALFORMED',
    runner: { exit: 1, code: 'EngineFormat' },
  },
  {
    row: 'a reference engine whose partition is itself delegated',
    file: 'engine-program-delegated',
    // The version-3 external-weights fixture as it was before issue 43: its partition kept trt-single's TensorRT delegate.
    build: () => {
      const built = buildProgram(externalWeightsSpec({ weights: [{ key: 'layers.0.weight', elements: 256 }], delegated: true }));
      return encodePte(built.program, built.segments);
    },
    check: 'TRT_REFERENCE_PROGRAM_DELEGATED',
    runner: { exit: 1, code: 'EngineFormat', message: /itself delegated/ },
  },
];
