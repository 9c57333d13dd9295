// How the reference engine's readers refuse: a coded TrtxError at a location
// inside the engine, with the hint to rebuild it.

import type { StandinEngineCode } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';

export interface EngineLocationOptions {
  /** Prefix for error locations, e.g. `decode > delegate 0 (TensorRTBackend) > engine`. */
  location?: string;
}

export const ENGINE_HINT =
  'the engine is not a trtx reference engine this version can read; re-export the program (`trtx export --engine reference`) or rebuild the fixture (`npm run fixtures`)';

export function engineWhere(opts: EngineLocationOptions | undefined, rel: string): string {
  return opts?.location ? (rel ? `${opts.location} > ${rel}` : opts.location) : rel;
}

/** Throws the engine refusal `code` at `rel` (under opts.location), with the reader's hint. */
export function engineFail(code: StandinEngineCode, opts: EngineLocationOptions | undefined, rel: string, message: string): never {
  throw new TrtxError(code, engineWhere(opts, rel), message, { hint: ENGINE_HINT });
}
