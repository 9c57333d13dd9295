// The reference lowering on a GPU, in two halves around a device lease
// (the GPU machine has no node): what the programs compute on CUDA against
// eager PyTorch, staged and zero-copy, caller stream off and on.
//
//   npx tsx scripts/gpu-reference.ts prepare DIR PROGRAM.pte...
//     copies each exported program, its zero-copy twin (trtx rewrite
//     --zero-copy-kv) and the recorded inputs of its reference file
//     (PROGRAM.pte.reference.json, as trtx verify feeds them) into DIR.
//   (device) bash native-runner/tests/reference_gpu.sh SDK DIR OUT
//     builds the CUDA runner and runs every program of DIR on cuda and on
//     the CPU with --inputs, writing each run's --outputs into OUT.
//   npx tsx scripts/gpu-reference.ts compare DIR OUT
//     compares every outputs file with the recorded outputs (verify's
//     comparison, per-dtype tolerances) and prints one table row per run.
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readReference, referencePathOf } from '../src/reference/read.js';
import { compareRunOutputs, writeReferenceInputs } from '../src/verify/reference.js';

const BIN = fileURLToPath(new URL('../bin/trtx', import.meta.url));

async function prepare(dir: string, programs: string[]): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (const program of programs) {
    const name = basename(program, '.pte');
    const reference = await readReference(referencePathOf(program));
    const methods = reference.methods.map((m) => m.name);
    copyFileSync(program, join(dir, `${name}.staged.pte`));
    execFileSync(BIN, ['rewrite', '--zero-copy-kv', program, '-o', join(dir, `${name}.zero-copy.pte`), '--force'], { stdio: 'ignore' });
    const inputs = await writeReferenceInputs(reference, methods, reference.steps, dir);
    copyFileSync(inputs, join(dir, `${name}.inputs.trxt`));
    writeFileSync(join(dir, `${name}.steps`), `${reference.steps}\n`);
    copyFileSync(referencePathOf(program), join(dir, `${name}.reference.json`));
    console.log(`prepared ${name}: methods ${methods.join(', ')}, ${reference.steps} steps`);
  }
}

async function compare(dir: string, out: string): Promise<number> {
  let failed = 0;
  console.log('| run | output | max abs | max rel | result |\n| --- | --- | --- | --- | --- |');
  for (const file of readdirSync(out)
    .filter((f) => f.endsWith('.trxt'))
    .sort()) {
    // NAME.VARIANT.DEVICE.stream-MODE.trxt
    const m = /^(.+)\.(staged|zero-copy)\.(cuda|cpu)\.stream-(on|off)\.trxt$/.exec(file);
    if (!m) continue;
    const [, name, variant, device, stream] = m;
    const refFile = join(dir, `${name}.reference.json`);
    if (!existsSync(refFile)) continue;
    const reference = await readReference(refFile);
    const label = `${name} ${variant} ${device} stream ${stream}`;
    const methods = reference.methods.map((x) => x.name);
    const rows = await compareRunOutputs(
      reference,
      methods,
      reference.steps,
      join(out, file),
      // The pattern above admits only these two variants.
      { label, variant: variant as 'staged' | 'zero-copy', caller_stream: stream === 'on' },
      {},
    );
    for (const c of rows) {
      if (!c.ok) failed++;
      const num = (x: number | null) => (x === null ? '-' : x.toExponential(2));
      console.log(
        `| ${label} | ${c.method}[${c.output}] | ${num(c.max_abs)} | ${num(c.max_rel)} | ${c.ok ? 'ok' : `FAIL ${c.error ?? ''}`} |`,
      );
    }
  }
  console.log(`\n${failed === 0 ? 'every run within tolerance' : `${failed} comparison(s) over tolerance`}`);
  return failed === 0 ? 0 : 1;
}

const [verb, ...rest] = process.argv.slice(2);
if (verb === 'prepare' && rest.length >= 2) await prepare(rest[0], rest.slice(1));
else if (verb === 'compare' && rest.length === 2) process.exitCode = await compare(rest[0], rest[1]);
else {
  console.error('usage: gpu-reference.ts prepare DIR PROGRAM.pte... | compare DIR OUT');
  process.exitCode = 2;
}
