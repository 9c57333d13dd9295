// The budget pass on the program model: what it selects, what it changes,
// and that nothing else moves. File-level results (decoded again, segments
// byte-identical, in place) are in budget-write.test.ts.
import { describe, expect, it } from 'vitest';
import { multiEngine, trtBesideCuda } from '../src/examples/programs.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { buildProgram } from '../src/examples/builder.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { applyBudget, budgetPass, selectBudgetTargets } from '../src/passes/budget.js';
import type { Program } from '../src/pte/model.js';
import { refusal } from './helpers/refusal.js';

const GiB = 1n << 30n;
const text = (v: Uint8Array) => new TextDecoder().decode(v);
const program = (spec: ProgramSpec): Program => buildProgram(spec).program;
const specsOf = (p: Program, plan = 0) => p.executionPlan[plan].delegates.map((d) => d.compileSpecs.map((s) => [s.key, text(s.value)]));

describe('setting a budget', () => {
  it('sets it on every TensorRT delegate, replacing in place and keeping every other spec in order', () => {
    const p = program(multiEngine(3)); // 256 MiB budget, then target_device, on each
    const before = specsOf(p);
    const r = applyBudget(p, { budget: 8n * GiB });
    expect(specsOf(p)).toEqual(before.map((specs) => specs.map(([k, v]) => [k, k === 'weight_streaming_budget' ? '8589934592' : v])));
    expect(r.edits.map((e) => [e.delegate, e.before, e.after, e.changed])).toEqual(
      [0, 1, 2].map((i) => [i, { kind: 'bytes', bytes: 256n << 20n }, { kind: 'bytes', bytes: 8n * GiB }, true]),
    );
    expect(r.resident?.line).toBe('3 engines x 8 GiB = 24 GiB may be resident');
  });

  it('appends it where there was none (automatic), after the existing specs', () => {
    const p = program(multiEngine(2, { budget: null }));
    applyBudget(p, { budget: 0n });
    expect(specsOf(p)).toEqual([
      [
        ['target_device', 'cuda:0'],
        ['weight_streaming_budget', '0'],
      ],
      [
        ['target_device', 'cuda:0'],
        ['weight_streaming_budget', '0'],
      ],
    ]);
  });

  it('does not touch another backend, even one carrying the same key', () => {
    const p = program(trtBesideCuda());
    const cuda = p.executionPlan[0].delegates[1];
    cuda.compileSpecs.push({ key: 'weight_streaming_budget', value: new TextEncoder().encode('1') });
    const cudaBefore = structuredClone(cuda.compileSpecs);
    const r = applyBudget(p, { budget: 4n * GiB });
    expect(cuda.compileSpecs).toEqual(cudaBefore);
    expect(r.edits.map((e) => e.location)).toEqual(['forward > delegate 0 (TensorRTBackend)', 'forward > delegate 2 (TensorRTBackend)']);
  });

  it("collapses a repeated budget key into one entry at the first one's place, and replaces an invalid value", () => {
    const p = program(multiEngine(2));
    const d = p.executionPlan[0].delegates[0];
    d.compileSpecs[0].value = new TextEncoder().encode('8GiB');
    d.compileSpecs.push({ key: 'weight_streaming_budget', value: new TextEncoder().encode('5') });
    const r = applyBudget(p, { budget: GiB, delegate: 0 });
    expect(specsOf(p)[0]).toEqual([
      ['weight_streaming_budget', '1073741824'],
      ['target_device', 'cuda:0'],
    ]);
    expect(r.edits[0]).toMatchObject({ before: { kind: 'invalid', raw: '"8GiB"' }, entriesBefore: 2, changed: true });
  });

  it('reports an edit that changes nothing as unchanged', () => {
    const p = program(multiEngine(2));
    const r = applyBudget(p, { budget: 256n << 20n });
    expect(r.changed).toBe(false);
    expect(budgetPass({ budget: 256n << 20n })(program(multiEngine(2))).lines[0]).toMatch(
      /already 256 MiB \(268435456 bytes\), unchanged$/,
    );
  });
});

describe('clearing a budget', () => {
  it('removes every entry of the key and nothing else', () => {
    const p = program(multiEngine(3));
    p.executionPlan[0].delegates[1].compileSpecs.push({ key: 'weight_streaming_budget', value: new TextEncoder().encode('7') });
    const r = applyBudget(p, { budget: null });
    expect(specsOf(p)).toEqual([[['target_device', 'cuda:0']], [['target_device', 'cuda:0']], [['target_device', 'cuda:0']]]);
    expect(r.edits.every((e) => e.after.kind === 'automatic' && e.changed)).toBe(true);
    expect(r.resident).toBeNull();
  });
});

describe('narrowing', () => {
  it('--method picks one method', () => {
    const p = program(kvDecoder({ mode: 'staged' }));
    const names = p.executionPlan.map((x) => x.name);
    const r = applyBudget(p, { budget: GiB, method: 'decode' });
    expect(r.edits.map((e) => e.method)).toEqual(['decode']);
    const other = names.indexOf('prefill');
    expect(p.executionPlan[other].delegates[0].compileSpecs.some((s) => s.key === 'weight_streaming_budget')).toBe(false);
  });

  it('--delegate picks one delegate index', () => {
    const p = program(trtBesideCuda());
    const r = applyBudget(p, { budget: GiB, delegate: 2 });
    expect(r.edits.map((e) => e.delegate)).toEqual([2]);
    expect(specsOf(p)).toEqual([
      [['target_device', 'cuda:0']],
      [
        ['method_name', 'forward'],
        ['target_device', 'cuda:0'],
      ],
      [
        ['target_device', 'cuda:0'],
        ['weight_streaming_budget', '1073741824'],
      ],
    ]);
  });

  it('refuses with BUDGET_NO_TENSORRT_DELEGATE (exit 1) when the selection has no TensorRT delegate', () => {
    const e = refusal(() => selectBudgetTargets(program(trtBesideCuda()), { delegate: 1 }));
    expect([e.code, e.kind]).toEqual(['BUDGET_NO_TENSORRT_DELEGATE', 'check']);
    expect(e.message).toContain('it holds forward > delegate 1 (CudaBackend)');
  });

  it('refuses a program with no TensorRT delegate at all', () => {
    const p = program(trtBesideCuda());
    p.executionPlan[0].delegates = p.executionPlan[0].delegates.filter((d) => d.id !== 'TensorRTBackend');
    expect(refusal(() => applyBudget(p, { budget: GiB })).code).toBe('BUDGET_NO_TENSORRT_DELEGATE');
  });

  it('refuses a method or delegate that does not exist as usage (exit 2)', () => {
    const m = refusal(() => selectBudgetTargets(program(trtBesideCuda()), { method: 'decode' }));
    expect([m.code, m.kind]).toEqual(['BUDGET_METHOD_UNKNOWN', 'usage']);
    expect(m.message).toContain('"forward"');
    const d = refusal(() => selectBudgetTargets(program(trtBesideCuda()), { delegate: 3 }));
    expect([d.code, d.kind]).toEqual(['BUDGET_DELEGATE_UNKNOWN', 'usage']);
  });
});

describe('the pass report', () => {
  it('says what changed, from what to what', () => {
    const r = budgetPass({ budget: 8n * GiB, delegate: 0 })(program(multiEngine(2, { budget: null })));
    expect(r).toMatchObject({ pass: 'budget', changed: true });
    expect(r.lines).toEqual(['forward > delegate 0 (TensorRTBackend): weight_streaming_budget automatic -> 8 GiB (8589934592 bytes)']);
  });
});
