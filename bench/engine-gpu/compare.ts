// Reads what bench/engine-gpu/session.sh brought back (engine-gpu.tgz,
// unpacked into DIR) and prints the table bench/README.md carries, in the
// form of the upstream zero-copy PR: staging bytes per step, step times
// (the runner's and eager PyTorch's own CUDA step), what the staged copies
// and the budget's streaming should cost at the bandwidths measured on the
// same GPU, and whether the outputs agree (staged and zero-copy identical at
// every step, each within bfloat16's tolerance of eager).
//
//   npx tsx bench/engine-gpu/compare.ts DIR
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decodeTensorFile } from '../../src/runner/tensor-file.js';
import { RunnerReport } from '../../src/runner/report.js';
import { elementAt, viewOf } from '../../src/util/dtype.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: compare.ts DIR');
const eager = JSON.parse(readFileSync(join(dir, 'eager.json'), 'utf8')) as {
  device: string;
  torch: string;
  step_s: number[];
  h2d_pinned_Bps: number;
  h2d_pageable_Bps: number;
  d2h_pageable_Bps: number;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const ms = (x: number) => `${x.toFixed(2)} ms`;
const mb = (x: number) => `${(x / 1e6).toFixed(2)} MB`;

interface Run {
  tag: string;
  report: RunnerReport;
  outputs: Map<number, Uint8Array>;
}
const runs: Run[] = [];
for (const f of readdirSync(dir)
  .filter((x) => x.endsWith('.report.json'))
  .sort()) {
  const tag = f.replace(/\.report\.json$/, '');
  const report = RunnerReport.parse(JSON.parse(readFileSync(join(dir, f), 'utf8')));
  const outputs = new Map<number, Uint8Array>();
  try {
    for (const r of decodeTensorFile(readFileSync(join(dir, `${tag}.trxt`)))) {
      if (r.index === 0 && r.value.kind === 'tensor') outputs.set(r.step, r.value.data);
    }
  } catch {
    // a run that failed wrote no outputs
  }
  runs.push({ tag, report, outputs });
}

function maxAbsVsEager(run: Run): number {
  let worst = 0;
  for (const [step, data] of run.outputs) {
    let ref: Uint8Array;
    try {
      ref = readFileSync(join(dir, `eager.step-${step}.bin`));
    } catch {
      continue;
    }
    const a = viewOf(data);
    const b = viewOf(ref);
    for (let i = 0; i < data.length / 2; i++) worst = Math.max(worst, Math.abs(elementAt(a, 'bfloat16', i) - elementAt(b, 'bfloat16', i)));
  }
  return worst;
}
const identical = (a: Run, b: Run) =>
  a.outputs.size > 0 &&
  [...a.outputs].every(([s, d]) => Buffer.compare(Buffer.from(d), Buffer.from(b.outputs.get(s) ?? new Uint8Array())) === 0);

console.log(
  `device ${eager.device}, torch ${eager.torch}; eager PyTorch CUDA step median ${ms(1000 * median(eager.step_s.slice(1)))} (steps after the first)`,
);
console.log(
  `bandwidth: pinned h2d ${(eager.h2d_pinned_Bps / 1e9).toFixed(1)} GB/s, pageable h2d ${(eager.h2d_pageable_Bps / 1e9).toFixed(1)} GB/s, pageable d2h ${(eager.d2h_pageable_Bps / 1e9).toFixed(1)} GB/s\n`,
);
console.log(
  '| run | kernels | staging h2d / d2h per step | stand-in copies per step | weights streamed per execute (counted) | median step | max abs vs eager |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of runs) {
  const m = r.report.methods[0];
  if (!m) {
    console.log(`| ${r.tag} | - | - | - | - | failed: ${r.report.errors.map((e) => e.code).join(', ')} | - |`);
    continue;
  }
  const s0 = m.steps[0];
  const d = m.delegates[0];
  const si = s0?.engine_stand_in_bytes;
  const w = d?.weights;
  const perExecute = w && d.executes ? Number(BigInt(w.streamed_bytes) / BigInt(d.executes)) : 0;
  const step = m.step_time_us?.median ?? NaN;
  console.log(
    `| ${r.tag} | ${d?.kernels ?? '?'} | ${mb(s0?.h2d_bytes ?? 0)} / ${mb(s0?.d2h_bytes ?? 0)} | ${si ? `${mb(si.h2d_bytes)} / ${mb(si.d2h_bytes)}` : '-'} | ${mb(perExecute)} | ${ms(step / 1000)} | ${maxAbsVsEager(r).toExponential(2)} |`,
  );
}
const by = (tag: string) => runs.find((r) => r.tag === tag);
const stepMs = (tag: string) => (by(tag)?.report.methods[0]?.step_time_us?.median ?? NaN) / 1000;
const staged = by('staged.resident');
const zc = by('zero-copy.resident');
if (staged && zc) {
  const s0 = staged.report.methods[0]?.steps[0];
  const copyMs = 1000 * ((s0?.h2d_bytes ?? 0) / eager.h2d_pageable_Bps + (s0?.d2h_bytes ?? 0) / eager.d2h_pageable_Bps);
  console.log(
    `\nstaged - zero-copy: ${ms(stepMs('staged.resident') - stepMs('zero-copy.resident'))} per step; the staged copies at the measured pageable bandwidths: ${ms(copyMs)}`,
  );
  console.log(`staged and zero-copy outputs identical at every step: ${identical(staged, zc)}`);
}
const budget = by('zero-copy.budget');
if (budget && zc) {
  const d = budget.report.methods[0]?.delegates[0];
  const perExecute = d?.weights && d.executes ? Number(BigInt(d.weights.streamed_bytes) / BigInt(d.executes)) : 0;
  console.log(
    `budget - all resident: ${ms(stepMs('zero-copy.budget') - stepMs('zero-copy.resident'))} per step; ${mb(perExecute)} streamed at the measured pinned bandwidth: ${ms((1000 * perExecute) / eager.h2d_pinned_Bps)}`,
  );
  console.log(`budget and all-resident outputs identical at every step: ${identical(budget, zc)}`);
}
console.log(`zero-copy step / eager step: ${(stepMs('zero-copy.resident') / (1000 * median(eager.step_s.slice(1)))).toFixed(2)}`);
