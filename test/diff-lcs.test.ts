// The edit script under `trtx diff`: minimal (its kept elements are a
// longest common subsequence, checked against the textbook table), valid
// (every element accounted for once, in order), and moves paired.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffKeys, keyedChanges } from '../src/diff/lcs.js';
import { pairBy } from '../src/diff/match.js';

function lcsLength(a: string[], b: string[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) t[i][j] = a[i - 1] === b[j - 1] ? t[i - 1][j - 1] + 1 : Math.max(t[i - 1][j], t[i][j - 1]);
  }
  return t[a.length][b.length];
}

const seq = fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 40 });

describe('diffKeys', () => {
  it('keeps a longest common subsequence and accounts for every element once, in order', () => {
    fc.assert(
      fc.property(seq, seq, (a, b) => {
        const script = diffKeys(a, b);
        let i = 0;
        let j = 0;
        let kept = 0;
        for (const e of script) {
          if (e.op === 'keep') {
            expect([e.a, e.b]).toEqual([i, j]);
            expect(a[e.a]).toBe(b[e.b]);
            i++;
            j++;
            kept++;
          } else if (e.op === 'remove') expect(e.a).toBe(i++);
          else expect(e.b).toBe(j++);
        }
        expect([i, j]).toEqual([a.length, b.length]);
        expect(kept).toBe(lcsLength(a, b));
      }),
      { numRuns: 400 },
    );
  });

  it('handles long sequences with a few edits without a quadratic table', () => {
    const a = Array.from({ length: 50_000 }, (_, i) => `op${i % 997}:${i}`);
    const b = a.filter((_, i) => i % 5000 !== 7);
    b.splice(20_000, 0, 'inserted');
    const script = diffKeys(a, b);
    expect(script.filter((e) => e.op === 'remove').length).toBe(10);
    expect(script.filter((e) => e.op === 'add').length).toBe(1);
  });

  it('treats disjoint sequences as all removed then all added', () => {
    expect(diffKeys(['a', 'b'], ['c'])).toEqual([
      { op: 'remove', a: 0 },
      { op: 'remove', a: 1 },
      { op: 'add', b: 0 },
    ]);
  });
});

describe('keyedChanges', () => {
  it('reports an element that changed place as one move, where it left', () => {
    expect(keyedChanges(['x', 'a', 'b', 'c'], ['a', 'b', 'c', 'x'])).toEqual([{ change: 'moved', a: 0, b: 3 }]);
  });

  it('reports plain insertions and removals in reading order', () => {
    expect(keyedChanges(['a', 'b', 'c'], ['a', 'n', 'c'])).toEqual([
      { change: 'removed', a: 1 },
      { change: 'added', b: 1 },
    ]);
  });

  it('pairs repeated keys once each', () => {
    const r = keyedChanges(['k', 'k', 'z'], ['z', 'k']);
    expect(r.filter((c) => c.change === 'moved')).toHaveLength(1);
    expect(r.filter((c) => c.change === 'removed')).toHaveLength(1);
    expect(r.filter((c) => c.change === 'added')).toHaveLength(0);
  });
});

describe('pairBy', () => {
  it('pairs repeated keys occurrence by occurrence and leaves the surplus', () => {
    const p = pairBy(['a', 'b', 'a'], ['a', 'a', 'a', 'c'], (s) => s);
    expect(p.both).toEqual([
      ['a', 'a'],
      ['a', 'a'],
    ]);
    expect(p.onlyA).toEqual(['b']);
    expect(p.onlyB).toEqual(['a', 'c']);
  });
});

describe('diffKeys on long sequences with little in common', () => {
  // Myers' search is O((N+M)D): 150,000 instructions against 150,000 others
  // would take hours. Past its work bound (src/diff/lcs.ts) the script is
  // still valid, every element accounted for once, in order.
  it('ends with a valid script when two long sequences share nothing', () => {
    const n = 150_000;
    const a = Array.from({ length: n }, (_, i) => `a${i}`);
    const b = Array.from({ length: n }, (_, i) => (i % 1000 === 0 ? `a${i}` : `b${i}`));
    const script = diffKeys(a, b);
    let i = 0;
    let j = 0;
    for (const e of script) {
      if (e.op === 'keep') {
        expect(a[e.a]).toBe(b[e.b]);
        i++;
        j++;
      } else if (e.op === 'remove') i++;
      else j++;
    }
    expect([i, j]).toEqual([n, n]);
  });
});
