// Host<->device staging traffic of one execution of a method: the bytes the
// `et_copy::_h2d_copy` and `et_copy::_d2h_copy` kernels move (the source
// tensor of each call). This is what zero-copy KV removes.

import type { ExecutionPlan } from '../pte/model.js';
import { tensorAt, tensorBytes } from '../pte/tensor.js';

export const H2D_COPY = 'et_copy::_h2d_copy';
export const D2H_COPY = 'et_copy::_d2h_copy';

export function stagingBytes(plan: ExecutionPlan): { host_to_device_bytes: number; device_to_host_bytes: number; copies: number } {
  let h2d = 0n;
  let d2h = 0n;
  let copies = 0;
  for (const chain of plan.chains) {
    for (const ins of chain.instructions) {
      if (ins.type !== 'KernelCall') continue;
      const name = plan.operators[ins.opIndex]?.name;
      if (name !== H2D_COPY && name !== D2H_COPY) continue;
      const [from] = ins.args;
      const src = from === undefined ? null : tensorAt(plan, from);
      const bytes = (src && tensorBytes(src)) ?? 0n;
      copies++;
      if (name === H2D_COPY) h2d += bytes;
      else d2h += bytes;
    }
  }
  return { host_to_device_bytes: Number(h2d), device_to_host_bytes: Number(d2h), copies };
}
