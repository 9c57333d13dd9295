// What a killed writer leaves beside its target (issue 27 item 4): SIGKILL
// during a full rewrite leaves `.NAME.<pid>-<hex>.tmp`, as large as the
// program; the next writer of that target removes it once its writer is
// gone, and says so. It never removes anything else: a file of another
// name, of another target, a live writer's, or one of an earlier trtx that
// did not record its process (that one is reported with the command that
// removes it).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { writeSparsePte } from '../fixtures/sparse.js';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { multiEngine } from '../src/examples/programs.js';
import { journalPath } from '../src/pte/in-place.js';
import { sweepStaleTemps } from '../src/util/stale-temps.js';
import { legacyTempPath, tempPath } from '../src/util/target.js';
import { eventually } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';
import { spawnTrtx } from './helpers/spawn-trtx.js';
import { tempDir } from './helpers/temp.js';

/** A process id that is not running: a child that has already exited. */
function deadPid(): Promise<number> {
  return Promise.resolve(spawnSync('true').pid);
}

describe('the next writer of a target', () => {
  it('removes the temporary file of a rewrite killed with SIGKILL mid-write, and says so', { timeout: 120_000 }, async () => {
    const dir = tempDir('stale-kill');
    const big = join(dir, 'big.pte');
    const size = writeSparsePte(big, multiEngine(4), 128 * 1024 * 1024).fileSize;
    const work = join(dir, 'work');
    mkdirSync(work);
    const out = join(work, 'out.pte');
    const p = spawnTrtx(['rewrite', big, '-o', out, '--budget', '1GiB']);
    const temp = () => readdirSync(work).find((f) => f.endsWith('.tmp'));
    const hit = await eventually(() => temp() !== undefined || p.child.exitCode !== null, 60_000, 3);
    expect(hit && p.child.exitCode === null, `the rewrite ended before writing: ${p.stderr()}`).toBe(true);
    p.child.kill('SIGKILL');
    const r = await p.exited;
    expect(r.signal).toBe('SIGKILL');
    const left = temp();
    // SIGKILL runs no handler: the temporary file stays, named for its writer.
    expect(left).toBe(`.out.pte.${p.child.pid}-${left!.slice(-16, -4)}.tmp`);

    const again = await runCli(['rewrite', big, '-o', out, '--budget', '1GiB', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const doc = JSON.parse(again.stdout);
    expect(doc.stale_temporary_files).toEqual({ removed: [join(work, left!)], left: [] });
    expect(readdirSync(work)).toEqual(['out.pte']);
    expect(statSync(out).size).toBe(size);
  });

  it('removes an in-place journal temporary of a dead writer, in text output too', { timeout: 60_000 }, async () => {
    const dir = tempDir('stale-journal');
    const file = join(dir, 'model.pte');
    await writeFixture(file, catalogueEntry('trt-single.pte').build());
    const planted = tempPath(journalPath(file), await deadPid(), 'abcdef012345');
    writeFileSync(planted, 'half a journal');
    const r = await runCli(['rewrite', file, '--in-place', '--budget', '1GiB']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`removed ${planted}: a temporary file of a trtx writer that was killed`);
    expect(existsSync(planted)).toBe(false);
  });

  it('leaves and reports what it cannot attribute; never touches another name, target, a link or a live writer', async () => {
    const dir = tempDir('stale-unit');
    const target = join(dir, 'out.pte');
    const dead = await deadPid();
    const legacy = legacyTempPath(target, '0123456789ab');
    const live = tempPath(target, process.ppid, '00000000aaaa');
    const ownLive = tempPath(target, process.pid, '00000000bbbb');
    const other = tempPath(join(dir, 'other.pte'), dead, '00000000cccc');
    const near = `${tempPath(target, dead, '00000000dddd')}.bak`;
    const link = tempPath(target, dead, '00000000eeee');
    const gone = tempPath(target, dead, '00000000ffff');
    for (const f of [legacy, live, ownLive, other, near, join(dir, 'keep.tmp'), gone]) writeFileSync(f, 'x');
    symlinkSync(join(dir, 'keep.tmp'), link);
    const r = await sweepStaleTemps([target]);
    expect(r.removed).toEqual([gone]);
    expect(r.left.map((l) => l.path).sort()).toEqual([legacy, live].sort());
    for (const l of r.left) expect(l.remove).toBe(`rm -- '${l.path}'`);
    expect(readdirSync(dir).sort()).toEqual(
      [legacy, live, ownLive, other, near, link, join(dir, 'keep.tmp')].map((f) => basename(f)).sort(),
    );
  });

  it('reports a legacy temporary file beside a rewrite target with the command to remove it', { timeout: 60_000 }, async () => {
    const dir = tempDir('stale-legacy');
    const src = join(dir, 'in.pte');
    await writeFixture(src, catalogueEntry('trt-single.pte').build());
    const out = join(dir, 'out.pte');
    const legacy = legacyTempPath(out, 'fedcba987654');
    writeFileSync(legacy, 'x');
    const r = await runCli(['rewrite', src, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`note: left ${legacy}: written by an earlier trtx`);
    expect(r.stdout).toContain(`rm -- '${legacy}'`);
    expect(existsSync(legacy)).toBe(true);
  });
});
