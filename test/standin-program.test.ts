// Reference engines of version 2 (docs/reference-lowering.md §1): the
// partition as an ExecuTorch program, decoded with trtx's own .pte decoder
// and checked against the blob's bindings; what every command says of them,
// and "synthetic" for version 1.
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/examples/builder.js';
import { cloneSpec, delegateOf, methodOf } from '../src/examples/broken.js';
import { trtSingle } from '../src/examples/programs.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { runChecks } from '../src/checks/run.js';
import type { Program } from '../src/pte/model.js';
import { countEngines, engineCensus, standinEngineLines } from '../src/tensorrt/engine-kind.js';
import { decodeEngine, encodeEngine, type EngineInit } from '../src/tensorrt/standin-engine.js';
import { TrtxError } from '../src/util/errors.js';
import { encodePte, pteOf } from './helpers/memory-pte.js';
import { kernelPartition, withoutDelegates } from '../fixtures/partition.js';
import { refusal } from './helpers/refusal.js';

/** The .pte bytes of trtSingle's program (method forward: 1 input, 1 output) on kernels only, changed by `edit`. */
function partition(edit?: (p: Program) => void): Uint8Array {
  const built = kernelPartition();
  edit?.(built.program);
  return encodePte(built.program, built.segments);
}

function refusalOf(init: EngineInit): TrtxError {
  return refusal(() => decodeEngine(encodeEngine(init), { location: 'engine' }), 'decoded');
}

/** trtSingle whose engine is `engine`. */
function withEngine(engine: EngineInit): ProgramSpec {
  const spec = cloneSpec(trtSingle());
  const d = delegateOf(methodOf(spec, 'forward'), 'trt');
  if (d.blob.kind !== 'tensorrt') throw new Error('not a tensorrt blob');
  d.blob.engine = engine;
  return spec;
}

