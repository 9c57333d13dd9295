// What `trtx export`'s pre-flight sniff of a pickle costs on hostile input
// (issue 43), before and after, in one run:
//   scan   the globals of N KiB of `c` (no newline): the regular expressions
//          the sniff used (each start position rescans the run: quadratic)
//          against src/export/pickle-globals.ts's linear scan; and the scan
//          alone on 16 MiB, the most the sniff reads
//   bomb   a zip whose data.pkl is 1 MB of deflate that inflates to
//          --bomb-mib MiB (fixtures/model-zip.ts): the member inflated whole,
//          as the sniff did, against src/export/model-kind.ts's modelKind
//          (inflation stopped at PICKLE_LIMIT); each in a child process, peak
//          RSS from GNU time
//
//   npx tsx bench/pickle-scan.ts [--sizes 25,50,100] (KiB) [--bomb-mib 1024]
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import { deflateBomb, pickleNaming, zipArchive } from '../fixtures/model-zip.js';
import { modelKind } from '../src/export/model-kind.js';
import { pickleGlobals } from '../src/export/pickle-globals.js';
import { arg, MiB, timed } from './lib.js';
import { regexGlobals } from '../fixtures/pickle-regex-oracle.js';

function seconds(f: () => unknown): number {
  const t0 = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** The child: sniff FILE the old way (`old`: data.pkl inflated whole) or the new (`new`: modelKind), print what it found. */
async function child(how: string, file: string): Promise<void> {
  if (how === 'old') {
    const zip = readFileSync(file);
    const nameLength = zip.readUInt16LE(26);
    const start = 30 + nameLength + zip.readUInt16LE(28);
    const pickle = inflateRawSync(zip.subarray(start, start + zip.readUInt32LE(18)));
    console.log(JSON.stringify({ inflated: pickle.length, globals: regexGlobals(pickle.subarray(0, 4096)) }));
  } else {
    console.log(JSON.stringify(await modelKind(file, statSync(file).size)));
  }
}

function scan(sizes: number[]): void {
  console.log('scan: N KiB of `c`, no newline');
  console.log('| KiB | regular expressions | linear scan | ratio |');
  console.log('| --- | --- | --- | --- |');
  for (const kib of sizes) {
    const bytes = Buffer.alloc(kib * 1024, 'c');
    const old = seconds(() => regexGlobals(bytes));
    const now = seconds(() => pickleGlobals(bytes));
    console.log(`| ${kib} | ${(old * 1000).toFixed(0)} ms | ${(now * 1000).toFixed(2)} ms | ${(old / now).toFixed(0)}x |`);
  }
  for (const [what, bytes] of [
    ['16 MiB of `c`', Buffer.alloc(16 * MiB, 'c')],
    ['16 MiB of `cc\\n`', Buffer.alloc(16 * MiB, 'cc\n')],
    ['16 MiB of SHORT_BINUNICODE `a`...', Buffer.concat([Buffer.from([0x8c, 1]), Buffer.alloc(16 * MiB, 'a')])],
  ] as const)
    console.log(`linear scan, ${what}: ${(seconds(() => pickleGlobals(bytes)) * 1000).toFixed(0)} ms`);
}

function bomb(mib: number): void {
  const dir = mkdtempSync(join(tmpdir(), 'trtx-pickle-bomb-'));
  try {
    const file = join(dir, 'bomb.pt');
    writeFileSync(file, zipArchive([deflateBomb('bomb/data.pkl', pickleNaming('mymodel.Net'), mib, Buffer.from('.'))]));
    console.log(`\nbomb: ${(statSync(file).size / MiB).toFixed(2)} MiB .pt, data.pkl inflates to ${mib} MiB`);
    console.log('| sniff | wall | peak RSS | found |');
    console.log('| --- | --- | --- | --- |');
    const self = fileURLToPath(import.meta.url);
    const runs = ['old', 'new'].map((how) => ({ how, run: timed([process.execPath, '--import', 'tsx', self, '--child', how, file]) }));
    for (const { how, run } of runs) {
      const found = run.status === 0 ? run.stdout.trim() : `exit ${run.status}: ${run.stderr.split('\n').at(-1)}`;
      console.log(
        `| ${how === 'old' ? 'inflated whole' : 'modelKind'} | ${run.seconds.toFixed(2)} s | ${(run.maxRssKiB / 1024).toFixed(0)} MiB | ${found} |`,
      );
    }
    const [old, now] = runs.map((r) => r.run);
    if (old && now)
      console.log(`peak RSS ratio: ${(old.maxRssKiB / now.maxRssKiB).toFixed(1)}x, time ratio: ${(old.seconds / now.seconds).toFixed(1)}x`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) {
  await child(process.argv[childAt + 1] ?? '', process.argv[childAt + 2] ?? '');
} else {
  console.log(`npx tsx bench/pickle-scan.ts ${process.argv.slice(2).join(' ')}`.trim());
  scan(arg('--sizes', '25,50,100').split(',').map(Number));
  bomb(Number(arg('--bomb-mib', '1024')));
}
