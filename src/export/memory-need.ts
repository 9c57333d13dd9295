// How much memory `trtx export` needs, and whether this machine has it, said
// before Python starts (issue 36): an export that runs out of memory is killed
// by the kernel minutes in, often taking the user's session with it, and says
// nothing about why.
//
// The bound is the one bench/real-size.ts measures export against: the Python
// side holds the model's weights once as torch tensors and once as the bytes
// ExecuTorch serializes (the reference lowering's named data, or a TensorRT
// plan), plus the interpreter, torch and ExecuTorch themselves (about 1.5 GB
// resident after their imports). 2.5 x the weights + 2 GiB leaves room for
// the intermediate copies ExecuTorch's passes make of small tensors.

import { readFileSync } from 'node:fs';
import { TrtxError } from '../util/errors.js';
import { formatIEC } from '../util/size.js';

/** Two decimals at most: an estimate, not a count. */
const formatBytes = (n: number) => formatIEC(BigInt(Math.round(n / 1024 ** 2)) * 1024n ** 2n);

export const NEED_PER_WEIGHT_BYTE = 2.5;
export const NEED_FIXED_BYTES = 2 * 1024 ** 3;

/** Bytes an export of a model with `weightBytes` of tensors needs at its peak. */
export function exportMemoryNeed(weightBytes: number): number {
  return Math.ceil(weightBytes * NEED_PER_WEIGHT_BYTE) + NEED_FIXED_BYTES;
}

/** Reads a small text file, or null when it is not there (a test passes its own). */
export type ReadText = (path: string) => string | null;

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/**
 * Memory a new process can still take: the kernel's MemAvailable
 * (/proc/meminfo: free memory plus the page cache it can drop), and, inside a
 * cgroup v2 with a limit (a container, a CI job), what the limit leaves
 * (memory.max - memory.current); the smaller. Null where neither is known
 * (not Linux).
 */
export function availableMemory(read: ReadText = readText): number | null {
  const meminfo = read('/proc/meminfo');
  const m = meminfo ? /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo) : null;
  let available = m ? Number(m[1]) * 1024 : null;
  const max = read('/sys/fs/cgroup/memory.max')?.trim();
  const current = read('/sys/fs/cgroup/memory.current')?.trim();
  if (max && /^\d+$/.test(max) && current && /^\d+$/.test(current)) {
    const left = Math.max(0, Number(max) - Number(current));
    available = available === null ? left : Math.min(available, left);
  }
  return available;
}

/**
 * Refuses (EXPORT_MEMORY, exit 2) when an export of `weightBytes` of tensors
 * needs more than `available`; `what` names the model file. Unknown sizes pass.
 */
export function refuseShortMemory(what: string, weightBytes: number | null, available: number | null): void {
  if (weightBytes === null || available === null) return;
  const need = exportMemoryNeed(weightBytes);
  if (need <= available) return;
  throw new TrtxError(
    'EXPORT_MEMORY',
    what,
    `exporting this model needs about ${formatBytes(need)} of memory (${NEED_PER_WEIGHT_BYTE} x its ${formatBytes(weightBytes)} of weights + ${formatBytes(NEED_FIXED_BYTES)}); this machine has ${formatBytes(available)} available`,
    {
      hint: 'free memory or export on a larger machine; a bfloat16 or float16 copy of the model needs half; --no-memory-check exports anyway',
    },
  );
}
