// The zero-copy KV check's codes: the rule each enforces and the program
// that breaks it (ZERO_COPY_RULES; the numbers are docs/zero-copy-kv.md's),
// and the hint each diagnostic carries. The checks are src/checks/zero-copy*.ts.

import type { ZcCheckCode } from '../codes/index.js';

/** Every code, the rule it enforces (docs/zero-copy-kv.md) and the fixture that breaks it. */
export const ZERO_COPY_RULES = {
  ZC_PARTIAL_ELISION: { rule: 'elision is all-or-nothing per delegate', fixture: 'broken-partial-elision.pte' },
  ZC_USER_ALIAS: {
    rule: 'elision is all-or-nothing per delegate (a user alias cannot be elided)',
    fixture: 'user alias beside the caches (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_NOT_ALIASED: { rule: '1: aliasing comes from aliased_io', fixture: 'broken-copy-back-elided.pte' },
  ZC_STAGED_CACHE: {
    rule: "2: an elided output's input is fed the buffer, not a staging copy",
    fixture: 'stamped program left staged (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_NOT_A_BUFFER: {
    rule: "2: an elided output's input is fed a mutable buffer",
    fixture: 'method input fed to an elided alias (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_LEFTOVER_STAGING: { rule: '2: no other staging copy of a zero-copy buffer', fixture: 'broken-leftover-staging-copy.pte' },
  ZC_OTHER_READER: {
    rule: '2: nothing else reads a zero-copy buffer',
    fixture: 'another backend reads a cache (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_CACHE_OFF_DEVICE: {
    rule: "3: a zero-copy buffer is planned in a CUDA arena on the delegate's device",
    fixture: 'cache in the host arena (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_CACHE_OVERLAP: { rule: '3: a zero-copy buffer has a region of its own', fixture: 'broken-cache-overlaps-activation.pte' },
  ZC_HOST_PLANNED: { rule: '4: a method planned in host arenas only is host-planned', fixture: 'broken-host-planned-arena.pte' },
  ZC_ALIASED_INPUT_HOST: { rule: '4: an aliased input is device memory, staged or not', fixture: 'broken-staged-host-planned.pte' },
  ZC_WRITEBACK_INTO_CACHE: { rule: '5: no write-back targets a zero-copy buffer', fixture: 'broken-writeback-into-zero-copy-cache.pte' },
  ZC_NO_OUTPUTS_LEFT: { rule: '6: a stamped delegate keeps an output', fixture: 'broken-zero-copy-no-outputs-left.pte' },
  ZC_SPEC_COUNT: {
    rule: '6: a stamped delegate accounts for exactly the buffers its spec names',
    fixture: 'one cache at two aliased inputs (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_SWAPPED_CACHE: { rule: '7: delegates do not swap caches', fixture: 'broken-swapped-caches.pte' },
  ZC_SHARED_CACHE_UNDECLARED: {
    rule: '7: a shared cache is a recorded decision',
    fixture: 'shared caches without shared_kv_cache (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_SHARED_CACHE_STALE: {
    rule: '7: shared_kv_cache names only caches that are shared',
    fixture: 'shared_kv_cache on an unshared cache (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_SHARED_CACHE_SPLIT: {
    rule: '7: methods sharing a cache hold it on one device',
    fixture: 'shared cache zero-copy in one method only (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_UNSTAMPED_DIRECT: {
    rule: 'the buffer side agrees with the delegate side',
    fixture: 'zero-copy program without its stamp (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_UPDATE_MISSING: { rule: 'every mutable buffer updated exactly once: never neither', fixture: 'broken-lost-update.pte' },
  ZC_UPDATE_TWICE: {
    rule: 'every mutable buffer updated exactly once: never twice',
    fixture: 'two write-backs of conv_state (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_WRITEBACK_CROSSED: {
    rule: 'a staged aliased output is written back into its own buffer',
    fixture: 'crossed write-backs (test/helpers/zero-copy-shapes.ts)',
  },
  ZC_NOT_ZERO_COPY: { rule: '--zero-copy-kv: every kv_cache_update alias is zero-copy', fixture: 'kv-decode-staged.pte' },
  ZC_NO_KV_CACHE: { rule: '--zero-copy-kv: there is a cache to require it of', fixture: 'trt-single.pte' },
  SPEC_SHARED_KV_CACHE_INVALID: {
    rule: 'shared_kv_cache is a JSON list of buffer names',
    fixture: 'malformed shared_kv_cache (test/zero-copy-check.test.ts)',
  },
} as const satisfies Record<ZcCheckCode | 'SPEC_SHARED_KV_CACHE_INVALID', { rule: string; fixture: string }>;

export type ZeroCopyCode = keyof typeof ZERO_COPY_RULES;
export const ZERO_COPY_CODES = Object.keys(ZERO_COPY_RULES) as ZeroCopyCode[];

export const HINTS: Record<ZeroCopyCode, string> = {
  ZC_PARTIAL_ELISION:
    'the runtime elides all aliased outputs of an engine or none; re-run `trtx rewrite --zero-copy-kv` on the staged program',
  ZC_USER_ALIAS: 'a user alias cannot be elided, so the engine cannot be zero-copy; keep it staged or re-export without the alias',
  ZC_NOT_ALIASED: "only outputs the blob's aliased_io aliases may be elided; a copy-back buffer keeps its output and write-back",
  ZC_STAGED_CACHE:
    'the engine updates a staging copy that is thrown away; feed the buffer itself (re-run `trtx rewrite --zero-copy-kv` on the staged program)',
  ZC_NOT_A_BUFFER: 'only a mutable buffer can be updated in place; keep the engine staged',
  ZC_LEFTOVER_STAGING: '_h2d_copy needs a host source and a zero-copy buffer lives on the device; re-run the rewrite on the staged program',
  ZC_OTHER_READER: 'a zero-copy buffer is device memory its engine updates in place; nothing else may read it',
  ZC_CACHE_OFF_DEVICE: "plan the cache in a CUDA arena on the delegate's target_device (re-run `trtx rewrite --zero-copy-kv`)",
  ZC_CACHE_OVERLAP: 'a cache lives across executions; give it a region no other tensor uses (re-run the rewrite on the staged program)',
  ZC_HOST_PLANNED: 'the program was planned with enable_non_cpu_memory_planning off; re-export with it on, or keep the caches staged',
  ZC_ALIASED_INPUT_HOST:
    "re-export with device memory planning on (ExecuTorch's default enable_non_cpu_memory_planning), which stages the cache to the device; ExecuTorch 1.5 shares mutable buffers between methods only with it off, so share no caches",
  ZC_WRITEBACK_INTO_CACHE: "the engine's in-place write is the update; remove the write-back (re-run the rewrite on the staged program)",
  ZC_NO_OUTPUTS_LEFT: 'a delegate nothing reads may be erased; keep this engine staged',
  ZC_SPEC_COUNT: 'each elided output updates its own buffer; re-export the program',
  ZC_SWAPPED_CACHE: 'each engine must be fed the caches its bindings name; re-run the rewrite on the staged program',
  ZC_SHARED_CACHE_UNDECLARED:
    'if the sharing is meant, re-run `trtx rewrite --zero-copy-kv --share-cache` on the staged program; otherwise plan the caches apart',
  ZC_SHARED_CACHE_STALE:
    'remove the cache from shared_kv_cache, or re-run `trtx rewrite --zero-copy-kv --share-cache` on the staged program',
  ZC_SHARED_CACHE_SPLIT: 'make every method that shares the cache zero-copy, or none',
  ZC_UNSTAMPED_DIRECT:
    'the delegate must elide the aliased output and carry zero_copy_kv, or the buffer must be staged; re-run the rewrite on the staged program',
  ZC_UPDATE_MISSING: 'the new value is computed and thrown away; restore the write-back or make the buffer zero-copy',
  ZC_UPDATE_TWICE: 'update each buffer once per execution: by its write-back or by its zero-copy engine',
  ZC_WRITEBACK_CROSSED: 'the mutation map is crossed; re-export the program (the export puts the copied mutations first)',
  ZC_NOT_ZERO_COPY: 'run `trtx rewrite IN -o OUT --zero-copy-kv` to un-stage the caches',
  ZC_NO_KV_CACHE: 'nothing to require: no TensorRT engine declares a kv_cache_update alias',
  SPEC_SHARED_KV_CACHE_INVALID: 're-run `trtx rewrite --zero-copy-kv --share-cache` on the staged program, or remove the spec',
};

/** The placeholder name torch.export gives a lifted buffer, after ExecuTorch's sanitising: `b_` + fqn with non-word characters as `_`. */
export const bufferPlaceholder = (fqn: string) => `b_${fqn.replace(/[^A-Za-z0-9_]/g, '_')}`;
