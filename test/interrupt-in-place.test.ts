// Ctrl-C during an in-place head write (issue 43): the write holds SIGINT
// until its few fsyncs are done (src/util/cleanup.ts), so the file then
// holds the new program, and the exit message must say so, not only
// "temporary files removed" as if nothing had changed. Where the step did
// not finish (a crash simulated by a hook that throws), the message says
// what the file holds: the old program, or the interrupted-rewrite marker
// and the command that finishes it.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { trtBesideCuda } from '../src/examples/programs.js';
import { withPte } from '../src/pte/open.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const src = (p: string) => JSON.stringify(join(REPO, 'src', p));

/** Sets a 1 GiB budget on `file` in place in a process with the command line's signal handlers; SIGINT after `signalAt`, a crash at `crashAt`. */
function rewriteInterrupted(file: string, signalAt: string, crashAt: string | null) {
  const script = join(tempDir('in-place-sigint'), 'script.mts');
  writeFileSync(
    script,
    `import { installSignalCleanup } from ${src('cli/signals.ts')};
     import { openPte } from ${src('pte/open.ts')};
     import { publishRewrite } from ${src('pte/in-place.ts')};
     import { budgetPass } from ${src('passes/budget.ts')};
     installSignalCleanup();
     const pte = await openPte(${JSON.stringify(file)});
     const fileSegments = pte.program.segments.map((s) => ({ ...s }));
     const report = budgetPass({ budget: 1n << 30n })(pte.program);
     await publishRewrite(pte, pte.program, fileSegments, {
       inPlace: true, output: ${JSON.stringify(file)}, changed: report.changed,
       hooks: { afterStep: async (step) => {
         // The signal is handled (and held) while the step waits, before the crash if there is one.
         if (step === ${JSON.stringify(signalAt)}) process.kill(process.pid, 'SIGINT');
         await new Promise((r) => setTimeout(r, 50));
         if (step === ${JSON.stringify(crashAt)}) throw new Error('crash');
       } },
     }).catch(() => {});
     await pte.close();
     setTimeout(() => {}, 10_000);`,
  );
  return spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: REPO, encoding: 'utf8', timeout: 30_000 });
}

const budgetOf = (file: string) =>
  withPte(file, (pte) => {
    const d = pte.program.executionPlan[0].delegates.find((x) => x.id === 'TensorRTBackend')!;
    return Promise.resolve(decodeCompileSpecs(d.compileSpecs).specs.weightStreamingBudget ?? null);
  });

describe('SIGINT during an in-place head write', () => {
  it('the write finishes and the message says the file was changed', { timeout: 60_000 }, async () => {
    const file = join(tempDir('in-place-done'), 'model.pte');
    await writeFixture(file, trtBesideCuda());
    const r = rewriteInterrupted(file, 'journal', null);
    expect(r.signal, r.stderr).toBe('SIGINT');
    expect(r.stderr).toContain(`trtx: stopped by SIGINT; temporary files removed; ${file} was changed: it holds the new program`);
    expect(await budgetOf(file)).toBe(1n << 30n);
  });

  it('a crash before the marker: the message says the file was left as it was', { timeout: 60_000 }, async () => {
    const file = join(tempDir('in-place-kept'), 'model.pte');
    await writeFixture(file, trtBesideCuda());
    const r = rewriteInterrupted(file, 'journal', 'journal');
    expect(r.signal, r.stderr).toBe('SIGINT');
    expect(r.stderr).toContain(`${file} was left as it was (the old program)`);
    expect(r.stderr).not.toContain('was changed');
    expect(await budgetOf(file)).toBeNull();
  });

  it('a crash after the marker: the message names the command that finishes it', { timeout: 60_000 }, async () => {
    const file = join(tempDir('in-place-marked'), 'model.pte');
    await writeFixture(file, trtBesideCuda());
    const r = rewriteInterrupted(file, 'marker', 'body');
    expect(r.signal, r.stderr).toBe('SIGINT');
    expect(r.stderr).toContain(`${file} is marked as an interrupted in-place rewrite: rerun \`trtx rewrite ${file} --in-place\``);
  });
});
