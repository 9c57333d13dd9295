// The shapes that crashed ExecuTorch inside the runner (issue 27 item 6),
// each one change to a sound program: the runner's own validation
// (native-runner/src/integration/program_validation.h) must refuse every one before
// ExecuTorch reads it, in both verification modes. They seed the runner
// fuzzer (test/runner-fuzz.test.ts) besides the fixtures and the corpus, so
// its mutants start from the damage, and the test runs each one as it is.
import * as flatbuffers from 'flatbuffers';
import { buildProgram } from '../../src/examples/builder.js';
import { KernelCall as FbKernelCall } from '../../src/generated/executorch-flatbuffer/kernel-call.js';
import { Program as FbProgram } from '../../src/generated/executorch-flatbuffer/program.js';
import type { FuzzSeed } from './fuzz.js';
import { encodePte } from './memory-pte.js';
import { programEdit, trtSingleWithConstant, type ProgramEdit } from './program-edit.js';

export interface HostileSeed extends FuzzSeed {
  /** The runner's refusal: its report's code and the trtx check code its message names. */
  code: 'InvalidProgram' | 'PlannedMemoryLimit';
  check: string | null;
}

type Edit = (x: ProgramEdit) => void;

function edited(
  name: string,
  edit: Edit,
  code: HostileSeed['code'],
  check: string | null,
  patch?: (bytes: Uint8Array) => void,
): HostileSeed {
  const built = buildProgram(trtSingleWithConstant());
  edit(programEdit(built.program, built, 'forward'));
  const bytes = encodePte(built.program, built.segments);
  patch?.(bytes);
  return { name: `hostile:${name}`, bytes, program: built.program, segments: built.segments, code, check };
}

/** Where the 32-bit length of a table's vector field lies in the file (the program part starts at 0). */
function vectorLengthAt(table: { bb: flatbuffers.ByteBuffer | null; bb_pos: number }, field: number): number {
  const bb = table.bb!;
  const o = bb.__offset(table.bb_pos, field);
  if (!o) throw new Error('hostile-seeds: the vector is absent');
  return bb.__vector(table.bb_pos + o) - 4;
}

function firstKernelCall(bytes: Uint8Array): FbKernelCall {
  const plan = FbProgram.getRootAsProgram(new flatbuffers.ByteBuffer(bytes)).executionPlan(0)!;
  const ins = plan.chains(0)!.instructions(0)!;
  return ins.instrArgs(new FbKernelCall()) as FbKernelCall;
}

const setU32 = (bytes: Uint8Array, at: number, v: number) => new DataView(bytes.buffer, bytes.byteOffset).setUint32(at, v >>> 0, true);

// ExecutionPlan's vtable slots (schemas/program.fbs field order): values is field 2, KernelCall args field 1.
const PLAN_VALUES = 4 + 2 * 2;
const KERNEL_ARGS = 4 + 2 * 1;

/** Every hostile shape, in a fixed order. */
export function hostileSeeds(): HostileSeed[] {
  return [
    edited('op-index-minus-one', (x) => (x.kernel('et_copy::_h2d_copy').opIndex = -1), 'InvalidProgram', 'STRUCT_OP_INDEX'),
    edited('op-index-past', (x) => (x.kernel('et_copy::_h2d_copy').opIndex = x.plan.operators.length), 'InvalidProgram', 'STRUCT_OP_INDEX'),
    edited(
      'value-index-past',
      (x) => (x.kernel('et_copy::_h2d_copy').args[0] = x.plan.values.length),
      'InvalidProgram',
      'STRUCT_VALUE_INDEX',
    ),
    edited('value-index-minus-one', (x) => (x.kernel('et_copy::_d2h_copy').args[1] = -1), 'InvalidProgram', 'STRUCT_VALUE_INDEX'),
    edited('plan-output-past', (x) => (x.plan.outputs[0] = 0x7fffffff), 'InvalidProgram', 'STRUCT_VALUE_INDEX'),
    edited(
      'tensor-list-item-past',
      (x) => x.plan.values.push({ type: 'TensorList', items: [x.plan.values.length + 7] }),
      'InvalidProgram',
      'STRUCT_VALUE_INDEX',
    ),
    edited(
      'tensor-list-of-an-int-list',
      (x) => x.plan.values.push({ type: 'IntList', items: [] }, { type: 'TensorList', items: [x.plan.values.length] }),
      'InvalidProgram',
      'STRUCT_LIST_ITEM_TYPE',
    ),
    edited('operator-name-100-bytes', (x) => (x.plan.operators[0].name = 'n'.repeat(96)), 'InvalidProgram', 'STRUCT_OPERATOR_NAME'),
    edited('delegate-no-processed', (x) => (x.plan.delegates[0].processed = null), 'InvalidProgram', 'PTE_DELEGATE_DATA'),
    // A length field claiming more than the buffer: Minimal followed it unchecked.
    edited(
      'args-length-huge',
      () => {},
      'InvalidProgram',
      'PTE_FLATBUFFER',
      (b) => setU32(b, vectorLengthAt(firstKernelCall(b), KERNEL_ARGS), 0x7fffffff),
    ),
    edited(
      'values-length-huge',
      () => {},
      'InvalidProgram',
      'PTE_FLATBUFFER',
      (b) =>
        setU32(b, vectorLengthAt(FbProgram.getRootAsProgram(new flatbuffers.ByteBuffer(b)).executionPlan(0)!, PLAN_VALUES), 0x40000000),
    ),
    edited('planned-size-1-tib', (x) => (x.plan.nonConstBufferSizes[1] = 1n << 40n), 'PlannedMemoryLimit', null),
    edited('planned-size-2-eib', (x) => (x.plan.nonConstBufferSizes[1] = 1n << 61n), 'PlannedMemoryLimit', null),
    edited('planned-size-negative', (x) => (x.plan.nonConstBufferSizes[1] = -(1n << 40n)), 'InvalidProgram', 'STRUCT_ARENA_SIZE'),
  ];
}
