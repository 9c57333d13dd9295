// What the ExecuTorch runtime refuses at method load or the first execute,
// refused by `trtx check` with a code and a location (src/checks/
// runtime-refusals.ts; docs/reliability.md has the runtime's behaviour per
// shape). Each case is one change to a sound program, encoded to bytes and
// decoded again; the last block proves the passes and the dataflow checks
// never run on a program whose indices are unsound.
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { runChecks } from '../src/checks/run.js';
import { RUNTIME_REFUSAL_CODES, checkRuntimeRefusals } from '../src/checks/runtime-refusals.js';
import { DeviceType, TensorShapeDynamism, splitMemoryOffset, type ExecutionPlan } from '../src/pte/model.js';
import { decodePteBytes } from '../src/pte/open.js';
import { runCli } from './helpers/cli.js';
import { encodePte, pteFromBytes, pteOf } from './helpers/memory-pte.js';
import { programEdit as ix, trtSingleWithConstant as base, type ProgramEdit as Ix } from './helpers/program-edit.js';
import { tempDir } from './helpers/temp.js';

const check = (edit?: (x: Ix) => void) => checkRuntimeRefusals(pteOf(base(), edit && ((p, b) => edit(ix(p, b)))));

interface Case {
  code: string;
  what: string;
  at: string;
  edit: (x: Ix) => void;
}

const cases: Case[] = [
  { code: 'STRUCT_TENSOR_SIZE', what: 'negative extent', at: '> sizes[1]', edit: (x) => (x.tensor('y').sizes[1] = -16) },
  {
    code: 'STRUCT_TENSOR_SIZE',
    what: 'byte size past 2^63',
    at: '> sizes',
    edit: (x) => Object.assign(x.tensor('x'), { sizes: [0x7fffffff, 0x7fffffff, 0x7fffffff], dimOrder: [0, 1, 2] }),
  },
  {
    code: 'STRUCT_TENSOR_RANK',
    what: 'rank 17',
    at: '> sizes',
    edit: (x) => Object.assign(x.tensor('x'), { sizes: new Array(17).fill(1), dimOrder: [...Array(17).keys()] }),
  },
  { code: 'STRUCT_DIM_ORDER', what: 'dim_order shorter than the rank', at: '> dim_order', edit: (x) => x.tensor('y').dimOrder.pop() },
  { code: 'STRUCT_DIM_ORDER', what: 'dim_order repeating a dimension', at: '> dim_order', edit: (x) => (x.tensor('y').dimOrder = [0, 0]) },
  { code: 'STRUCT_STORAGE_OFFSET', what: 'storage offset', at: '> storage_offset', edit: (x) => (x.tensor('y').storageOffset = 4) },
  {
    code: 'STRUCT_SHAPE_DYNAMISM',
    what: 'fully dynamic shape',
    at: '> shape_dynamism',
    edit: (x) => (x.tensor('y').shapeDynamism = TensorShapeDynamism.DYNAMIC_UNBOUND),
  },
  {
    code: 'STRUCT_DEVICE_TYPE',
    what: 'unknown device type on a tensor',
    at: '> extra_tensor_info.device_type',
    edit: (x) => (x.tensor('x@cuda').extraTensorInfo!.deviceType = 7 as DeviceType),
  },
  {
    code: 'STRUCT_DEVICE_TYPE',
    what: 'unknown device type on an arena',
    at: 'forward > non_const_buffer_device[0].device_type',
    edit: (x) => (x.plan.nonConstBufferDevice[0].deviceType = 3 as DeviceType),
  },
  {
    code: 'STRUCT_ARENA_ALIGNMENT',
    what: 'a float planned at an odd offset',
    at: '> allocation_info',
    edit: (x) => Object.assign(x.tensor('y').allocationInfo!, splitMemoryOffset(2n)),
  },
  {
    code: 'STRUCT_ARENA_SIZE',
    what: 'negative arena size',
    at: 'forward > non_const_buffer_sizes[1]',
    edit: (x) => (x.plan.nonConstBufferSizes[1] = -1n),
  },
  {
    code: 'STRUCT_MUTABLE_DATA',
    what: 'initial state with no mutable data segment',
    at: '> data_buffer_idx',
    edit: (x) => (x.tensor('y').dataBufferIdx = 1),
  },
  {
    code: 'STRUCT_CONSTANT_OFFSET',
    what: 'a constant_segment offset past the constant segment',
    at: 'program > constant_segment.offsets[2]',
    edit: (x) => x.program.constantSegment!.offsets.push(1n << 20n),
  },
  {
    code: 'STRUCT_OPERATOR_NAME',
    what: 'operator without a name',
    at: 'forward > operators[0]',
    edit: (x) => (x.plan.operators[0].name = null),
  },
  {
    code: 'STRUCT_OPERATOR_NAME',
    what: 'operator name of 100 bytes',
    at: 'forward > operators[0]',
    edit: (x) => (x.plan.operators[0].name = 'n'.repeat(96)),
  },
  {
    code: 'STRUCT_KERNEL_ARITY',
    what: '_d2h_copy with one argument',
    at: '(KernelCall et_copy::_d2h_copy.out)',
    edit: (x) => (x.kernel('et_copy::_d2h_copy').args.length = 1),
  },
  {
    code: 'STRUCT_KERNEL_ARITY',
    what: '_h2d_copy with an extra argument',
    at: '(KernelCall et_copy::_h2d_copy.out)',
    edit: (x) => x.kernel('et_copy::_h2d_copy').args.push(0),
  },
];

