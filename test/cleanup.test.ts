// The interrupt registry (src/util/cleanup.ts), with the command line's
// signal handlers (src/cli/signals.ts), in a process of its own: a
// signal removes what is registered, kills registered process groups and
// ends the process by the signal itself (a shell reports 130 / 143), after
// the exit hooks; inside withSignalsHeld it waits until the step is done.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, alive, eventually } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const CLEANUP = join(REPO, 'src', 'util', 'cleanup.ts');
// The process's handlers, which the registry asks through connectSignals: the command line's (bin/trtx installs them).
const SIGNALS = join(REPO, 'src', 'cli', 'signals.ts');

/** Runs an ES module snippet that imports the registry, with the command line's installSignalCleanup, as `c`. */
function run(dir: string, body: string) {
  const script = join(dir, 'script.mts');
  writeFileSync(
    script,
    `import * as registry from ${JSON.stringify(CLEANUP)};\nimport { installSignalCleanup } from ${JSON.stringify(SIGNALS)};\n` +
      `const c = { ...registry, installSignalCleanup };\nimport * as fs from 'node:fs';\n${body}\n`,
  );
  return spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: REPO, encoding: 'utf8', timeout: 30_000 });
}

describe('cleanup registry', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: registered files and folders are removed, unregistered ones kept, the process ends by ${signal}`, () => {
      const dir = tempDir('cleanup');
      const kept = join(dir, 'kept');
      const file = join(dir, 'partial.tmp');
      const folder = join(dir, 'work');
      const r = run(
        dir,
        `c.installSignalCleanup();
         fs.writeFileSync(${JSON.stringify(kept)}, 'x');
         c.trackPath(${JSON.stringify(file)}); fs.writeFileSync(${JSON.stringify(file)}, 'half');
         c.trackPath(${JSON.stringify(folder)}); fs.mkdirSync(${JSON.stringify(folder + '/deep')}, { recursive: true });
         process.kill(process.pid, '${signal}');
         setTimeout(() => {}, 10_000);`,
      );
      expect([r.status, r.signal], r.stderr).toEqual([null, signal]);
      expect(r.stderr).toContain(`stopped by ${signal}`);
      expect(existsSync(file)).toBe(false);
      expect(existsSync(folder)).toBe(false);
      expect(existsSync(kept)).toBe(true);
    });
  }

  it('a path unregistered once published is left alone (the signal then takes its default action)', () => {
    const dir = tempDir('cleanup');
    const file = join(dir, 'published');
    const r = run(
      dir,
      `c.installSignalCleanup(); const done = c.trackPath(${JSON.stringify(file)}); fs.writeFileSync(${JSON.stringify(file)}, 'whole'); done(); process.kill(process.pid, 'SIGINT'); setTimeout(() => {}, 10_000);`,
    );
    // Nothing is registered any more: the handler is not installed and the
    // signal's default action ends the process (src/util/cleanup.ts).
    expect(r.signal).toBe('SIGINT');
    expect(readFileSync(file, 'utf8')).toBe('whole');
  });

  it('kills a registered process group before removing files', async () => {
    const dir = tempDir('cleanup');
    const pidfile = join(dir, 'pid');
    const r = run(
      dir,
      `import { spawn } from 'node:child_process';
       c.installSignalCleanup();
       const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
       c.trackProcessGroup(child.pid);
       fs.writeFileSync(${JSON.stringify(pidfile)}, String(child.pid));
       setTimeout(() => process.kill(process.pid, 'SIGTERM'), 100);
       setTimeout(() => {}, 10_000);`,
    );
    expect([r.status, r.signal], r.stderr).toEqual([null, 'SIGTERM']);
    const pid = Number(readFileSync(pidfile, 'utf8'));
    expect(await eventually(() => !alive(pid), 5000)).toBe(true);
  });

  it('runs the exit hooks, then ends by the signal even where another listener would catch it', () => {
    const dir = tempDir('cleanup');
    const file = join(dir, 'partial.tmp');
    const marker = join(dir, 'exit-hook');
    const r = run(
      dir,
      `c.installSignalCleanup();
       c.trackPath(${JSON.stringify(file)}); fs.writeFileSync(${JSON.stringify(file)}, 'half');
       process.on('exit', (code) => fs.writeFileSync(${JSON.stringify(marker)}, 'exit ' + code));
       process.on('SIGINT', () => {}); // as export's own listener, or execa's
       process.kill(process.pid, 'SIGINT');
       setTimeout(() => {}, 10_000);`,
    );
    expect([r.status, r.signal], r.stderr).toEqual([null, 'SIGINT']);
    // What process.exit(130) would have run ran: execa stops the children it watches there.
    expect(readFileSync(marker, 'utf8')).toBe('exit 130');
    expect(existsSync(file)).toBe(false);
  });

  it('a signal inside withSignalsHeld takes effect when the step has finished', () => {
    const dir = tempDir('cleanup');
    const marker = join(dir, 'step-finished');
    const file = join(dir, 'partial.tmp');
    const r = run(
      dir,
      `c.installSignalCleanup();
       c.trackPath(${JSON.stringify(file)}); fs.writeFileSync(${JSON.stringify(file)}, 'half');
       await c.withSignalsHeld(async () => {
         process.kill(process.pid, 'SIGINT');
         await new Promise((r) => setTimeout(r, 300));
         fs.writeFileSync(${JSON.stringify(marker)}, 'done');
       });
       fs.writeFileSync(${JSON.stringify(marker)}, 'ran on after the step');
       setTimeout(() => {}, 10_000);`,
    );
    expect([r.status, r.signal], r.stderr).toEqual([null, 'SIGINT']);
    expect(readFileSync(marker, 'utf8')).toBe('done');
    expect(existsSync(file)).toBe(false);
  });

  it('makeTempDir registers the folder before it exists and removes it', () => {
    const dir = tempDir('cleanup');
    const r = run(
      dir,
      `const t = await c.makeTempDir('trtx-probe-', ${JSON.stringify(dir)});
       const seen = c.tracked().paths.includes(t.path) && fs.existsSync(t.path) && t.path.startsWith(${JSON.stringify(dir + '/')});
       await t.remove();
       console.log(JSON.stringify({ seen, gone: !fs.existsSync(t.path), left: c.tracked().paths.length }));`,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ seen: true, gone: true, left: 0 });
  });
});
