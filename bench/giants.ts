// The real-size hostile shapes of issue 43 (items 3 and 6) at the report's
// sizes: peak RSS and wall time of `check`, `inspect --json` (and `diff A A`
// for the program) from GNU time, exit and code. The giants are sparse
// (fixtures/sparse-giants.ts): the 2 GiB files take a few KiB to 128 MiB
// of disk; the shared-segment file is written whole (63 MB).
//   shared-segment    129 TensorRT delegates naming one segment of 60 MiB metadata
//   engine-tail-step  a version-1 reference engine of 2 GiB - 1, its one step at the end
//   engine-every-page the same engine with a step on every 64 KiB page
//   engine-shared     a 64 MiB engine (step at its end) that 100 delegates name
//   program-every-page a 2 GiB - 1 program FlatBuffer touching every 64 KiB page
//
//   npx tsx bench/giants.ts [--bin PATH/bin/trtx] [--only NAME]
// --bin runs another checkout's CLI on the same files (the before numbers).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sharedSegmentDelegates } from '../fixtures/hostile.js';
import { writeSparseEnginePte, writeSparseProgram } from '../fixtures/sparse-giants.js';
import { arg, ensureBundle, MiB, timed } from './lib.js';

const bin = resolve(arg('--bin', 'bin/trtx'));
const only = arg('--only', '');
const GIANT = 2 ** 31 - 1;

const shapes: Record<string, (file: string) => void> = {
  'shared-segment': (f) => writeFileSync(f, sharedSegmentDelegates({ delegates: 129, metadataBytes: 60 * MiB })),
  'engine-tail-step': (f) => writeSparseEnginePte(f, { engineBytes: GIANT, shape: 'tail-step' }),
  'engine-every-page': (f) => writeSparseEnginePte(f, { engineBytes: GIANT, shape: 'every-page' }),
  'engine-shared': (f) => writeSparseEnginePte(f, { engineBytes: 64 * MiB, shape: 'tail-step', delegates: 100 }),
  'program-every-page': (f) => writeSparseProgram(f, GIANT),
};

if (bin === resolve('bin/trtx')) ensureBundle();
const dir = mkdtempSync(join(tmpdir(), 'trtx-bench-giants-'));
try {
  console.log(`$ npx tsx bench/giants.ts --bin ${bin}   (node ${process.version})`);
  console.log('\n| shape | command | exit | wall | peak RSS |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const [name, make] of Object.entries(shapes)) {
    if (only && name !== only) continue;
    const file = join(dir, `${name}.pte`);
    make(file);
    const commands = [['check', file], ['inspect', '--json', file], ...(name === 'program-every-page' ? [['diff', file, file]] : [])];
    for (const args of commands) {
      const out = join(dir, 'stdout');
      const r = timed(['sh', '-c', 'exec "$@" > "$0"', out, process.execPath, bin, ...args]);
      const stdout = readFileSync(out, 'utf8').slice(0, 1 << 20);
      const code =
        r.status === 0
          ? 'ok'
          : (stdout.match(/"code": "([A-Z0-9_]+)"/)?.[1] ??
            r.stderr.match(/error: ([A-Z0-9_]+)/)?.[1] ??
            stdout.match(/error ([A-Z0-9_]+)/)?.[1] ??
            (/heap out of memory/.test(r.stderr) ? 'V8 heap out of memory' : `exit ${r.status}`));
      const command = args.map((a) => (a === file ? 'FILE' : a)).join(' ');
      console.log(`| ${name} | ${command} | ${r.status} ${code} | ${r.seconds.toFixed(2)} s | ${(r.maxRssKiB / 1024).toFixed(0)} MiB |`);
    }
    rmSync(file, { force: true });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
