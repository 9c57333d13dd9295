// Ctrl-C (SIGINT) and SIGTERM at several moments of a command leave nothing
// behind but the untouched target: no temporary file beside it, nothing in
// the temp dir, no child process still running; trtx ends by the signal
// itself, which a shell reports as 130 / 143. Each command runs as its own process (bin/trtx) with a
// temp dir of its own, so whatever it leaves there is visible.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSparsePte } from '../fixtures/sparse.js';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { multiEngine } from '../src/examples/programs.js';
import { openPte } from '../src/pte/open.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { REPO, alive, eventually, workspace } from './helpers/bridge.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { processesMentioning, spawnTrtx, type TrtxProcess } from './helpers/spawn-trtx.js';
import { tempDir } from './helpers/temp.js';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
const ENGINE_BYTES = 128 * 1024 * 1024;

const big = join(tempDir('interrupt-src'), 'big.pte');
const bigSize = writeSparsePte(big, multiEngine(4), ENGINE_BYTES).fileSize;
const OLD_TARGET = 'the previous out.pte, which an interrupted rewrite must leave as it is\n';

/** A folder with its own TMPDIR for the child, and the target already there. */
function scene(prefix: string) {
  const dir = tempDir(prefix);
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  const work = join(dir, 'work');
  mkdirSync(work);
  return { dir, tmp, work };
}

/** The end the signal handler gives: by the signal itself (asserted after what was left behind, which matters more). */
function expectStoppedBy(r: { code: number | null; signal: NodeJS.Signals | null }, p: TrtxProcess, signal: (typeof SIGNALS)[number]) {
  expect(r, p.stderr()).toEqual({ code: null, signal });
  expect(p.stderr()).toContain(`stopped by ${signal}`);
}

/** What the child left in its temp dir, apart from tsx's compile cache (bin/trtx runs the sources through tsx while the bundle is older than them). */
const leftIn = (tmp: string) => readdirSync(tmp).filter((f) => !/^tsx-\d+$/.test(f));

const tmpName = (work: string) => readdirSync(work).find((f) => f.endsWith('.tmp'));
const tmpSize = (work: string) => {
  const name = tmpName(work);
  try {
    return name ? statSync(join(work, name)).size : -1;
  } catch {
    return -1;
  }
};

describe('trtx rewrite of a large program, interrupted', () => {
  const moments = {
    'the temporary file has just appeared': (work: string) => tmpName(work) !== undefined,
    'halfway through the copy': (work: string) => tmpSize(work) >= bigSize / 2,
    'the copy is complete (truncate, fsync, rename)': (work: string) => tmpSize(work) >= bigSize,
  };
  for (const signal of SIGNALS) {
    for (const [moment, reached] of Object.entries(moments)) {
      it(`${signal} when ${moment}: only the untouched target is left`, { timeout: 60_000 }, async () => {
        const { tmp, work } = scene('interrupt-rewrite');
        const out = join(work, 'out.pte');
        writeFileSync(out, OLD_TARGET);
        const before = statSync(big);
        const p = spawnTrtx(['rewrite', big, '-o', out, '--budget', '1GiB'], { env: { TMPDIR: tmp } });
        const hit = await eventually(() => reached(work) || p.child.exitCode !== null, 30_000, 3);
        expect(hit && p.child.exitCode === null, `the rewrite ended before "${moment}": ${p.stderr()}`).toBe(true);
        p.child.kill(signal);
        const r = await p.exited;

        expect(readdirSync(work)).toEqual(['out.pte']);
        const target = readFileSync(out);
        if (target.toString('utf8') !== OLD_TARGET) {
          // Only possible when the signal came after the rename: then the
          // target is the whole new program, never a part of one.
          expect(moment).toMatch(/complete/);
          const pte = await openPte(out);
          try {
            expect(pte.fileSize).toBe(bigSize);
            const budgets = pte.program.executionPlan[0].delegates.map(
              (d) => decodeCompileSpecs(d.compileSpecs).specs.weightStreamingBudget,
            );
            expect(budgets).toEqual([1n << 30n, 1n << 30n, 1n << 30n, 1n << 30n]);
          } finally {
            await pte.close();
          }
        }
        expect(leftIn(tmp)).toEqual([]);
        const after = statSync(big);
        expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
        expectStoppedBy(r, p, signal);
      });
    }
  }

  it('SIGINT right after start (before any file exists) leaves nothing either', { timeout: 60_000 }, async () => {
    const { tmp, work } = scene('interrupt-rewrite');
    const out = join(work, 'out.pte');
    const p = spawnTrtx(['rewrite', big, '-o', out, '--budget', '1GiB'], { env: { TMPDIR: tmp } });
    await new Promise((r) => setTimeout(r, 150));
    p.child.kill('SIGINT');
    const r = await p.exited;
    // Before bin/trtx installs its handler node's default applies; after it,
    // the handler ends the process by the signal too. Either way nothing is left.
    expect(r).toEqual({ code: null, signal: 'SIGINT' });
    expect(readdirSync(work)).toEqual([]);
    expect(leftIn(tmp)).toEqual([]);
  });
});

