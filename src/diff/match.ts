// Pairing things of A with things of B by an identity that survives a
// rewrite (a method's name, a buffer's fully qualified name, a spec's key),
// never by position in a table a rewrite may renumber.

import { itemAt } from '../util/present.js';

export interface Pairing<T> {
  /** Pairs in A's order. */
  both: [T, T][];
  onlyA: T[];
  /** In B's order. */
  onlyB: T[];
}

/**
 * Pairs by key; a key that repeats on a side is paired occurrence by
 * occurrence (the first with the first), the surplus left unpaired.
 */
export function pairBy<T>(a: readonly T[], b: readonly T[], key: (t: T) => string): Pairing<T> {
  const queue = new Map<string, number[]>();
  b.forEach((t, j) => {
    const k = key(t);
    const q = queue.get(k);
    if (q) q.push(j);
    else queue.set(k, [j]);
  });
  const both: [T, T][] = [];
  const onlyA: T[] = [];
  const paired = new Uint8Array(b.length);
  for (const t of a) {
    const j = queue.get(key(t))?.shift();
    if (j === undefined) onlyA.push(t);
    else {
      // The queue holds only indices of b (queued above).
      both.push([t, itemAt(b, j, 'a matched element')]);
      paired[j] = 1;
    }
  }
  return { both, onlyA, onlyB: b.filter((_, j) => !paired[j]) };
}

/** Lists compared as multisets of strings: what only A has, what only B has. */
export function listChanges(a: readonly string[], b: readonly string[]): { removed: string[]; added: string[] } {
  const p = pairBy(a, b, (s) => s);
  return { removed: p.onlyA, added: p.onlyB };
}