describe('decoding version 2', () => {
  it('reads the program: methods, forward arity, instructions, operators, weight and program bytes', () => {
    const program = partition();
    const e = decodeEngine(encodeEngine({ steps: [], program, streamableWeightBytes: 0 }));
    expect(e.version).toBe(2);
    expect(e.steps).toEqual([]);
    expect(e.program).toMatchObject({ methods: ['forward'], inputs: 1, outputs: 1, programBytes: program.length });
    expect(e.program!.instructions).toBeGreaterThan(0);
    expect(e.program!.operators).toBeGreaterThan(0);
    expect(e.program!.weightBytes).toBe(0);
  });

  it('a version 1 engine has no program', () => {
    expect(decodeEngine(encodeEngine({ steps: [{ op: 'Affine', input: 0, output: 1 }] })).program).toBeNull();
  });

  it.each<[string, () => EngineInit, RegExp]>([
    ['no program', () => ({ steps: [], version: 2 }), /carries no program/],
    ['synthetic steps', () => ({ steps: [{ op: 'Affine', input: 0, output: 1 }], program: partition() }), /carries 1 synthetic steps/],
    ['a program in version 1', () => ({ steps: [], program: partition(), version: 1 }), /version-1 \(synthetic\) engine carries a program/],
    ['bytes that are not a program', () => ({ steps: [], program: new Uint8Array(64).fill(7) }), /not one trtx can decode \(PTE_/],
    [
      'no method forward',
      () => ({
        steps: [],
        program: partition((p) => {
          p.executionPlan[0].name = 'main';
        }),
      }),
      /has no method forward \(it has "main"\)/,
    ],
  ])('refuses %s (REF_ENGINE_PROGRAM)', (_, init, message) => {
    const e = refusalOf(init());
    expect(e.code).toBe('REF_ENGINE_PROGRAM');
    expect(e.message).toMatch(message);
    expect(e.location).toMatch(/^engine > (program|steps)/);
  });

  it('refuses a version it does not know (REF_ENGINE_VERSION)', () => {
    expect(refusalOf({ steps: [], version: 4 }).code).toBe('REF_ENGINE_VERSION');
  });
});

describe('the check against the bindings', () => {
  it('a program that takes the input bindings and returns the output bindings passes', async () => {
    const { diagnostics } = await runChecks(pteOf(withEngine({ steps: [], program: partition() })));
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('TRT_REFERENCE_PROGRAM_DELEGATED: a partition with a delegate or a delegate call (the runtime runs it on kernels only)', async () => {
    const delegated = () => {
      const built = buildProgram(trtSingle());
      return encodePte(built.program, built.segments);
    };
    const codesOf = async (program: Uint8Array) =>
      (await runChecks(pteOf(withEngine({ steps: [], program })))).diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);
    expect(await codesOf(delegated())).toEqual(['TRT_REFERENCE_PROGRAM_DELEGATED']);
    // A delegate listed but never called is refused all the same: ExecuTorch initialises it when it loads the method.
    const listed = buildProgram(trtSingle());
    const plan = listed.program.executionPlan[0];
    const kept = plan.delegates;
    withoutDelegates(listed.program);
    plan.delegates = kept;
    expect(await codesOf(encodePte(listed.program, listed.segments))).toEqual(['TRT_REFERENCE_PROGRAM_DELEGATED']);
  });

  it('TRT_REFERENCE_PROGRAM_ARITY: another number of inputs than input bindings', async () => {
    const program = partition((p) => {
      p.executionPlan[0].inputs = [];
    });
    const { diagnostics } = await runChecks(pteOf(withEngine({ steps: [], program })));
    const d = diagnostics.find((x) => x.code === 'TRT_REFERENCE_PROGRAM_ARITY');
    expect(d).toMatchObject({ severity: 'error', method: 'forward', delegate: 0 });
    expect(d!.message).toMatch(/takes 0 inputs but the blob has 1 input bindings/);
    expect(d!.hint).toMatch(/trtx export --engine reference/);
  });

  it('an engine that does not decode is a finding with its REF_ENGINE code', async () => {
    const { diagnostics } = await runChecks(pteOf(withEngine({ steps: [], version: 2 })));
    expect(diagnostics.map((d) => d.code)).toContain('REF_ENGINE_PROGRAM');
  });

  it('a synthetic engine whose steps name a missing binding is REF_ENGINE_BINDING', async () => {
    const { diagnostics } = await runChecks(pteOf(withEngine({ steps: [{ op: 'Affine', input: 0, output: 7 }] })));
    expect(diagnostics.map((d) => d.code)).toContain('REF_ENGINE_BINDING');
  });
});

describe('what the commands say', () => {
  it('the census tells the partition programs from the synthetic engines', async () => {
    const program = partition();
    const v2 = await engineCensus(pteOf(withEngine({ steps: [], program })));
    expect(v2).toMatchObject({ reference: 1, synthetic: 0, programs: { engines: 1, program_bytes: program.length } });
    const v1 = await engineCensus(pteOf(trtSingle()));
    expect(v1).toMatchObject({ reference: 1, synthetic: 1, programs: { engines: 0 } });
  });

  it('a line for the partition programs with their numbers, and "synthetic" for version 1', () => {
    const programs = { engines: 1, instructions: 3, operators: 2, weight_bytes: 4096, program_bytes: 9000 };
    const none = { engines: 0, instructions: 0, operators: 0, weight_bytes: 0, program_bytes: 0 };
    expect(standinEngineLines({ tensorrt: 0, reference: 1, synthetic: 0, programs, unknown: 0 })).toEqual([
      '1 TensorRT delegate holds a trtx reference engine, not a TensorRT plan: the partition as an ExecuTorch program (3 instructions, 2 operators, 4096 weight bytes, 9000 program bytes); the program runs in trtx verify, not on TensorRT',
    ]);
    const synthetic = standinEngineLines({ tensorrt: 0, reference: 2, synthetic: 2, programs: none, unknown: 0 });
    expect(synthetic).toHaveLength(1);
    expect(synthetic[0]).toMatch(
      /^2 TensorRT delegates hold synthetic reference engines, not TensorRT plans \(fixtures and benchmarks; they compute a made-up function, not the model\)/,
    );
    expect(standinEngineLines(countEngines([{ kind: 'tensorrt', engine: null }]))).toEqual([]);
  });
});
