// Array helpers whose cost does not grow the call stack. Spreading an array
// into call arguments (`a.push(...b)`, `Math.max(...b)`,
// `String.fromCharCode(...b)`) puts every element on the stack: a program
// with 150,000 planned buffers or out-of-range inputs overflowed it
// ("Maximum call stack size exceeded", issue 27). Everything that grows with
// a program uses these instead.

/** Appends every item of `items` to `target`; returns `target`. */
export function pushAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const x of items) target.push(x);
  return target;
}

/** The largest of `items`, or `floor` when there are none (or all are smaller). */
export function maxOf(items: Iterable<number>, floor = -Infinity): number {
  let m = floor;
  for (const x of items) if (x > m) m = x;
  return m;
}

const LATIN1 = new TextDecoder('latin1');

/** Bytes as a string of the same code units (each byte one character), at any length. */
export function bytesToLatin1(bytes: Uint8Array): string {
  return LATIN1.decode(bytes);
}
