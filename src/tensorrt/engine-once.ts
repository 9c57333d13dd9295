// Each reference engine of an opened file is read once, whatever number of
// delegates name the blob it is in: an engine shared by 100 delegates was
// read and decoded per delegate (inspect 65 s, check 121 s; issue 43). The
// read is kept per file and per place, location-free, and a refusal is put
// under the delegate that asks, as reading with its location would say it
// (`<delegate> > engine > ...`).

import type { PteFile } from '../pte/open.js';
import { TrtxError } from '../util/errors.js';
import type { StandinEngine } from './standin-engine.js';

type Settled = StandinEngine | TrtxError;

const perFile = new WeakMap<PteFile, Map<string, { bytes: Uint8Array | null; result: Promise<Settled> }>>();

/** A read's engine, or its refusal as a value. */
export async function settle(read: Promise<StandinEngine>): Promise<Settled> {
  try {
    return await read;
  } catch (e) {
    if (e instanceof TrtxError) return e;
    throw e;
  }
}

/** The engine, or its refusal thrown located under `location`. */
export function relocated(result: Settled, location: string): StandinEngine {
  if (!(result instanceof TrtxError)) return result;
  const at = result.location ? (location ? `${location} > ${result.location}` : result.location) : location;
  throw new TrtxError(result.code, at, result.message, { hint: result.hint });
}

/** `read()` once per file and `key` (inline data: per bytes too, which a program edited in memory may swap). */
export async function engineOnce(
  pte: PteFile,
  key: string,
  bytes: Uint8Array | null,
  read: () => Promise<StandinEngine>,
  location: string,
): Promise<StandinEngine> {
  let reads = perFile.get(pte);
  if (reads === undefined) {
    reads = new Map();
    perFile.set(pte, reads);
  }
  let known = reads.get(key);
  if (known === undefined || known.bytes !== bytes) {
    known = { bytes, result: settle(read()) };
    reads.set(key, known);
  }
  return relocated(await known.result, location);
}