describe('refusals of the ExecuTorch runtime', () => {
  it('find nothing in the sound program', () => {
    expect(check()).toEqual([]);
  });

  it.each(cases)('$code: $what', ({ code, edit, at }) => {
    const found = check(edit).filter((d) => d.code === code);
    expect(found.length, JSON.stringify(check(edit).map((d) => d.code))).toBeGreaterThan(0);
    expect(
      found.some((d) => d.location.includes(at)),
      found.map((d) => d.location).join('\n'),
    ).toBe(true);
    for (const d of found) {
      expect(d.severity).toBe('error');
      expect(d.hint.length).toBeGreaterThan(10);
      expect(d.message).not.toMatch(/\n/);
    }
  });

  it('covers every code it declares', () => {
    expect(new Set(cases.map((c) => c.code))).toEqual(new Set(RUNTIME_REFUSAL_CODES));
  });

  it('a FlatBuffer offset of 0 is refused by the reader (the C++ verifier: "may not point to itself")', () => {
    const built = buildProgram(base());
    const bytes = encodePte(built.program, built.segments);
    // The root table's execution_plan field: its uoffset set to 0.
    const view = new DataView(bytes.buffer);
    const root = view.getUint32(0, true);
    const vtable = root - view.getInt32(root, true);
    const field = view.getUint16(vtable + 4 + 2 * 1, true);
    view.setUint32(root + field, 0, true);
    expect(() => decodePteBytes(bytes)).toThrow(
      expect.objectContaining({ code: 'PTE_FLATBUFFER', message: expect.stringContaining('is 0') }),
    );
  });

  it('accepts initial state that lies inside its segment, and an offset exactly at the end of the constant segment', () => {
    const spec = kvDecoder({ mode: 'staged', cacheInitialState: true });
    const built = buildProgram(spec);
    expect(built.program.mutableDataSegments.length).toBeGreaterThan(0);
    expect(checkRuntimeRefusals(pteFromBytes(encodePte(built.program, built.segments)))).toEqual([]);
    const end = check((x) => {
      const seg = x.program.constantSegment!;
      seg.offsets.push(16n); // the 16-byte constant segment's end
    });
    expect(end).toEqual([]);
  });
});

