// A minimal edit script between two keyed sequences: Myers' O((N+M)D)
// difference algorithm in its linear-space form (bisect on the middle snake,
// recurse on both halves). Minimal means the kept elements form a longest
// common subsequence, so a rewrite that drops twelve copies out of three
// thousand instructions reads as twelve removals, not as a wall of churn.
// Linear space matters: methods of real models hold tens of thousands of
// instructions, and a full LCS table of two of them would not fit in memory.

import { itemAt } from '../util/present.js';

export type EditOp = { op: 'keep'; a: number; b: number } | { op: 'remove'; a: number } | { op: 'add'; b: number };

/** Keys interned to small integers so the inner loops compare numbers. */
function intern(a: readonly string[], b: readonly string[]): [Int32Array, Int32Array] {
  const ids = new Map<string, number>();
  const id = (k: string) => {
    let v = ids.get(k);
    if (v === undefined) ids.set(k, (v = ids.size));
    return v;
  };
  return [Int32Array.from(a, id), Int32Array.from(b, id)];
}

/**
 * Myers' search costs O((N+M)D): two long sequences with nothing in common
 * (a hostile pair of programs, each a million instructions) would take
 * hours. The search is given WORK_PER_ELEMENT steps per element (plus a
 * floor): past that, what is left unmatched is reported as removed and
 * added (keyedChanges still pairs equal keys as moves), a correct edit
 * script that is no longer minimal. Real rewrites change a few hundred
 * instructions and stay far below it.
 */
const WORK_PER_ELEMENT = 64;
const WORK_FLOOR = 4_000_000;

/** Marks, in `keepA`/`keepB`, the elements of one longest common subsequence (or a common subsequence, past the work bound). */
function markCommon(a: Int32Array, b: Int32Array, keepA: Uint8Array, keepB: Uint8Array): void {
  const work = { left: WORK_FLOOR + WORK_PER_ELEMENT * (a.length + b.length) };
  // An explicit stack: the recursion is shallow in practice, but a hostile
  // program should not be able to choose the depth of our call stack.
  const stack: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    let [aLo, aHi, bLo, bHi] = top;
    while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) {
      keepA[aLo++] = 1;
      keepB[bLo++] = 1;
    }
    while (aLo < aHi && bLo < bHi && a[aHi - 1] === b[bHi - 1]) {
      keepA[--aHi] = 1;
      keepB[--bHi] = 1;
    }
    if (aLo === aHi || bLo === bHi || work.left <= 0) continue;
    const split = middleSnake(a, b, aLo, aHi, bLo, bHi, work);
    if (!split) continue;
    const [x, y] = split;
    stack.push([aLo + x, aHi, bLo + y, bHi], [aLo, aLo + x, bLo, bLo + y]);
  }
}

/**
 * The furthest x a frontier reached on diagonal slot `i`. The slots the
 * search reads are k - 1, k and k + 1 for |k| <= d < maxD, and offset + delta
 * - k once checked against the width: all inside [0, 2 maxD + 2) by
 * construction, so a miss is a bug in this file (itemAt refuses with
 * INTERNAL). The `??` keeps the common read a plain typed-array load.
 */
function reach(frontier: Int32Array, i: number): number {
  return frontier[i] ?? itemAt(frontier, i, 'a diff frontier diagonal');
}

/**
 * The point (x, y), relative to (aLo, bLo), where a forward and a reverse
 * furthest-reaching D-path overlap; both halves of an optimal script meet
 * there. Null when the two ranges share nothing at all, or when the work bound is spent.
 */
