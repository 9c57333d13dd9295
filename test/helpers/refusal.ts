// What a call refuses with, for the tests that assert on a refusal: the
// TrtxError it throws, or that error's code. Anything else it throws (a
// RangeError from a read past the end, a failed expect) is not a refusal and
// propagates, failing the test.
import { TrtxError } from '../../src/util/errors.js';

/** The TrtxError `f` throws; a call that returns fails the test with `accepted`. */
export function refusal(f: () => unknown, accepted = 'expected a refusal (a TrtxError); the call returned'): TrtxError {
  try {
    f();
  } catch (e) {
    if (e instanceof TrtxError) return e;
    throw e;
  }
  throw new Error(accepted);
}

/** The code of the TrtxError `f` throws, or 'ok' when it returns. */
export function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof TrtxError) return e.code;
    throw e;
  }
  return 'ok';
}
