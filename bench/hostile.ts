// What one input byte may cost: wall time, peak RSS and output of `trtx
// check` and `trtx inspect --json` on three families of inputs at growing
// sizes, against the floor of the same command on a tiny program.
//   sound       a sound program of N distinct named tensors (what real
//               programs look like, scaled up)
//   shared      every values entry an offset to one tensor (refused:
//               PTE_DECODE_BUDGET)
//   repeated    one tensor with a 64 KiB name listed as the plan's input N
//               times (sound flatbuffer; bounded by the reports)
//
//   npx tsx bench/hostile.ts [--sizes 0.25,1,4] (MiB)
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repeatedLongName, sharedValueTable } from '../fixtures/hostile.js';
import { ScalarType, type EValue, type Program } from '../src/pte/model.js';
import { layoutProgram } from '../src/pte/write.js';
import { arg, ensureBundle, MiB, timed } from './lib.js';

const sizes = arg('--sizes', '0.25,1,4').split(',').map(Number);

/** A sound program of about `bytes` bytes: distinct tensors, each named and listed once as an input. */
function soundProgram(bytes: number): Uint8Array {
  const n = Math.max(1, Math.floor(bytes / 150));
  const values: EValue[] = Array.from({ length: n }, (_, i) => ({
    type: 'Tensor',
    tensor: {
      scalarType: ScalarType.FLOAT,
      storageOffset: 0,
      sizes: [1, 16],
      dimOrder: [0, 1],
      requiresGrad: false,
      dataBufferIdx: 0,
      allocationInfo: null,
      layout: 0,
      shapeDynamism: 0,
      extraTensorInfo: {
        mutableDataSegmentsIdx: 0n,
        fullyQualifiedName: `model.layers.${i}.self_attn.k_proj.weight`,
        location: 0,
        deviceType: 0,
        deviceIndex: 0,
      },
    },
  }));
  const program: Program = {
    version: 0,
    executionPlan: [
      {
        name: 'forward',
        containerMetaType: null,
        values,
        inputs: values.map((_, i) => i),
        outputs: [],
        chains: [],
        operators: [],
        delegates: [],
        nonConstBufferSizes: [0n],
        nonConstBufferDevice: [],
      },
    ],
    constantBuffer: [],
    backendDelegateData: [],
    segments: [],
    constantSegment: null,
    mutableDataSegments: [],
    namedData: [],
  };
  return layoutProgram(program, [], { alignment: 16, extendedHeader: false }).head;
}

const families: Record<string, (bytes: number) => Uint8Array> = {
  sound: soundProgram,
  shared: (bytes) => sharedValueTable({ entries: Math.floor(bytes / 4), nameBytes: 4096 }),
  repeated: (bytes) => repeatedLongName({ references: Math.floor(Math.max(0, bytes - 65_536) / 4), nameBytes: 65_536 }),
};

ensureBundle();
const dir = mkdtempSync(join(tmpdir(), 'trtx-bench-hostile-'));
/** Runs trtx with its stdout in a file (outputs can pass the pipe buffer); returns the run and the output size. */
const trtx = (args: string[]) => {
  const out = join(dir, 'stdout');
  const r = timed(['sh', '-c', 'exec "$@" > "$0"', out, process.execPath, 'bin/trtx', ...args]);
  const text = readFileSync(out, 'utf8');
  return { ...r, stdout: text.length > 4096 ? text.slice(0, 4096) : text, outputBytes: statSync(out).size };
};
try {
  console.log(`$ npx tsx bench/hostile.ts --sizes ${sizes.join(',')}   (node ${process.version})`);
  const floors: Record<string, { s: number; kib: number }> = {};
  const tiny = join(dir, 'tiny.pte');
  writeFileSync(tiny, soundProgram(1));
  for (const cmd of ['check', 'inspect --json']) {
    const r = trtx([...cmd.split(' '), tiny]);
    floors[cmd] = { s: r.seconds, kib: r.maxRssKiB };
    console.log(`floor ${cmd}: ${(r.seconds * 1000).toFixed(0)} ms, ${(r.maxRssKiB / 1024).toFixed(1)} MiB`);
  }
  console.log(
    '\n| input | size | command | exit | wall | peak RSS | RSS over floor per input MiB | ms over floor per input MiB | output bytes per input byte |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const [family, make] of Object.entries(families)) {
    for (const mib of sizes) {
      const bytes = make(Math.round(mib * MiB));
      const file = join(dir, `${family}-${mib}.pte`);
      writeFileSync(file, bytes);
      const inMiB = bytes.length / MiB;
      for (const cmd of ['check', 'inspect --json']) {
        const r = trtx([...cmd.split(' '), file]);
        const f = floors[cmd];
        const code =
          r.status === 0
            ? 'ok'
            : (r.stdout.match(/"code": "([A-Z_]+)"/)?.[1] ?? r.stderr.match(/error: ([A-Z_]+)/)?.[1] ?? `exit ${r.status}`);
        console.log(
          `| ${family} | ${(bytes.length / 1024).toFixed(0)} KiB | ${cmd} | ${r.status} ${code} | ${(r.seconds * 1000).toFixed(0)} ms | ${(r.maxRssKiB / 1024).toFixed(1)} MiB | ${((r.maxRssKiB - f.kib) / 1024 / inMiB).toFixed(1)} | ${(((r.seconds - f.s) * 1000) / inMiB).toFixed(0)} | ${(r.outputBytes / bytes.length).toFixed(2)} |`,
        );
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
