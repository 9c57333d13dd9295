// `shared_kv_cache`: the compile spec that records the decision to share a
// zero-copy cache, written by `trtx rewrite --zero-copy-kv --share-cache`
// on every TensorRT delegate that takes a shared cache. Its value is the JSON
// list of the shared buffers' fully qualified names, in the delegate's
// aliased-input order, compact as zero_copy_kv is
// (`["layers.0.attn.k_cache","layers.0.attn.v_cache"]`).
//
// A cache is shared when two delegates of one method write it in place, or
// when two methods plan it at one place (see sharedAcrossMethods). Either
// is sound only when every party means it (a cache shared across methods
// with no memory-planning decision behind it produces wrong values, not an
// error: docs/zero-copy-kv.md), so the check accepts sharing exactly where this
// spec says so and refuses it everywhere else. Runtimes that do not know the
// key ignore it (the reference runner reads only the keys it owns).

import { TrtxError } from '../util/errors.js';
import { isWellFormedText, parseStrictJsonBytes, pyJsonCompact, utf8Bytes } from './strict-json.js';
import { getSpec, showBytes, type CompileSpecEntry } from './compile-specs.js';

export const SPEC_SHARED_KV_CACHE = 'shared_kv_cache';

const HINT = 're-run `trtx rewrite --zero-copy-kv --share-cache` on the staged program, or remove the spec';

function check(names: readonly unknown[], fail: (why: string) => never): string[] {
  if (names.length === 0) fail('lists no cache');
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (typeof n !== 'string') fail(`entry ${i} is not a string`);
    if (n.length === 0 || n.includes('\0') || !isWellFormedText(n)) fail(`entry ${i} is not a buffer name`);
    if (seen.has(n)) fail(`names ${JSON.stringify(n)} twice`);
    seen.add(n);
  });
  return names as string[];
}

export function decodeSharedKvCache(value: Uint8Array, location = ''): string[] {
  const fail = (why: string): never => {
    throw new TrtxError('SPEC_SHARED_KV_CACHE_INVALID', location, `shared_kv_cache ${why}`, { hint: HINT });
  };
  const doc = parseStrictJsonBytes(value, 'SPEC_SHARED_KV_CACHE_INVALID', location);
  if (!Array.isArray(doc)) fail(`must be a JSON list of buffer names, got ${showBytes(value)}`);
  return check(doc as unknown[], fail);
}

export function encodeSharedKvCache(names: readonly string[]): Uint8Array {
  check(names, (why) => {
    throw new TrtxError('SPEC_SHARED_KV_CACHE_INVALID', '', `shared_kv_cache ${why}`, { hint: HINT });
  });
  return utf8Bytes(pyJsonCompact([...names]));
}

/** The names a delegate's spec lists; null when it carries none. Throws on a malformed value. */
export function sharedKvCacheOf(specs: readonly CompileSpecEntry[], location = ''): string[] | null {
  const v = getSpec(specs, SPEC_SHARED_KV_CACHE);
  return v === undefined ? null : decodeSharedKvCache(v, location);
}
