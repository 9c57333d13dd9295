// Benchmark: on the KV fixture scaled to the 30-layer model of
// pytorch/TensorRT#4667 (kvDecoder({scale: 'seed'}): 30 layers, 8 heads x 128,
// 4693 positions, bfloat16), the host<->device staging bytes of one decode step before and
// after `trtx rewrite --zero-copy-kv`, split into the caches' share and the
// rest, and the rewrite's wall time on that file as a ratio to `cp` of the
// same file (median of 5, alternating), with node's own start-up beside it.
//
//   npx tsx bench/zero-copy.ts [--dir DIR] [--runs 5]
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { stagingBytes } from '../src/graph/staging.js';
import type { ExecutionPlan } from '../src/pte/model.js';
import { withPte } from '../src/pte/open.js';
import { tensorAt, tensorBytes, tensorName } from '../src/pte/tensor.js';
import { applyZeroCopyKv, readTrtBlobs } from '../src/passes/zero-copy.js';
import { D2H_COPY, H2D_COPY, copyOf, instructionsOf, writeBacks } from '../src/graph/dataflow.js';
import { arg, ensureBundle, fmtMs, median, wall } from './lib.js';

const dir = resolve(arg('--dir', 'bench/out'));
const runs = Number(arg('--runs', '5'));
mkdirSync(dir, { recursive: true });
ensureBundle();

/** Staging bytes of one execution, and the part that moves named mutable buffers (the caches) and their write-back sources. */
function cacheStaging(plan: ExecutionPlan): { total: number; caches: number } {
  const s = stagingBytes(plan);
  const writtenBack = new Set(writeBacks(plan).map((w) => w.src));
  let caches = 0n;
  for (const { ins } of instructionsOf(plan)) {
    const up = copyOf(plan, ins, H2D_COPY);
    const down = copyOf(plan, ins, D2H_COPY);
    const src = tensorAt(plan, (up ?? down)?.src ?? -1);
    if (up && src && tensorName(src) !== null) caches += tensorBytes(src) ?? 0n;
    if (down && src && writtenBack.has(down.dst)) caches += tensorBytes(src) ?? 0n;
  }
  return { total: s.host_to_device_bytes + s.device_to_host_bytes, caches: Number(caches) };
}

const decodeOf = (path: string) => withPte(path, (pte) => cacheStaging(pte.program.executionPlan.find((p) => p.name === 'decode')!));

const input = join(dir, 'kv-decode-seed-staged.pte');
const output = join(dir, 'kv-decode-seed-zero-copy.pte');
await writeFixture(input, kvDecoder({ mode: 'staged', scale: 'seed' }));
const trtx = ['node', 'bin/trtx'];
const rewrite = [...trtx, 'rewrite', input, '-o', output, '--zero-copy-kv', '--quiet'];

console.log(`command: npx tsx bench/zero-copy.ts --runs ${runs}   (node ${process.version})`);
console.log(`timed:   ${rewrite.join(' ')}`);
console.log(`file:    ${input} (${statSync(input).size} bytes; the caches have no initial state, so they take no file space)`);

const canonical = [...trtx, 'rewrite', input, '-o', join(dir, 'canonical.pte'), '--quiet'];
const t = { rewrite: [] as number[], canonical: [] as number[], cp: [] as number[], node: [] as number[] };
for (let i = 0; i < runs; i++) {
  t.cp.push(wall(['cp', input, join(dir, 'cp.pte')]));
  t.node.push(wall(['node', '-e', '0']));
  t.canonical.push(wall(canonical));
  t.rewrite.push(wall(rewrite));
}
const inProcess: number[] = [];
for (let i = 0; i < runs; i++) {
  await withPte(input, async (pte) => {
    const blobs = await readTrtBlobs(pte);
    const t0 = performance.now();
    applyZeroCopyKv(pte.program, blobs);
    inProcess.push((performance.now() - t0) / 1000);
  });
}

const before = await decodeOf(input);
const after = await decodeOf(output);
const gb = (n: number) => `${(n / 1e9).toFixed(3)} GB`;
console.log('\nstaging per decode step (host->device + device->host, bytes the et_copy kernels move)');
console.log(`  staged     ${gb(before.total).padStart(10)} (${before.total} B), caches ${gb(before.caches)} (${before.caches} B)`);
console.log(`  zero-copy  ${gb(after.total).padStart(10)} (${after.total} B), caches ${gb(after.caches)} (${after.caches} B)`);
console.log(
  `\nrewrite wall time, median of ${runs}: ${fmtMs(median(t.rewrite))}; cp ${fmtMs(median(t.cp))}; node -e 0 ${fmtMs(median(t.node))}`,
);
console.log(
  `  ratio rewrite / cp: ${(median(t.rewrite) / median(t.cp)).toFixed(1)}x; rewrite minus node start-up: ${fmtMs(median(t.rewrite) - median(t.node))}`,
);
console.log(`  the same command without --zero-copy-kv (canonical re-encoding, checks, fsynced write): ${fmtMs(median(t.canonical))}`);
console.log(`  the pass alone (in process, both methods): ${fmtMs(median(inProcess))}`);
for (const f of ['cp.pte', 'canonical.pte']) rmSync(join(dir, f), { force: true });
