// The memory lines of a verify run (device arenas, pool, scratch), shared
// by `trtx verify` and `trtx demo`.

import { formatIEC } from '../util/size.js';
import type { VerifyResult } from '../verify/verify.js';

const bytes = (n: number) => formatIEC(BigInt(n));

export function renderMemory(m: NonNullable<VerifyResult['memory']>, initialised: boolean): string[] {
  const a = m.device_arenas;
  return [
    `  memory: device arenas ${bytes(a.peak_bytes)} in ${a.allocations} allocation(s) from the ${a.allocator === 'cuda' ? 'CUDA' : 'host stand-in'} allocator, poisoned (0xFF) at allocation${initialised ? `, device buffers initialised by the runner (${bytes(a.zeroed_bytes)})` : ''}`,
    `  memory: pool ${m.pool.mode}${m.pool.mode === 'unavailable' ? '' : ` (${m.pool.api_calls} pool calls)`}, scratch ${m.scratch.mode}, peak ${bytes(m.scratch.peak_bytes)} in ${m.scratch.peak_buffers} buffer(s)`,
  ];
}
