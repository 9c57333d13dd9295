// Reads that cannot miss unless trtx has a bug: an index the code itself
// computed or checked, a key it set a moment before. Under
// noUncheckedIndexedAccess (tsconfig.strict-index.json) such a read is typed
// `T | undefined`; these helpers say why it is there and, should it ever be
// missing, refuse with INTERNAL ("a bug in trtx, not in the input") and where,
// rather than read on with `undefined`.

import { TrtxError } from './errors.js';

/** `value`, or an INTERNAL refusal naming `what` when it is missing (undefined or null). */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new TrtxError('INTERNAL', what, `${what} is missing; this is a trtx bug`);
  return value;
}

/** `list[index]`, or an INTERNAL refusal naming `what` when the index is out of range. */
export function itemAt<T>(list: readonly T[] | ArrayLike<T>, index: number, what: string): T {
  const item: T | undefined = list[index];
  if (item === undefined) {
    throw new TrtxError('INTERNAL', what, `${what}: index ${index} is outside [0, ${list.length}); this is a trtx bug`);
  }
  return item;
}