describe('trtx demo, interrupted', () => {
  // The moments are the temp folders the demo makes as it goes: verify's
  // working folder (the zero-copy twin is written there) and each run of the
  // native runner (a child process writing its report there).
  const moments = { 'verify starts': /^trtx-verify-/, 'the native runner runs': /^trtx-runner-/ };
  for (const signal of SIGNALS) {
    for (const [moment, pattern] of Object.entries(moments)) {
      it(`${signal} when ${moment}: no temp folder, no half-written program, no runner left`, { timeout: BUILD_TIMEOUT_MS }, async () => {
        const runner = await testRunner();
        const { tmp, work } = scene('interrupt-demo');
        let p: TrtxProcess | undefined;
        let fired = false;
        let r: Awaited<TrtxProcess['exited']> | undefined;
        const watcher = watch(tmp, (_event, name) => {
          if (!fired && p && typeof name === 'string' && pattern.test(name)) {
            fired = true;
            p.child.kill(signal);
          }
        });
        try {
          // Once into a folder of the user's, once into one the demo makes.
          if (moment === 'the native runner runs') {
            mkdirSync(join(work, 'demo'));
            writeFileSync(join(work, 'demo', 'notes.txt'), 'mine');
          }
          p = spawnTrtx(['demo', '--out', join(work, 'demo')], { env: { TMPDIR: tmp, TRTX_RUNNER_BIN: runner } });
          r = await p.exited;
          expect(fired, `the demo ended before "${moment}": ${p.stderr()}`).toBe(true);
        } finally {
          watcher.close();
        }
        expect(leftIn(tmp)).toEqual([]);
        // Nothing of the interrupted demo is left: not its programs, not the
        // folder it made; the user's folder and file stay.
        if (moment === 'the native runner runs') expect(readdirSync(join(work, 'demo'))).toEqual(['notes.txt']);
        else expect(existsSync(join(work, 'demo'))).toBe(false);
        expect(await eventually(() => processesMentioning(tmp).length === 0, 5000)).toBe(true);
        expectStoppedBy(r, p, signal);
      });
    }
  }
});

describe('trtx export, interrupted', () => {
  for (const signal of SIGNALS) {
    it(`${signal} while the bridge writes the program: no output, no bridge temp file, no Python left`, { timeout: 60_000 }, async () => {
      const ws = workspace();
      const { tmp, work } = scene('interrupt-export');
      const program = join(ws.dir, 'double-program.pte');
      await writeFixture(program, kvDecoder());
      const pidfile = join(ws.dir, 'grandchild.pid');
      const out = join(work, 'model.pte');
      const p = spawnTrtx(['export', ws.file('model.pt2'), '-o', out, '--python', join(REPO, 'test', 'doubles', 'python-with-doubles')], {
        env: {
          TMPDIR: tmp,
          TRTX_DOUBLE_PROGRAM: program,
          TRTX_DOUBLE_CALLS: ws.calls,
          TRTX_DOUBLE_FAULT: 'write:hang',
          TRTX_DOUBLE_PIDFILE: pidfile,
        },
      });
      // The bridge has opened its temporary .pte beside OUT and hangs there, with a child of its own.
      expect(await eventually(() => existsSync(pidfile) || p.child.exitCode !== null, 30_000, 3), p.stderr()).toBe(true);
      expect(
        readdirSync(work).some((f) => f.includes('.bridge-')),
        readdirSync(work).join(' '),
      ).toBe(true);
      const grandchild = Number(readFileSync(pidfile, 'utf8'));
      p.child.kill(signal);
      const r = await p.exited;
      expect(readdirSync(work)).toEqual([]);
      expect(leftIn(tmp)).toEqual([]);
      expect(await eventually(() => !alive(grandchild), 5000)).toBe(true);
      expectStoppedBy(r, p, signal);
    });
  }
});