describe('passes and dataflow checks run only on sound indices', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('refusals');
  });

  /** The staged KV decoder with `edit` applied to its decode method, written to a file. */
  function stagedWith(name: string, edit: (plan: ExecutionPlan) => void): string {
    const built = buildProgram(kvDecoder({ mode: 'staged' }));
    edit(built.program.executionPlan.find((p) => p.name === 'decode')!);
    const file = join(dir, name);
    writeFileSync(file, encodePte(built.program, built.segments));
    return file;
  }

  const d2hWithOneArg = (plan: ExecutionPlan) => {
    const k = plan.chains[0].instructions.find((i) => i.type === 'KernelCall' && plan.operators[i.opIndex].name === 'et_copy::_d2h_copy');
    if (k?.type === 'KernelCall') k.args.length = 1;
  };
  const delegateArgOutOfRange = (plan: ExecutionPlan) => {
    const d = plan.chains[0].instructions.find((i) => i.type === 'DelegateCall');
    if (d?.type === 'DelegateCall') d.args[0] = 255;
  };

  it('check: a _d2h_copy with one argument is STRUCT_KERNEL_ARITY, exit 1, not INTERNAL', async () => {
    const file = stagedWith('d2h-one-arg.pte', d2hWithOneArg);
    for (const args of [
      ['check', file],
      ['check', '--zero-copy-kv', '--json', file],
    ]) {
      const r = await runCli(args);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr + r.stdout).not.toContain('INTERNAL');
      expect(r.stdout).toContain('STRUCT_KERNEL_ARITY');
    }
  });

  it.each([
    ['d2h-one-arg', d2hWithOneArg, 'STRUCT_KERNEL_ARITY'],
    ['delegate-arg-255', delegateArgOutOfRange, 'STRUCT_VALUE_INDEX'],
  ] as const)('rewrite --zero-copy-kv on %s: PASS_INPUT_UNSOUND before any pass, exit 1, nothing written', async (name, edit, code) => {
    const file = stagedWith(`${name}.pte`, edit);
    const out = join(dir, `${name}-out.pte`);
    for (const extra of [['--zero-copy-kv'], ['--zero-copy-kv', '--share-cache'], ['--budget', '1GiB']]) {
      const r = await runCli(['rewrite', file, '-o', out, ...extra, '--json']);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).not.toContain('INTERNAL');
      const { error } = JSON.parse(r.stdout);
      expect(error.code).toBe('PASS_INPUT_UNSOUND');
      // The findings travel in the error document; stderr has the error line (naming the first) and the hint, no listing.
      expect(error.diagnostics.map((d: { code: string }) => d.code)).toContain(code);
      expect(error.diagnostics.every((d: { severity: string }) => d.severity === 'error')).toBe(true);
      expect(r.stderr).toContain(code);
      expect(r.stderr).not.toMatch(/^\s+error [A-Z_]+ {2}/m);
    }
    // Without --json the findings are listed on stderr, as check lists them.
    const human = await runCli(['rewrite', file, '-o', out, '--budget', '1GiB']);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(new RegExp(`^\\s+error ${code} {2}`, 'm'));
    expect(existsSync(out)).toBe(false);
  });

  it('verify --zero-copy-kv on an unsound program: PASS_INPUT_UNSOUND with its findings in the --json error document', async () => {
    const file = stagedWith('verify-d2h-one-arg.pte', d2hWithOneArg);
    const r = await runCli(['verify', file, '--zero-copy-kv', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe('PASS_INPUT_UNSOUND');
    expect(error.diagnostics.map((d: { code: string }) => d.code)).toContain('STRUCT_KERNEL_ARITY');
  });

  it('check on a program with dangling indices reports them and says the dataflow checks were skipped', async () => {
    const built = buildProgram(kvDecoder({ mode: 'staged' }));
    delegateArgOutOfRange(built.program.executionPlan[1]);
    const r = await runChecks(pteFromBytes(encodePte(built.program, built.segments)), { requireZeroCopyKv: true });
    expect(r.diagnostics.map((d) => d.code)).toContain('STRUCT_VALUE_INDEX');
    expect(r.diagnostics.map((d) => d.code)).toContain('CHECK_SKIPPED');
    expect(r.diagnostics.filter((d) => d.code.startsWith('ZC_'))).toEqual([]);
  });
});
