// What the zero-copy KV rewrite says: lines for people and the
// `rewrite --json` details (schemas/rewrite.schema.json).

import { formatIEC } from '../util/size.js';
import type { PassReport } from './pass.js';
import type { ZeroCopyDelegate, ZeroCopyOptions, ZeroCopyResult } from './zero-copy-model.js';
import type { ZeroCopyDetails } from './details-json.js';

const mb = (n: number | bigint) => formatIEC(BigInt(n));

export function describeZeroCopy(r: ZeroCopyResult): string[] {
  if (r.noCache) {
    const n = r.noCache.delegates;
    return [
      `no KV cache to make zero-copy: no TensorRT delegate declares a kv_cache_update alias (${n} TensorRT delegate${n === 1 ? '' : 's'}); the program is left as it is (--strict refuses it)`,
    ];
  }
  if (!r.changed) {
    return [
      `already zero-copy, nothing to un-stage: ${r.already.map((d) => `${d.location} elides ${d.elided.join(', ')}`).join('; ') || 'no staged cache'}`,
    ];
  }
  const lines: string[] = [];
  const list = (xs: string[]) => (xs.length <= 4 ? xs.join(', ') : `${xs.length}: ${xs[0]}, ${xs[1]}, ..., ${xs[xs.length - 1]}`);
  for (const d of r.rewritten) {
    lines.push(
      `${d.location}: stamped zero_copy_kv (${list(d.elided)}); fed its caches directly (${list(d.buffers)})${d.shared.length ? `; shared_kv_cache (${list(d.shared)})` : ''}`,
    );
  }
  for (const m of r.methods) {
    const bytes = m.caches.reduce((s, c) => s + c.bytes, 0n);
    const stBefore = m.stagingBefore.host_to_device_bytes + m.stagingBefore.device_to_host_bytes;
    const stAfter = m.stagingAfter.host_to_device_bytes + m.stagingAfter.device_to_host_bytes;
    lines.push(
      `${m.method}: ${m.caches.length} cache${m.caches.length === 1 ? '' : 's'} (${mb(bytes)}) moved to the device; staging per execution ${mb(stBefore)} -> ${mb(stAfter)}; removed ${m.removed.instructions} instructions, ${m.removed.values} values, ${m.removed.operators} operators`,
    );
    for (const a of m.arenas) lines.push(`${m.method}: arena ${a.arena} (${a.device}) ${mb(a.before)} -> ${mb(a.after)}`);
  }
  for (const d of r.already) lines.push(`${d.location}: already zero-copy, unchanged`);
  return lines;
}

const delegateJson = (d: ZeroCopyDelegate) => ({
  method: d.method,
  delegate: d.delegate,
  location: d.location,
  elided: d.elided,
  buffers: d.buffers,
  shared: d.shared,
});

/** What the zero-copy pass reports (`rewrite --json` passes[].details, details-json.ts). */
export type { ZeroCopyDetails };

export function detailsOf(r: ZeroCopyResult, opts: ZeroCopyOptions): ZeroCopyDetails {
  return {
    share_cache: Boolean(opts.shareCache),
    no_kv_cache: r.noCache !== null,
    already_zero_copy: !r.changed && r.noCache === null,
    rewritten: r.rewritten.map(delegateJson),
    already: r.already.map(delegateJson),
    methods: r.methods.map((m) => ({
      method: m.method,
      caches: m.caches.map((c) => ({ ...c, bytes: c.bytes.toString() })),
      staging_before: m.stagingBefore,
      staging_after: m.stagingAfter,
      arenas: m.arenas.map((a) => ({ ...a, before: a.before.toString(), after: a.after.toString() })),
      removed: m.removed,
    })),
  };
}

export const isZeroCopyReport = (r: PassReport): r is PassReport<ZeroCopyDetails> => r.pass === 'zero-copy-kv';
