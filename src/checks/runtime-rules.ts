// Whose rules `trtx check --runtime` applies: which Torch-TensorRT runtime
// executes the TensorRT delegates, and who manages the program's memory.
// Two axes, one name each:
//
//   delegate runtime  zero-copy-trt  Torch-TensorRT with the zero-copy KV
//                                    contract (pull request 4667): a call may
//                                    elide its aliased outputs (default)
//                     stock-trt      Torch-TensorRT as released: every call
//                                    binds inputs + outputs
//   memory manager    et-module      ExecuTorch's Module (extension/module):
//                                    device arenas from the registered
//                                    DeviceAllocator, never cleared; refuses
//                                    device arenas with share_memory_arenas
//                                    (default)
//                     custom-memory  the application's own MemoryManager /
//                                    HierarchicalAllocator: it may hand two
//                                    methods the same device arena
//
// The defaults are the runtime trtx writes zero-copy programs for and the
// memory path applications deploy; choosing stock-trt or custom-memory
// replaces the default of its axis only.

import { TrtxError } from '../util/errors.js';

export type DelegateRuntime = 'zero-copy-trt' | 'stock-trt';
export type MemoryRuntime = 'et-module' | 'custom-memory';

export interface RuntimeRules {
  delegate: DelegateRuntime;
  memory: MemoryRuntime;
}

export const DEFAULT_RUNTIME: RuntimeRules = { delegate: 'zero-copy-trt', memory: 'et-module' };

export const RUNTIME_NAMES = {
  'zero-copy-trt': 'Torch-TensorRT with the zero-copy KV contract (pull request 4667)',
  'stock-trt': 'stock Torch-TensorRT (no zero-copy KV contract)',
  'et-module': "ExecuTorch's Module (extension/module/module.cpp)",
  'custom-memory': "the application's own memory manager",
} as const;

export type RuntimeName = keyof typeof RUNTIME_NAMES;

/** `--runtime` values (repeatable, or comma-separated) onto the defaults. */
export function parseRuntimes(values: readonly string[] | undefined): RuntimeRules {
  const rules = { ...DEFAULT_RUNTIME };
  const seen = new Set<'delegate' | 'memory'>();
  for (const raw of (values ?? []).flatMap((v) => v.split(','))) {
    const name = raw.trim();
    if (!(name in RUNTIME_NAMES)) {
      throw new TrtxError(
        'CHECK_RUNTIME_UNKNOWN',
        '--runtime',
        `unknown runtime "${name}": expected ${Object.keys(RUNTIME_NAMES).join(', ')}`,
      );
    }
    const axis = name === 'zero-copy-trt' || name === 'stock-trt' ? 'delegate' : 'memory';
    if (seen.has(axis))
      throw new TrtxError(
        'CHECK_RUNTIME_CONFLICT',
        '--runtime',
        `two ${axis === 'delegate' ? 'delegate runtimes' : 'memory managers'} given; choose one`,
      );
    seen.add(axis);
    if (axis === 'delegate') rules.delegate = name as DelegateRuntime;
    else rules.memory = name as MemoryRuntime;
  }
  return rules;
}

export const describeRuntime = (r: RuntimeRules) => `${r.delegate}, ${r.memory}`;
