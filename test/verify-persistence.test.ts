// verify's persistence check: a program that keeps state differs from a
// fresh-load run at some step; one whose steps all equal fresh steps keeps
// none and fails, however many steps ran.
import { describe, expect, it } from 'vitest';
import { persistentDiffersFromFresh } from '../src/verify/assertions.js';
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
