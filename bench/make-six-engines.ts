// The runner's shared-scratch and warm-pool benchmark programs, written here
// because the GPU machine has no node:
//   six-engines-equal.pte  multiEngine(6) with every engine's scratch set to
//                          281,018,368 B (268 MiB, the per-engine need in
//                          pytorch/TensorRT#4600's six-engine measurement):
//                          private scratch holds six of them, shared one.
//   multi-engine-25.pte    multiEngine(25): a step of 25 TensorRT delegates
//                          (scratch 1..25 MiB), for cold vs warm pool.
//
//   npx tsx bench/make-six-engines.ts [--out DIR]   (default .device/bench)
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { multiEngine } from '../src/examples/programs.js';
import type { ProgramSpec } from '../src/examples/spec.js';

const SEED_SCRATCH_BYTES = 281_018_368;

/** multiEngine(n) with the same scratch need on every engine. */
function equalScratch(n: number, bytes: number): ProgramSpec {
  const spec = multiEngine(n);
  for (const m of spec.methods) {
    for (const d of m.delegates) {
      if (d.blob.kind !== 'tensorrt' || d.blob.engine instanceof Uint8Array) throw new Error(`${d.name}: not a reference engine`);
      d.blob.engine = { ...d.blob.engine, scratch: { baseBytes: bytes } };
    }
  }
  return spec;
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--out');
  const out = resolve(i >= 0 ? process.argv[i + 1] : '.device/bench');
  mkdirSync(out, { recursive: true });
  const files: [string, ProgramSpec][] = [
    ['six-engines-equal.pte', equalScratch(6, SEED_SCRATCH_BYTES)],
    ['multi-engine-25.pte', multiEngine(25)],
  ];
  for (const [name, spec] of files) {
    const r = await writeFixture(join(out, name), spec);
    process.stdout.write(`${join(out, name)}  ${r.fileSize} bytes\n`);
  }
}

main().catch((e) => {
  process.stderr.write(`make-six-engines: ${(e as Error).message}\n`);
  process.exit(1);
});
