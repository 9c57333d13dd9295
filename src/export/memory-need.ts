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
import { join } from 'node:path';
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

export const readText: ReadText = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** Where the kernel mounts the cgroup file systems (v2 unified; v1 has a folder per controller, `memory/`). */
export const CGROUP_ROOT = '/sys/fs/cgroup';

/**
 * A v1 limit at or past 2^62 is "no limit": the kernel shows an unlimited
 * group as the largest page-aligned 63-bit count (9223372036854771712).
 */
const V1_UNLIMITED = 2 ** 62;

/** What a limit leaves: limit - usage, or null with no limit (v2's "max", v1's huge value) or no files. */
function leftUnder(limitText: string | null, usageText: string | null): number | null {
  const limit = limitText?.trim();
  const usage = usageText?.trim();
  if (!limit || !/^\d+$/.test(limit) || !usage || !/^\d+$/.test(usage)) return null;
  if (Number(limit) >= V1_UNLIMITED) return null;
  return Math.max(0, Number(limit) - Number(usage));
}

/**
 * The process's own group in each hierarchy, from /proc/self/cgroup
 * (`0::/path` for v2, `N:memory,...:/path` for v1's memory controller);
 * "/" where it says nothing (the group is the mount's root, as in a
 * container with its own cgroup namespace).
 */
function ownGroups(text: string | null): { v2: string; v1: string } {
  const out = { v2: '/', v1: '/' };
  for (const line of (text ?? '').split('\n')) {
    const a = line.indexOf(':');
    const b = a < 0 ? -1 : line.indexOf(':', a + 1);
    if (b < 0) continue;
    const controllers = line.slice(a + 1, b);
    const path = line.slice(b + 1);
    if (line.slice(0, a) === '0' && controllers === '') out.v2 = path;
    else if (controllers.split(',').includes('memory')) out.v1 = path;
  }
  return out;
}

/** `group` and each group above it, to the mount's root, as folders under `mount`. */
function groupAndAncestors(mount: string, group: string): string[] {
  const parts = group.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  const dirs: string[] = [];
  for (let k = parts.length; k >= 0; k--) dirs.push(join(mount, ...parts.slice(0, k)));
  return dirs;
}

/**
 * What the cgroup limits leave this process, the least over its own group
 * and every group above it, in cgroup v2 (memory.max - memory.current) and
 * in cgroup v1 (memory/memory.limit_in_bytes - memory.usage_in_bytes); null
 * with no limit. A group that is not visible (a container that sees only
 * its own) is skipped; the mount's root, the container's own group there,
 * is always read.
 */
export function cgroupMemoryLeft(read: ReadText = readText, root: string = CGROUP_ROOT): number | null {
  const own = ownGroups(read('/proc/self/cgroup'));
  const left: number[] = [];
  for (const dir of groupAndAncestors(root, own.v2)) {
    const l = leftUnder(read(join(dir, 'memory.max')), read(join(dir, 'memory.current')));
    if (l !== null) left.push(l);
  }
  for (const dir of groupAndAncestors(join(root, 'memory'), own.v1)) {
    const l = leftUnder(read(join(dir, 'memory.limit_in_bytes')), read(join(dir, 'memory.usage_in_bytes')));
    if (l !== null) left.push(l);
  }
  return left.length > 0 ? Math.min(...left) : null;
}

/**
 * Memory a new process can still take: the kernel's MemAvailable
 * (/proc/meminfo: free memory plus the page cache it can drop), and, inside a
 * cgroup with a limit (a container, a CI job; v2 or v1), what the limit
 * leaves; the smaller. Null where neither is known (not Linux). Before issue
 * 43 only v2 was read: under a v1 limit the bridge was SIGKILLed
 * (BRIDGE_DIED) instead of refused here.
 */
export function availableMemory(read: ReadText = readText, cgroupRoot: string = CGROUP_ROOT): number | null {
  const meminfo = read('/proc/meminfo');
  const m = meminfo ? /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo) : null;
  const available = m ? Number(m[1]) * 1024 : null;
  const left = cgroupMemoryLeft(read, cgroupRoot);
  if (left === null) return available;
  return available === null ? left : Math.min(available, left);
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
