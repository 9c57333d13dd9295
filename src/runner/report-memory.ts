// The device-memory part of the native runner's report (report.ts): the warm
// pool, the activation scratch and the device arenas, as zod schemas with
// the descriptions schemas/runner-report.schema.json is generated with.

import { z } from 'zod';
import { DecimalU64 } from '../util/decimal-json.js';

const count = z.number().int().min(0);
const u64Bytes = DecimalU64;

const poolState = z.enum(['disabled', 'raised', 'already_max', 'failed', 'restored']);
const memoryError = z.strictObject({
  code: z.enum(['invalid_argument', 'out_of_memory', 'device_error', 'busy']),
  message: z.string(),
});

export const PoolDevice = z.strictObject({
  device: count,
  state_at_load: poolState.describe(
    'After the program loaded: raised (by the runner), already_max (someone else keeps it warm; left alone), failed (runs cold; the CUDA error was cleared), disabled (--cold-pool).',
  ),
  state: poolState.describe('At teardown: restored once a raised pool was put back and trimmed.'),
  previous_release_threshold: u64Bytes
    .nullable()
    .describe('The threshold found at load, put back at teardown; null unless the runner raised it.'),
  raised_to: u64Bytes.nullable(),
  restored: z.boolean(),
  trimmed: z.boolean(),
  configure_error: memoryError.nullable(),
  release_error: memoryError.nullable(),
});
export type PoolDevice = z.infer<typeof PoolDevice>;

export const ScratchDevice = z.strictObject({
  device: count,
  capacity: count,
  peak_capacity: count,
  floor: count.nullable().describe('The frozen floor; null before warm-up ended.'),
  executes: count.describe("Delegate executes that leased this device's scratch."),
});

export const CapacityEvent = z.strictObject({
  device: count,
  execute_index: count.describe('0-based index of the delegate execute on the device.'),
  from: count,
  to: count.describe('Equal to from for a refused change.'),
  reason: z.enum(['grow', 'shrink', 'grow_failed', 'shrink_failed']),
  detail: z.string().nullable(),
});
export type CapacityEvent = z.infer<typeof CapacityEvent>;

export const DeviceArenas = z
  .strictObject({
    allocator: z.enum(['cuda', 'host']),
    fill: z.enum(['poison', 'none']),
    init_device_buffers: z.boolean(),
    allocations: count,
    deallocations: count,
    peak_bytes: count,
    filled_bytes: count.describe('Bytes poisoned at allocation.'),
    zeroed_bytes: count.describe('Bytes the runner initialised (--init-device-buffers).'),
    refused_copies: count.describe(
      'Copies whose device side was not memory the allocator handed out (a tensor tagged CUDA in a host arena).',
    ),
    allocate_call_us: z
      .strictObject({ count, median: z.number().min(0).nullable(), max: z.number().min(0).nullable() })
      .describe('Wall time of each allocation call alone (cudaMallocAsync, or malloc on the CPU), in microseconds.'),
  })
  .describe(
    'The device allocator trtx registers with ExecuTorch for the CUDA device type: cuda (cudaMallocAsync from the default pool) or host (the stand-in on a machine without a GPU).',
  );
export type DeviceArenas = z.infer<typeof DeviceArenas>;

export const PoolReport = z
  .strictObject({
    mode: z.enum(['warm', 'cold', 'unavailable']),
    unavailable_reason: z.string().nullable(),
    api_calls: count.describe(
      'Calls into the CUDA pool API (get/set threshold, synchronize, trim, device switches, error clears); 0 under --cold-pool.',
    ),
    devices: z.array(PoolDevice),
  })
  .describe(
    "The device default pool's release threshold, raised to the maximum while the program is loaded (warm) unless --cold-pool. unavailable: no device pool to touch (a build without CUDA, or a run on the CPU); that is not a failure.",
  );

export const ScratchReport = z
  .strictObject({
    mode: z.enum(['private', 'shared']),
    reclaim: z.boolean(),
    warmup_executes: count.nullable(),
    shrink_after: count.nullable(),
    peak_bytes: count.describe(
      'The most scratch held at once, summed over buffers (not counting the moment a growth holds the old and the new buffer).',
    ),
    peak_buffers: count.describe('The most scratch buffers held at once: one per engine in private mode, one per device in shared mode.'),
    devices: z
      .array(ScratchDevice)
      .describe('Shared mode: per device, as the run ended (before teardown freed it). Empty in private mode.'),
    capacity_events: z.array(CapacityEvent).describe("Shared mode: every change, or refused change, of a device's capacity."),
    handoff_failures: count.describe('Hand-off events that could not be recorded (the device was drained instead).'),
  })
  .describe(
    'Activation scratch. private: one buffer per engine, grown to its largest need. shared: one buffer per device backs every engine, grown to the largest need, shrunk after 3 consecutive underfilled executes once the floor is frozen (after warmup_executes executes: the delegate calls of one step).',
  );

export const MemoryReport = z
  .strictObject({ pool: PoolReport, scratch: ScratchReport, device_arenas: DeviceArenas })
  .describe(
    'Device memory (docs/runtime-contracts.md): the warm default pool, the activation scratch, and the arenas ExecuTorch allocated through the registered device allocator. Written as it stood at teardown, after the scratch was freed and the pool handed back.',
  );
export type MemoryReport = z.infer<typeof MemoryReport>;
