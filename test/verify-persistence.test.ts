// verify's persistence check: a program that keeps state differs from a
// fresh-load run at some step; one whose steps all equal fresh steps keeps
// none and fails, however many steps ran.
import { describe, expect, it } from 'vitest';
import { persistentDiffersFromFresh, readsWhatWasWritten } from '../src/verify/assertions.js';
import type { RunnerReport } from '../src/runner/report.js';

/** A report whose only content is each step's output digests (all the check reads). */
const run = (digests: string[]) =>
  ({
    methods: [{ name: 'forward', steps: digests.map((d) => ({ outputs: [{ index: 0, digest: d }], buffers: [] })) }],
  }) as unknown as RunnerReport;

describe('each step sees what the previous one wrote', () => {
  it('fails when no step differs from a fresh load', () => {
    const a = persistentDiffersFromFresh(run(['a', 'b', 'c']), run(['a', 'b', 'c']), 'x');
    expect(a.ok).toBe(false);
    expect(a.detail).toContain('forward step 1, forward step 2');
  });

  it('passes when later steps differ, naming a step whose predecessor wrote what a fresh load holds', () => {
    const a = persistentDiffersFromFresh(run(['a', 'b', 'c', 'd']), run(['a', 'b', 'x', 'y']), 'x');
    expect(a.ok).toBe(true);
    expect(a.detail).toBe(
      'outputs differ with fresh caches at 2 step(s); equal to a fresh step at forward step 1 (what the step before wrote equals a fresh load)',
    );
  });

  it('names a method missing from the fresh run', () => {
    const fresh = { methods: [] } as unknown as RunnerReport;
    expect(persistentDiffersFromFresh(run(['a', 'b']), fresh, 'x')).toMatchObject({
      ok: false,
      detail: 'forward: missing from the fresh run',
    });
  });
});

/** A two-method report: each method's step output digests. */
const methods = (m: Record<string, string[]>) =>
  ({
    methods: Object.entries(m).map(([name, digests]) => ({
      name,
      steps: digests.map((d) => ({ outputs: d ? [{ index: 0, digest: d }] : [], buffers: [] })),
    })),
  }) as unknown as RunnerReport;

describe('methods that share state', () => {
  it('asks only the methods that keep state whether their steps see the previous one', () => {
    // set only writes (no outputs), get only reads: neither is asked; decode keeps its own.
    const persistent = methods({ decode: ['a', 'b', 'c'], set: ['', '', ''] });
    const fresh = methods({ decode: ['a', 'x', 'y'], set: ['', '', ''] });
    expect(persistentDiffersFromFresh(persistent, fresh, 'x', new Set(['decode']))).toMatchObject({ ok: true });
    // Asked of every method, set's output-less steps count as equal: the old, wrong question.
    expect(persistentDiffersFromFresh(persistent, fresh, 'x').detail).toContain('set step 1');
  });

  it('passes a reader whose outputs differ from a fresh load once a writer ran', () => {
    const a = readsWhatWasWritten(
      methods({ get: ['z', 'b', 'c'] }),
      methods({ get: ['z', 'z', 'z'] }),
      'get',
      [{ buffer: 'state', writers: ['set'] }],
      'as-is',
    );
    expect(a).toEqual({
      name: 'get reads what set wrote to state (persistent, methods sharing arenas, vs fresh loads): as-is',
      ok: true,
      detail: "outputs differ from a fresh load's at 2 of 3 step(s)",
    });
  });

  it('fails a reader that sees what a fresh load holds at every step: the methods did not share the buffer', () => {
    const a = readsWhatWasWritten(
      methods({ get: ['z', 'z'] }),
      methods({ get: ['z', 'z'] }),
      'get',
      [{ buffer: 'state', writers: ['set'] }],
      'as-is',
    );
    expect(a.ok).toBe(false);
    expect(a.detail).toBe(
      "get's outputs equal a fresh load's at all 2 steps: it never saw what set wrote, so the methods do not share state at run time",
    );
  });
});