function middleSnake(
  a: Int32Array,
  b: Int32Array,
  aLo: number,
  aHi: number,
  bLo: number,
  bHi: number,
  work: { left: number },
): [number, number] | null {
  const n = aHi - aLo;
  const m = bHi - bLo;
  const maxD = Math.ceil((n + m) / 2);
  const offset = maxD;
  const width = 2 * maxD + 2;
  const fwd = new Int32Array(width).fill(-1);
  const rev = new Int32Array(width).fill(-1);
  fwd[offset + 1] = 0;
  rev[offset + 1] = 0;
  const delta = n - m;
  // With an odd delta the paths meet while extending forward, else in reverse.
  const checkOnForward = delta % 2 !== 0;
  // Diagonals that ran off the grid are not extended again.
  let fStart = 0;
  let fEnd = 0;
  let rStart = 0;
  let rEnd = 0;
  for (let d = 0; d < maxD; d++) {
    // Each round visits at most 2d + 2 diagonals per direction; snakes are charged as they run.
    work.left -= 2 * d + 2;
    if (work.left <= 0) return null;
    for (let k = -d + fStart; k <= d - fEnd; k += 2) {
      const kOff = offset + k;
      let x = k === -d || (k !== d && reach(fwd, kOff - 1) < reach(fwd, kOff + 1)) ? reach(fwd, kOff + 1) : reach(fwd, kOff - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
        x++;
        y++;
        work.left--;
      }
      fwd[kOff] = x;
      if (x > n) fEnd += 2;
      else if (y > m) fStart += 2;
      else if (checkOnForward) {
        const rOff = offset + delta - k;
        if (rOff >= 0 && rOff < width && reach(rev, rOff) !== -1 && x >= n - reach(rev, rOff)) return [x, y];
      }
    }
    for (let k = -d + rStart; k <= d - rEnd; k += 2) {
      const kOff = offset + k;
      let x = k === -d || (k !== d && reach(rev, kOff - 1) < reach(rev, kOff + 1)) ? reach(rev, kOff + 1) : reach(rev, kOff - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[aHi - x - 1] === b[bHi - y - 1]) {
        x++;
        y++;
        work.left--;
      }
      rev[kOff] = x;
      if (x > n) rEnd += 2;
      else if (y > m) rStart += 2;
      else if (!checkOnForward) {
        const fOff = offset + delta - k;
        if (fOff >= 0 && fOff < width && reach(fwd, fOff) !== -1) {
          const fx = reach(fwd, fOff);
          const fy = fx - (fOff - offset);
          if (fx >= n - x) return [fx, fy];
        }
      }
    }
  }
  return null;
}

/**
 * The edit script turning `a` into `b`, compared by key: every element is
 * kept, removed (from `a`) or added (from `b`), in an order that reads top to
 * bottom (removals before additions at the same place).
 */
export function diffKeys(a: readonly string[], b: readonly string[]): EditOp[] {
  const [ia, ib] = intern(a, b);
  const keepA = new Uint8Array(a.length);
  const keepB = new Uint8Array(b.length);
  markCommon(ia, ib, keepA, keepB);
  const out: EditOp[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && !keepA[i]) out.push({ op: 'remove', a: i++ });
    else if (j < b.length && !keepB[j]) out.push({ op: 'add', b: j++ });
    else out.push({ op: 'keep', a: i++, b: j++ });
  }
  return out;
}

export type KeyedChange = { change: 'removed'; a: number } | { change: 'added'; b: number } | { change: 'moved'; a: number; b: number };

/**
 * The script as removals, additions and moves, in reading order: a removal
 * and an addition with the same key are one element that changed place
 * (paired in order), reported where it left.
 */
export function keyedChanges(a: readonly string[], b: readonly string[]): KeyedChange[] {
  const script = diffKeys(a, b);
  const pending = new Map<string, number[]>();
  for (const e of script) {
    if (e.op !== 'add') continue;
    const key = itemAt(b, e.b, 'an added element of the edit script');
    const list = pending.get(key);
    if (list) list.push(e.b);
    else pending.set(key, [e.b]);
  }
  const movedTo = new Map<number, number>();
  for (const e of script) {
    if (e.op !== 'remove') continue;
    const j = pending.get(itemAt(a, e.a, 'a removed element of the edit script'))?.shift();
    if (j !== undefined) movedTo.set(e.a, j);
  }
  const arrived = new Set(movedTo.values());
  const out: KeyedChange[] = [];
  for (const e of script) {
    if (e.op === 'remove') {
      const j = movedTo.get(e.a);
      out.push(j === undefined ? { change: 'removed', a: e.a } : { change: 'moved', a: e.a, b: j });
    } else if (e.op === 'add' && !arrived.has(e.b)) out.push({ change: 'added', b: e.b });
  }
  return out;
}
