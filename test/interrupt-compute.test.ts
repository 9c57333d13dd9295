// Ctrl-C and SIGTERM end a command whatever it computes (issue 27 item 10).
// A JavaScript handler cannot run while the event loop is busy, so trtx
// installs its handlers only while something is registered for cleanup
// (src/util/cleanup.ts); `diff --html` of a program with 300,000 planned
// tensors against itself computes for many seconds with nothing registered
// (two memory plans, one page), and a signal ends it at once, leaving no
// page and no temporary file. The signal comes once the command has used
// 3 s of CPU (read from /proc: it is computing, whatever the machine's load),
// well inside the work: 23.6 s on an idle 2-core machine (150,000 tensors took
// 8.4 s and once ended before a fixed 10 s wait in CI). (Before, it ignored
// the signal until the page was built.)
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { eventually } from './helpers/bridge.js';
import { rewrite } from './helpers/diff-files.js';
import { spawnTrtx } from './helpers/spawn-trtx.js';
import { tempDir } from './helpers/temp.js';

let big: string;
beforeAll(async () => {
  const dir = tempDir('interrupt-compute-src');
  const base = join(dir, 'base.pte');
  await writeFixture(base, catalogueEntry('trt-single.pte').build());
  big = await rewrite(base, join(dir, 'planned.pte'), (p) => {
    const plan = p.executionPlan[0];
    const planned = plan.values.find((v) => v.type === 'Tensor' && v.tensor.allocationInfo);
    if (!planned) throw new Error('no planned tensor');
    for (let i = 0; i < 300_000; i++) plan.values.push(structuredClone(planned));
  });
}, 120_000);

/** Whether `pid` still runs (and is not a zombie). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The CPU seconds `pid` has used (utime + stime of /proc/PID/stat, in clock ticks of 1/100 s); null once it is gone. */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

describe('a command computing synchronously, signalled', () => {
  for (const [signal, args] of [
    ['SIGINT', (out: string) => ['diff', big, big, '--html', join(out, 'diff.html')]],
    ['SIGTERM', (out: string) => ['diff', big, big, '--html', join(out, 'diff.html')]],
  ] as const) {
    it(`${signal} ends diff --html within seconds, leaving nothing`, { timeout: 120_000 }, async () => {
      const out = tempDir('interrupt-compute');
      const p = spawnTrtx(args(out));
      // Well into the work: starting, reading and decoding take about a second of CPU.
      const busy = await eventually(() => (cpuSeconds(p.child.pid!) ?? Infinity) >= 3, 60_000, 50);
      expect(busy, p.stderr()).toBe(true);
      expect(p.child.exitCode, p.stderr()).toBeNull();
      p.child.kill(signal);
      const ended = await eventually(() => p.child.exitCode !== null || p.child.signalCode !== null, 5000, 20);
      if (!ended && running(p.child.pid!)) p.child.kill('SIGKILL');
      const r = await p.exited;
      expect(ended, `still running 5 s after ${signal}`).toBe(true);
      // Nothing registered: the signal's default action (a shell reports 128 + its number).
      expect(r, JSON.stringify(r)).toMatchObject({ code: null, signal });
      expect(readdirSync(out)).toEqual([]);
    });
  }
});
